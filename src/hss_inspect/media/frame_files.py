"""A clip's frames on disk: a cache entry (`frames.bin`, every frame end to end, and
`frames.json`, checked on reading), the `frames` command's folder of loose JPEGs, and the
manifest both carry."""

from __future__ import annotations

import itertools
import json
import mmap
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

    The frames are sliced straight out of the mapped file (one copy, not two), and its
    checksum is checked once per process for each version of the file (a rebuilt entry is
    a new file): a clip is read once an attempt, and a full run reads it three times."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        sizes = manifest["frame_bytes"]
        with open(folder / FRAMES_BLOB, "rb") as handle:
            version = _file_version(handle)
            if version[1] != sum(sizes):
                return None
            jpegs = _checked_frames(handle, sizes, manifest["blob_crc32"], version)
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


FileVersion = tuple[int, int, int, int]  # device, size, inode, modification time (ns)
_checked: set[FileVersion] = set()


def _file_version(handle: BinaryIO) -> FileVersion:
    stat = os.fstat(handle.fileno())
    return stat.st_dev, stat.st_size, stat.st_ino, stat.st_mtime_ns


def _checked_frames(
    handle: BinaryIO, sizes: list[int], crc32: int, version: FileVersion
) -> tuple[bytes, ...] | None:
    """The frames of an open `frames.bin`, None when its checksum is not `crc32`."""
    if not sizes:
        return ()
    with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as blob:
        if version not in _checked:
            if zlib.crc32(blob) != crc32:
                return None
            _checked.add(version)
        offsets = itertools.accumulate(sizes, initial=0)
        return tuple(blob[a:b] for a, b in itertools.pairwise(offsets))
