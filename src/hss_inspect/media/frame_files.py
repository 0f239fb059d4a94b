"""A clip's frames on disk: a cache entry (`frames.uris`, every frame's data URI end to
end, and `frames.json`, checked once a process), the `frames` command's folder of loose
JPEGs, and the manifest both carry."""

from __future__ import annotations

import contextlib
import itertools
import json
import mmap
import os
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.uri import UriFrames
from hss_inspect.media.video import SampledVideo, Truncation, with_digests

MANIFEST = "frames.json"
FRAME_URIS = "frames.uris"
# 2: the frames as their data URIs (1: as JPEG bytes, `frames.bin`, encoded per request)
ENTRY_FORMAT = 2
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
        "frame_bytes": list(video.frame_sizes),
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
    """A cache entry: every frame's data URI end to end in one file, as requests send them
    (a request takes them without encoding its frames again)."""
    text = UriFrames.encode(video.jpegs).text()
    (folder / FRAME_URIS).write_bytes(text)
    # CRC-32 guards against truncation and bit rot at a fraction of a hash's cost.
    record = {**manifest, "format": ENTRY_FORMAT, "uris_crc32": zlib.crc32(text)}
    (folder / MANIFEST).write_text(json.dumps(record))


def read_frames(folder: Path) -> SampledVideo | None:
    """The cache entry in `folder`, its frames as data URIs, or None when it is missing,
    partial or corrupt.

    The file is mapped and each URI decoded straight out of the mapping: one copy, into
    the strings the request sends (a read would copy it once more, into fresh memory).
    Its checksum is checked the first time this process opens the entry: an entry's files
    are never rewritten in place (a new entry is a new folder renamed into place), so a
    file of the same identity holds the same bytes."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        if manifest.get("format") != ENTRY_FORMAT:
            return None
        sizes = manifest["frame_bytes"]
        with open(folder / FRAME_URIS, "rb") as handle, _mapped(handle) as text:
            stat = os.fstat(handle.fileno())
            identity = (str(folder), stat.st_ino, stat.st_size, stat.st_mtime_ns)
            if identity not in _checked:
                if zlib.crc32(text) != manifest["uris_crc32"]:
                    return None
                _checked.add(identity)
            frames = UriFrames.from_text(text, sizes)
        return _video_of(manifest, frames)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# The entries whose checksum held, by their frames file's path, inode, size and time.
_checked: set[tuple[str, int, int, int]] = set()


@contextlib.contextmanager
def _mapped(handle: BinaryIO) -> Iterator[bytes | mmap.mmap]:
    if os.fstat(handle.fileno()).st_size == 0:  # a clip of no frames: nothing to map
        yield b""
        return
    if hasattr(mmap, "MAP_POPULATE"):
        # Linux: the file is read in within the call, which releases the GIL. Pages the
        # decoding faulted in from the disk would hold it, stalling the event loop.
        flags = mmap.MAP_SHARED | mmap.MAP_POPULATE
        mapping = mmap.mmap(handle.fileno(), 0, flags=flags, prot=mmap.PROT_READ)
    else:
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    with mapping:
        yield mapping


def read_jpeg_entry(folder: Path) -> SampledVideo | None:
    """An entry of the format before this one (`frames.bin`: the JPEG frames end to end,
    checksummed as a whole), or None when it is missing, partial or corrupt: what a cache
    prepared by an earlier version holds, read to convert it."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        sizes = manifest["frame_bytes"]
        blob = (folder / FRAMES_BLOB).read_bytes()
        if len(blob) != sum(sizes) or zlib.crc32(blob) != manifest["blob_crc32"]:
            return None
        offsets = itertools.accumulate(sizes, initial=0)
        return _video_of(manifest, tuple(blob[a:b] for a, b in itertools.pairwise(offsets)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _video_of(manifest: dict[str, Any], jpegs: Sequence[bytes]) -> SampledVideo:
    truncation = manifest["truncation"]
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
        truncation=Truncation(**truncation) if truncation else None,
    )
    # stored when the entry was made: a request's record needs no hashing of its frames
    return with_digests(video, manifest.get("frame_sha256") or ())
