"""A content-addressed disk cache of prepared media, shared by runs, epochs, models and
processes.

- `frames/<key>/`: `frames.bin` (the JPEG frames, end to end) + `frames.json`, keyed by
  the clip's content hash and the frame settings;
- `images/<key>/`: `image.json` (+ `image.bin` when the image was re-encoded), keyed by
  the image's content hash and the size limits;
- `hashes/`: content hashes of files already read, by path, size and modification time.

Entries are built in a temporary folder and renamed into place, so a reader sees a whole
entry or none. A lock file per key makes a second process wait for the first instead of
preparing the same media again. An entry whose files do not match their recorded sizes
and hashes is rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.errors import NO_DEADLINE, Deadline
from hss_inspect.media.image import PreparedImage, prepare_image
from hss_inspect.media.plan import FramePlan
from hss_inspect.media.video import SampledVideo, Truncation, decode_plan, sample_video_sweep

logger = logging.getLogger(__name__)

CACHE_ENV = "HSS_INSPECT_CACHE"
DECODED = "hss media: clip"
MANIFEST = "frames.json"
FRAMES_BLOB = "frames.bin"
IMAGE_MANIFEST = "image.json"
IMAGE_DATA = "image.bin"
# Bump when the frame choice or encoding changes, so old entries stop matching.
FRAME_ALGORITHM_VERSION = 3  # 3: clips whose data ends early keep only decodable slots
IMAGE_ALGORITHM_VERSION = 1
_HASH_CHUNK = 4 * 1024 * 1024
_SECTIONS = ("frames", "images", "hashes", "locks")


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


def remembered_sha256(path: Path, root: Path | None = None) -> str:
    """sha256 of a file, read once and then remembered while its size and mtime hold."""
    stat = path.stat()
    identity = f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}"
    memo = (root or cache_root()) / "hashes" / hashlib.sha256(identity.encode()).hexdigest()
    with contextlib.suppress(OSError):
        remembered = memo.read_text().strip()
        if len(remembered) == 64:
            return remembered
    digest = file_sha256(path)
    _write_atomically(memo, digest.encode())
    return digest


def _key(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def frames_key(video_sha256: str, settings: FrameSettings) -> str:
    return _key(
        {"video": video_sha256, "settings": settings.as_dict(), "v": FRAME_ALGORITHM_VERSION}
    )


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


def _write_entry(folder: Path, video: SampledVideo, manifest: dict[str, Any]) -> None:
    """A cache entry: every frame in one file, so a warm read is one open and one hash."""
    blob = b"".join(video.jpegs)
    (folder / FRAMES_BLOB).write_bytes(blob)
    # CRC-32 guards against truncation and bit rot at a fraction of a hash's cost.
    record = {**manifest, "blob_crc32": zlib.crc32(blob)}
    (folder / MANIFEST).write_text(json.dumps(record))


def read_frames(folder: Path) -> SampledVideo | None:
    """The cache entry in `folder`, or None when it is missing, partial or corrupt."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        blob = (folder / FRAMES_BLOB).read_bytes()
        sizes = manifest["frame_bytes"]
        if len(blob) != sum(sizes) or zlib.crc32(blob) != manifest["blob_crc32"]:
            return None
        offsets = list(itertools.accumulate(sizes, initial=0))
        return SampledVideo(
            duration=manifest["duration"],
            effective_fps=manifest["effective_fps"],
            planned_frames=manifest["planned_frames"],
            timestamps=tuple(manifest["timestamps"]),
            source_times=tuple(manifest["source_times"]),
            jpegs=tuple(blob[a:b] for a, b in itertools.pairwise(offsets)),
            width=manifest["width"],
            height=manifest["height"],
            rotation=manifest["rotation"],
            truncation=Truncation(**manifest["truncation"]) if manifest["truncation"] else None,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cached_sample_video(
    path: Path,
    settings: FrameSettings,
    video_sha256: str | None = None,
    root: Path | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> SampledVideo:
    """Frames of `path` from the cache, sampling and storing them on a miss."""
    return cached_sample_videos(path, [settings], video_sha256, root, deadline)[0]


def cached_sample_videos(
    path: Path,
    sweep: Sequence[FrameSettings],
    video_sha256: str | None = None,
    root: Path | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> list[SampledVideo]:
    """Frames of `path` under each settings of `sweep`: cached ones are read, the rest
    sampled in one decode of the clip and stored, entry by entry as if made alone."""
    root = root or cache_root()
    digest = video_sha256 or remembered_sha256(path, root)
    entries = {settings: root / "frames" / frames_key(digest, settings) for settings in sweep}
    ready = _read_entries(entries)
    if len(ready) < len(entries):
        missing = sorted(entries.keys() - ready.keys(), key=lambda s: entries[s].name)
        # Locks taken in key order, so two processes with overlapping sweeps cannot deadlock.
        with _locked_all(root, [entries[s].name for s in missing]):
            # Another process may have finished some entries while we waited.
            ready.update(_read_entries({s: entries[s] for s in missing}))
            still = [s for s in missing if s not in ready]
            started = time.perf_counter()
            sampled = sample_video_sweep(path, still, deadline) if still else []
            for settings, video in zip(still, sampled, strict=True):
                _store_frames(entries[settings], video, manifest_of(video, settings, digest))
                ready[settings] = video
            if sampled:
                _log_decode(digest, sampled, started)
    return [ready[settings] for settings in sweep]


def _read_entries(entries: dict[FrameSettings, Path]) -> dict[FrameSettings, SampledVideo]:
    found = {settings: read_frames(entry) for settings, entry in entries.items()}
    return {settings: video for settings, video in found.items() if video is not None}


def _store_frames(entry: Path, video: SampledVideo, manifest: dict[str, Any]) -> None:
    _replace_entry(entry, lambda staging: _write_entry(staging, video, manifest))


def plan_key(video_sha256: str, settings: FrameSettings, plan: FramePlan) -> str:
    return _key(
        {
            "video": video_sha256,
            "settings": settings.as_dict(),
            "rate": plan.effective_fps,
            "slots": list(plan.slots),
            "v": FRAME_ALGORITHM_VERSION,
        }
    )


def cached_decode_plan(
    path: Path,
    settings: FrameSettings,
    plan: FramePlan,
    video_sha256: str | None = None,
    root: Path | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> SampledVideo:
    """Frames of a plan made elsewhere (a window, one frame), through the same cache."""
    root = root or cache_root()
    digest = video_sha256 or remembered_sha256(path, root)
    return _cached_frames(
        root,
        plan_key(digest, settings, plan),
        lambda: decode_plan(path, plan, settings, deadline),
        settings,
        digest,
    )


def _cached_frames(
    root: Path,
    key: str,
    decode: Callable[[], SampledVideo],
    settings: FrameSettings,
    digest: str,
) -> SampledVideo:
    entry = root / "frames" / key
    cached = read_frames(entry)
    if cached is not None:
        return cached
    with _locked(root, key):
        # Another process may have finished this entry while we waited for the lock.
        cached = read_frames(entry)
        if cached is not None:
            return cached
        started = time.perf_counter()
        video = decode()
        _replace_entry(
            entry,
            lambda staging: _write_entry(staging, video, manifest_of(video, settings, digest)),
        )
        _log_decode(digest, [video], started)
        return video


def _log_decode(digest: str, videos: Sequence[SampledVideo], started: float) -> None:
    """One line per decode of a clip: a run's log shows which clips were prepared and
    which came from the cache (the shared-cache test counts these lines)."""
    logger.info(
        "%s %s: decoded %d frames in %.1f s into %d cache entr%s",
        DECODED,
        digest[:12],
        sum(len(v.jpegs) for v in videos),
        time.perf_counter() - started,
        len(videos),
        "y" if len(videos) == 1 else "ies",
    )


def cached_prepare_image(
    path: Path,
    max_side: int,
    max_bytes: int,
    root: Path | None = None,
    deadline: Deadline = NO_DEADLINE,
    max_pixels: int | None = None,
) -> PreparedImage:
    """The image to send for `path`, from the cache or prepared and stored."""
    root = root or cache_root()
    digest = remembered_sha256(path, root)
    spec: dict[str, Any] = {
        "image": digest,
        "max_side": max_side,
        "max_bytes": max_bytes,
        "v": IMAGE_ALGORITHM_VERSION,
    }
    if max_pixels is not None:  # absent from older keys, which stay valid
        spec["max_pixels"] = max_pixels
    key = _key(spec)
    entry = root / "images" / key
    cached = _read_image(entry, path)
    if cached is not None:
        return cached
    with _locked(root, key):
        cached = _read_image(entry, path)
        if cached is not None:
            return cached
        image = prepare_image(path, max_side, max_bytes, deadline, max_pixels)
        _replace_entry(entry, lambda staging: _write_image(staging, image))
        return image


def _write_image(folder: Path, image: PreparedImage) -> None:
    if image.reencoded:
        (folder / IMAGE_DATA).write_bytes(image.data)
    record = {**asdict(image), "data": None, "data_sha256": hashlib.sha256(image.data).hexdigest()}
    (folder / IMAGE_MANIFEST).write_text(json.dumps(record))


def _read_image(folder: Path, original: Path) -> PreparedImage | None:
    try:
        record = json.loads((folder / IMAGE_MANIFEST).read_text())
        data = (folder / IMAGE_DATA if record["reencoded"] else original).read_bytes()
        if hashlib.sha256(data).hexdigest() != record["data_sha256"]:
            return None
        return PreparedImage(
            data,
            record["mime"],
            record["width"],
            record["height"],
            record["reencoded"],
            record["original_bytes"],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _replace_entry(entry: Path, fill: Callable[[Path], None]) -> None:
    """Build an entry in a staging folder, then rename it into place."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=entry.parent))
    try:
        fill(staging)
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)  # a corrupt entry is in the way
        os.rename(staging, entry)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".partial-", dir=target.parent)
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(temporary, target)


@contextlib.contextmanager
def _locked_all(root: Path, keys: Sequence[str]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for key in keys:
            stack.enter_context(_locked(root, key))
        yield


@contextlib.contextmanager
def _locked(root: Path, key: str) -> Iterator[None]:
    """Hold an exclusive lock on `key` across processes (released if the holder dies)."""
    lock_path = root / "locks" / f"{key}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a+b") as handle:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield


@dataclass(frozen=True)
class CacheStats:
    root: Path
    frame_entries: int
    image_entries: int
    files: int
    bytes: int


def cache_stats(root: Path | None = None) -> CacheStats:
    root = root or cache_root()
    files = [p for p in root.rglob("*") if p.is_file()] if root.exists() else []

    def entries(section: str) -> int:
        folder = root / section
        return (
            sum(1 for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
            if folder.exists()
            else 0
        )

    return CacheStats(
        root, entries("frames"), entries("images"), len(files), sum(p.stat().st_size for p in files)
    )


def clear_cache(root: Path | None = None) -> CacheStats:
    """Delete every entry; returns what there was."""
    root = root or cache_root()
    before = cache_stats(root)
    for section in _SECTIONS:
        shutil.rmtree(root / section, ignore_errors=True)
    return before
