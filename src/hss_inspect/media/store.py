"""A content-addressed disk cache of prepared media, shared by runs, epochs, models and
processes.

- `frames/<key>/`: `frames.bin` (the JPEG frames, end to end) + `frames.json`, keyed by
  the clip's content hash and the frame settings;
- `images/<key>/`: `image.json` (+ `image.bin` when the image was re-encoded), keyed by
  the image's content hash and the size limits;
- `hashes/`: content hashes of files already read, by path, size and modification time;
- `facts/<sha256>.json`: what a media file is, probed once: a clip's duration and frame
  size (the token fit needs them), an image's size, bytes and type (whether a provider's
  limits change it at all).

A key holds only the settings that can change the result (`plan.frames_that_matter`,
`ImageFacts.reencoding_limits`), so every model whose limits make no difference reads
the same entry; a thinned set of frames is taken from the clip's unthinned entry at the
same size without opening the clip.

Entries are built in a temporary folder and renamed into place, so a reader sees a whole
entry or none. A lock file per key makes a second process wait for the first instead of
preparing the same media again. An entry whose files do not match their recorded sizes
and hashes is rebuilt.

The cache only saves work: when it cannot store (a full disk, a read-only folder), the
media prepared are used from memory, and one warning per process names the folder, its
free space and the remedy. A cache path that is not a folder at all is refused up front
(`check_cache_folder`), before a run starts.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.errors import NO_DEADLINE, Deadline, MediaError
from hss_inspect.media.image import ImageFacts, PreparedImage, prepare_image_with_facts
from hss_inspect.media.plan import FramePlan, frames_that_matter, unthinned
from hss_inspect.media.probe import probe_duration, probe_frame_size
from hss_inspect.media.video import (
    SampledVideo,
    Truncation,
    decode_plan,
    sample_video_sweep,
    thinned_video,
)

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
_SECTIONS = ("frames", "images", "hashes", "locks", "facts")


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hss_inspect"


class CacheFolderError(MediaError):
    """The cache path is not a folder: nothing can be read or stored there."""


def check_cache_folder(root: Path | None = None) -> Path:
    """The cache folder, made if missing; CacheFolderError, naming HSS_INSPECT_CACHE and
    the path, when it is not a folder and cannot be made one (a file, a path under one).

    A folder that exists but cannot be written is usable: what is there is read, and what
    cannot be stored is sent from memory."""
    root = root or cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheFolderError(_not_a_folder(root, exc)) from None
    return root


def _not_a_folder(root: Path, exc: OSError) -> str:
    configured = os.environ.get(CACHE_ENV)
    named = f"{CACHE_ENV}={configured}" if configured else f"the media cache {root}"
    blocking = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
    why = (
        "it is a file"
        if blocking == root
        else f"{blocking} is a file"
        if blocking is not None
        else exc.strerror or str(exc)
    )
    remedy = (
        f"point {CACHE_ENV} at a folder, or unset it for ~/.cache/hss_inspect"
        if configured
        else f"set {CACHE_ENV} to a folder"
    )
    return f"{named} is not a usable folder ({why}): {remedy}"


@dataclass(frozen=True)
class StorageProblem:
    """The first time this process could not store media in a cache folder."""

    root: Path
    reason: str
    free_bytes: int | None
    full: bool

    def warning(self) -> str:
        free = "unknown" if self.free_bytes is None else size_text(self.free_bytes)
        remedy = (
            f"free space there, or point {CACHE_ENV} at a folder with room"
            if self.full
            else f"make it writable, or point {CACHE_ENV} at a folder that is"
        )
        return (
            f"the media cache {self.root} cannot store prepared media ({self.reason}; "
            f"{free} free): frames and images are sent from memory and prepared again by the "
            f"next run; {remedy}"
        )


def size_text(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


_FULL_DISK = {errno.ENOSPC, errno.EDQUOT}
# An entry another process renamed into place first: nothing to store, nothing wrong.
_TAKEN = {errno.EEXIST, errno.ENOTEMPTY}
_problems: dict[Path, StorageProblem] = {}
_problems_lock = threading.Lock()
_warn_of_problems = True


def storage_problem(root: Path | None = None) -> StorageProblem | None:
    """Why this process could not store media in the cache, if it could not."""
    return _problems.get(root or cache_root())


def report_storage_problems_quietly() -> None:
    """Record storage problems without warning (prepare's worker processes: their parent
    warns once for all of them)."""
    global _warn_of_problems
    _warn_of_problems = False


def _could_not_store(root: Path, error: OSError) -> None:
    problem = StorageProblem(
        root, error.strerror or str(error), _free_bytes(root), error.errno in _FULL_DISK
    )
    with _activity_lock:
        _activity.not_stored += 1
    with _problems_lock:
        if root in _problems:
            return
        _problems[root] = problem
    if _warn_of_problems:
        logger.warning(problem.warning())


def _free_bytes(root: Path) -> int | None:
    for folder in (root, *root.parents):
        with contextlib.suppress(OSError):
            if folder.is_dir():
                return shutil.disk_usage(folder).free
    return None


@dataclass
class Activity:
    """What preparing media cost this process: clips decoded (frames each), the seconds
    their decoding took, images prepared from their files. `hss-inspect estimate` tells
    from it what was already prepared."""

    clips: dict[str, int] = field(default_factory=dict)
    decode_seconds: float = 0.0
    images: dict[str, int] = field(default_factory=dict)  # preparations of each image
    not_stored: int = 0  # cache files that could not be written

    def since(self, earlier: Activity) -> Activity:
        return Activity(
            _counts_since(self.clips, earlier.clips),
            self.decode_seconds - earlier.decode_seconds,
            _counts_since(self.images, earlier.images),
            self.not_stored - earlier.not_stored,
        )


def _counts_since(now: dict[str, int], earlier: dict[str, int]) -> dict[str, int]:
    grown = {key: count - earlier.get(key, 0) for key, count in now.items()}
    return {key: count for key, count in grown.items() if count}


_activity = Activity()
_activity_lock = threading.Lock()


def activity() -> Activity:
    """A copy of this process's media work so far."""
    with _activity_lock:
        return Activity(
            dict(_activity.clips),
            _activity.decode_seconds,
            dict(_activity.images),
            _activity.not_stored,
        )


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
    if identity in _hashed:  # also where the cache cannot keep the memo
        return _hashed[identity]
    memo = (root or cache_root()) / "hashes" / hashlib.sha256(identity.encode()).hexdigest()
    with contextlib.suppress(OSError):
        remembered = memo.read_text().strip()
        if len(remembered) == 64:
            _hashed[identity] = remembered
            return remembered
    digest = file_sha256(path)
    write_atomically(memo, digest.encode(), root or cache_root())
    _hashed[identity] = digest
    return digest


_hashed: dict[str, str] = {}


def _key(spec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def frames_key(video_sha256: str, settings: FrameSettings) -> str:
    """The entry of a clip's frames: by its content and the settings that matter."""
    settings = frames_that_matter(settings)
    return _key(
        {"video": video_sha256, "settings": settings.as_dict(), "v": FRAME_ALGORITHM_VERSION}
    )


# ---- facts: what a media file is, probed once ---------------------------------------------


def _facts_path(root: Path, digest: str) -> Path:
    return root / "facts" / f"{digest}.json"


def _read_facts(root: Path, digest: str, kind: str) -> dict[str, Any] | None:
    """The stored facts of a file, or None when missing, of another kind or damaged."""
    try:
        record = json.loads(_facts_path(root, digest).read_text())
        facts = record["facts"]
        if record["crc32"] != _checksum(facts):
            return None
        return dict(facts) if facts.get("kind") == kind else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_facts(root: Path, digest: str, facts: dict[str, Any]) -> None:
    sealed = {"facts": facts, "crc32": _checksum(facts)}
    write_atomically(_facts_path(root, digest), json.dumps(sealed).encode(), root)


def _checksum(facts: dict[str, Any]) -> int:
    # as for the frames: a flipped digit must not mislead the token fit
    return zlib.crc32(json.dumps(facts, sort_keys=True).encode())


def cached_clip_geometry(
    path: Path, video_sha256: str | None = None, root: Path | None = None
) -> tuple[float, int, int]:
    """The clip's duration and its frames' size as shown, probed once and then read from
    the cache (the token fit needs them before any frame is chosen)."""
    root = root or cache_root()
    digest = video_sha256 or remembered_sha256(path, root)
    facts = _read_facts(root, digest, "clip")
    if facts is not None:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            return float(facts["duration"]), int(facts["width"]), int(facts["height"])
    duration, (width, height) = probe_duration(path), probe_frame_size(path)
    _write_facts(
        root, digest, {"kind": "clip", "duration": duration, "width": width, "height": height}
    )
    return duration, width, height


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
    """Frames of `path` under each settings of `sweep`: cached ones are read (a thinned
    set from the unthinned entry), the rest sampled in one decode of the clip and stored,
    entry by entry as if made alone."""
    root = root or cache_root()
    digest = video_sha256 or remembered_sha256(path, root)
    wanted = {settings: frames_that_matter(settings) for settings in sweep}
    ready = _prepared(root, digest, set(wanted.values()))
    missing = sorted(set(wanted.values()) - ready.keys(), key=lambda s: frames_key(digest, s))
    if missing:
        # Locks taken in key order, so two processes with overlapping sweeps cannot deadlock.
        with _locked_all(root, [frames_key(digest, s) for s in missing]):
            # Another process may have finished some entries while we waited.
            ready.update(_prepared(root, digest, set(missing)))
            still = [s for s in missing if s not in ready]
            if still:
                ready.update(_decoded(path, root, digest, still, deadline))
    return [ready[wanted[settings]] for settings in sweep]


def _frames_entry(root: Path, digest: str, settings: FrameSettings) -> Path:
    return root / "frames" / frames_key(digest, settings)


def _prepared(
    root: Path, digest: str, sweep: set[FrameSettings]
) -> dict[FrameSettings, SampledVideo]:
    """The entries of `sweep` in the cache, a thinned set taken from its unthinned entry."""
    ready = {}
    for settings in sweep:
        entry = _frames_entry(root, digest, settings)
        video = read_frames(entry) or _kept(entry) or _thinned_entry(root, digest, settings)
        if video is not None:
            ready[settings] = video
    return ready


def _thinned_entry(root: Path, digest: str, settings: FrameSettings) -> SampledVideo | None:
    """The frames of a thinned set, from the clip's unthinned entry at the same size; stored
    as an entry of its own, so that later reads need not read every frame."""
    if settings.max_images is None:
        return None
    whole = _frames_entry(root, digest, unthinned(settings))
    full = read_frames(whole) or _kept(whole)
    if full is None or full.thinned:
        return None
    video = thinned_video(full, settings.max_images)
    _store_frames(root, digest, settings, video)
    return video


def _decoded(
    path: Path, root: Path, digest: str, sweep: list[FrameSettings], deadline: Deadline
) -> dict[FrameSettings, SampledVideo]:
    started = time.perf_counter()
    sampled = sample_video_sweep(path, sweep, deadline)
    for settings, video in zip(sweep, sampled, strict=True):
        _store_frames(root, digest, settings, video)
    _log_decode(digest, sampled, started)
    # The clip is open to this process now: its facts spare a later run opening it for
    # the token fit. A clip whose first frame alone will not decode is probed again there.
    with contextlib.suppress(MediaError):
        cached_clip_geometry(path, digest, root)
    return dict(zip(sweep, sampled, strict=True))


def _store_frames(root: Path, digest: str, settings: FrameSettings, video: SampledVideo) -> None:
    # The settings that matter go in the record, so an entry is the same whoever made it.
    manifest = manifest_of(video, frames_that_matter(settings), digest)
    entry = _frames_entry(root, digest, settings)
    if not _replace_entry(entry, lambda staging: _write_entry(staging, video, manifest), root):
        _keep_in_memory(entry, video)


# Frames the cache could not store, kept for the rest of the process up to a bound: the
# epochs, models and repeated reads of one request then do not decode the clip again.
_UNSTORED_LIMIT_BYTES = 256_000_000
_unstored: OrderedDict[Path, SampledVideo] = OrderedDict()
_unstored_lock = threading.Lock()


def _keep_in_memory(entry: Path, video: SampledVideo) -> None:
    with _unstored_lock:
        _unstored[entry] = video
        while len(_unstored) > 1 and _unstored_bytes() > _UNSTORED_LIMIT_BYTES:
            _unstored.popitem(last=False)


def _unstored_bytes() -> int:
    return sum(len(j) for video in _unstored.values() for j in video.jpegs)


def _kept(entry: Path) -> SampledVideo | None:
    with _unstored_lock:
        return _unstored.get(entry)


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
        manifest = manifest_of(video, settings, digest)
        _replace_entry(entry, lambda staging: _write_entry(staging, video, manifest), root)
        _log_decode(digest, [video], started)
        return video


def _log_decode(digest: str, videos: Sequence[SampledVideo], started: float) -> None:
    """One line per decode of a clip: a run's log shows which clips were prepared and
    which came from the cache (the shared-cache test counts these lines)."""
    frames, seconds = sum(len(v.jpegs) for v in videos), time.perf_counter() - started
    with _activity_lock:
        _activity.clips[digest] = _activity.clips.get(digest, 0) + frames
        _activity.decode_seconds += seconds
    logger.info(
        "%s %s: decoded %d frames in %.1f s into %d cache entr%s",
        DECODED,
        digest[:12],
        frames,
        seconds,
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
    """The image to send for `path`: the file itself when its facts say the limits leave it
    untouched, else a re-encoding from the cache, or prepared and stored."""
    root = root or cache_root()
    digest = remembered_sha256(path, root)
    limits = (max_side, max_bytes, max_pixels)
    cached = _image_from_cache(root, digest, path, limits)
    if cached is not None:
        return cached
    with _locked(root, f"image-{digest}"):
        cached = _image_from_cache(root, digest, path, limits)
        if cached is not None:
            return cached
        image, facts = prepare_image_with_facts(path, max_side, max_bytes, deadline, max_pixels)
        with _activity_lock:
            _activity.images[digest] = _activity.images.get(digest, 0) + 1
        _write_facts(root, digest, {"kind": "image", **asdict(facts)})
        if image.reencoded:
            entry = root / "images" / _image_key(digest, facts, limits)
            _replace_entry(entry, lambda staging: _write_image(staging, image), root)
        return image


def _image_key(digest: str, facts: ImageFacts, limits: tuple[int, int, int | None]) -> str:
    side, max_bytes, pixels = facts.reencoding_limits(*limits)
    spec: dict[str, Any] = {
        "image": digest,
        "max_side": side,
        "max_bytes": max_bytes,
        "v": IMAGE_ALGORITHM_VERSION,
    }
    if pixels is not None:
        spec["max_pixels"] = pixels
    return _key(spec)


def _image_from_cache(
    root: Path, digest: str, path: Path, limits: tuple[int, int, int | None]
) -> PreparedImage | None:
    stored = _read_facts(root, digest, "image")
    try:
        facts = ImageFacts(**{k: v for k, v in (stored or {}).items() if k != "kind"})
    except TypeError:
        return None
    if facts.mime is not None and facts.sent_as_is(*limits):
        with contextlib.suppress(OSError):
            raw = path.read_bytes()
            if hashlib.sha256(raw).hexdigest() == digest:
                return PreparedImage(raw, facts.mime, facts.width, facts.height, False, len(raw))
        return None
    return _read_image(root / "images" / _image_key(digest, facts, limits), path)


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


def _replace_entry(entry: Path, fill: Callable[[Path], None], root: Path) -> bool:
    """Build an entry in a staging folder, then rename it into place. False when the cache
    cannot hold it: nothing is stored, and the problem is recorded (and warned of once)."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=entry.parent))
    except OSError as exc:
        _could_not_store(root, exc)
        return False
    try:
        fill(staging)
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)  # a corrupt entry is in the way
        os.rename(staging, entry)
        return True
    except OSError as exc:
        if exc.errno in _TAKEN:
            return True
        _could_not_store(root, exc)
        return False
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_atomically(target: Path, data: bytes, root: Path) -> bool:
    """Write a file of the cache whole or not at all; False (the problem recorded) when
    the cache under `root` cannot hold it."""
    temporary = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".partial-", dir=target.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
        return True
    except OSError as exc:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        _could_not_store(root, exc)
        return False


@contextlib.contextmanager
def _locked_all(root: Path, keys: Sequence[str]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for key in keys:
            stack.enter_context(_locked(root, key))
        yield


@contextlib.contextmanager
def _locked(root: Path, key: str) -> Iterator[None]:
    """Hold an exclusive lock on `key` across processes (released if the holder dies).

    Where the cache cannot hold a lock file, the work goes on unlocked: at worst two
    processes prepare the same media, which nothing can store there anyway."""
    handle = _lock_file(root, key)
    try:
        if handle is not None and sys.platform != "win32":
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        if handle is not None:
            handle.close()


def _lock_file(root: Path, key: str) -> Any:
    lock_path = root / "locks" / f"{key}.lock"
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        return lock_path.open("a+b")
    except OSError as exc:
        _could_not_store(root, exc)
        return None


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
