"""A content-addressed disk cache of sampled frames, shared by runs, epochs and models.

An entry is a folder `frame_00000.jpg ...` + `frames.json`, keyed by the clip's content
hash and the frame settings. Entries are built in a temporary folder and renamed into
place, so a reader sees a whole entry or none; an entry whose files do not match its
manifest is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hss_inspect.media.video import SampledVideo, sample_video
from hss_inspect.settings import FrameSettings

CACHE_ENV = "HSS_INSPECT_CACHE"
MANIFEST = "frames.json"
# Bump when the frame choice or encoding changes, so old entries stop matching.
FRAME_ALGORITHM_VERSION = 1
_HASH_CHUNK = 4 * 1024 * 1024


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hss_inspect"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def frames_key(video_sha256: str, settings: FrameSettings) -> str:
    spec = {"video": video_sha256, "settings": settings.as_dict(), "v": FRAME_ALGORITHM_VERSION}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


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
        "video_sha256": video_sha256,
        "settings": settings.as_dict(),
        "frame_bytes": [len(j) for j in video.jpegs],
        "frame_sha256": [hashlib.sha256(j).hexdigest() for j in video.jpegs],
    }


def write_frames(folder: Path, video: SampledVideo, manifest: dict[str, Any]) -> None:
    """Write the frames and, last, the manifest that marks the folder complete."""
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("frame_*.jpg"):
        stale.unlink()
    for index, jpeg in enumerate(video.jpegs):
        (folder / frame_name(index)).write_bytes(jpeg)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1))


def read_frames(folder: Path) -> SampledVideo | None:
    """The entry in `folder`, or None when it is missing, partial or corrupt."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        jpegs = tuple((folder / frame_name(i)).read_bytes() for i in range(manifest["frame_count"]))
        if [len(j) for j in jpegs] != manifest["frame_bytes"]:
            return None
        return SampledVideo(
            duration=manifest["duration"],
            effective_fps=manifest["effective_fps"],
            planned_frames=manifest["planned_frames"],
            timestamps=tuple(manifest["timestamps"]),
            source_times=tuple(manifest["source_times"]),
            jpegs=jpegs,
            width=manifest["width"],
            height=manifest["height"],
            rotation=manifest["rotation"],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cached_sample_video(
    path: Path, settings: FrameSettings, video_sha256: str | None = None, root: Path | None = None
) -> SampledVideo:
    """Frames of `path` from the cache, sampling and storing them on a miss."""
    digest = video_sha256 or file_sha256(path)
    entry = (root or cache_root()) / "frames" / frames_key(digest, settings)
    cached = read_frames(entry)
    if cached is not None:
        return cached
    video = sample_video(path, settings)
    _store_atomically(entry, video, manifest_of(video, settings, digest))
    return video


def _store_atomically(entry: Path, video: SampledVideo, manifest: dict[str, Any]) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=entry.parent))
    try:
        write_frames(staging, video, manifest)
        if entry.exists():
            # A corrupt entry (or another process's finished one) is in the way.
            shutil.rmtree(entry, ignore_errors=True)
        os.rename(staging, entry)
    except OSError:
        # Lost a race to another process that renamed its complete entry first.
        shutil.rmtree(staging, ignore_errors=True)
