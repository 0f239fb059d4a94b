"""A clip's frames on disk: a cache entry (`frames.bin`, every frame end to end, and
`frames.json`, checked on reading), the `frames` command's folder of loose JPEGs, and the
manifest both carry."""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.video import SampledVideo, Truncation, with_digests

MANIFEST = "frames.json"
FRAMES_BLOB = "frames.bin"


def frame_name(index: int) -> str:
    return f"frame_{index:05d}.jpg"


def manifest_of(video: SampledVideo, settings: FrameSettings, video_sha256: str) -> dict[str, Any]:
    return {
        "duration": video.duration,
        "effective_fps": video.effective_fps,
        "planned_frames": video.planned_frames,
        "frame_count": len(video.jpegs),
        "thinned": video.thinned,
        "timestamps": list(video.timestamps),
        "source_times": list(video.source_times),
        "width": video.width,
        "height": video.height,
        "rotation": video.rotation,
        "truncation": asdict(video.truncation) if video.truncation else None,
        "video_sha256": video_sha256,
        "settings": settings.as_dict(),
        "frame_bytes": [len(j) for j in video.jpegs],
        "frame_sha256": list(video.frame_sha256),
    }


def write_frames(folder: Path, video: SampledVideo, manifest: dict[str, Any]) -> None:
    """Write the frames and, last, the manifest that marks the folder complete."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("frame_*.jpg"):
        stale.unlink()
    for index, jpeg in enumerate(video.jpegs):
        (folder / frame_name(index)).write_bytes(jpeg)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1))


def write_entry(folder: Path, video: SampledVideo, manifest: dict[str, Any]) -> None:
    """A cache entry: every frame in one file, so a warm read is one open and one hash."""
    blob = b"".join(video.jpegs)
    (folder / FRAMES_BLOB).write_bytes(blob)
    # CRC-32 guards against truncation and bit rot at a fraction of a hash's cost.
    record = {**manifest, "blob_crc32": zlib.crc32(blob)}
    (folder / MANIFEST).write_text(json.dumps(record))


def read_frames(folder: Path) -> SampledVideo | None:
    """The cache entry in `folder`, or None when it is missing, partial or corrupt.

    Each frame is read straight into its own bytes (one copy of the file, not two), the
    checksum taken along the way."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        sizes = manifest["frame_bytes"]
        with open(folder / FRAMES_BLOB, "rb", buffering=0) as handle:
            if os.fstat(handle.fileno()).st_size != sum(sizes):
                return None
            jpegs = _checked_frames(handle, sizes, manifest["blob_crc32"])
        if jpegs is None:
            return None
        video = SampledVideo(
            duration=manifest["duration"],
            effective_fps=manifest["effective_fps"],
            planned_frames=manifest["planned_frames"],
            timestamps=tuple(manifest["timestamps"]),
            source_times=tuple(manifest["source_times"]),
            jpegs=jpegs,
            width=manifest["width"],
            height=manifest["height"],
            rotation=manifest["rotation"],
            truncation=Truncation(**manifest["truncation"]) if manifest["truncation"] else None,
        )
        # stored when the entry was made: a request's record needs no hashing of its frames
        return with_digests(video, manifest.get("frame_sha256") or ())
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _checked_frames(handle: BinaryIO, sizes: list[int], crc32: int) -> tuple[bytes, ...] | None:
    """The frames of an open `frames.bin`, None when its checksum is not `crc32`."""
    frames, crc = [], 0
    for size in sizes:
        frame = handle.read(size)
        if len(frame) != size:
            return None
        crc = zlib.crc32(frame, crc)
        frames.append(frame)
    return tuple(frames) if crc == crc32 else None
