"""A clip's frames through the cache: read from its entry (a thinned set from the clip's
unthinned entry), else decoded once for every settings asked for and stored, entry by
entry; kept in memory for the process when the cache cannot store them."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.activity import count_decoded
from hss_inspect.media.cache_entries import entry_key, locked, locked_all, replace_entry
from hss_inspect.media.cache_folder import cache_root
from hss_inspect.media.errors import NO_DEADLINE, Deadline, MediaError
from hss_inspect.media.facts import cached_clip_geometry, remembered_sha256
from hss_inspect.media.frame_files import (
    ENTRY_FORMAT,
    manifest_of,
    read_frames,
    read_jpeg_entry,
    write_entry,
)
from hss_inspect.media.plan import FramePlan, frames_that_matter, unthinned
from hss_inspect.media.video import SampledVideo, decode_plan, sample_video_sweep, thinned_video

logger = logging.getLogger(__name__)

DECODED = "hss media: clip"
# Bump when the frame choice or encoding changes, so old entries stop matching.
FRAME_ALGORITHM_VERSION = 3  # 3: clips whose data ends early keep only decodable slots


def frames_key(video_sha256: str, settings: FrameSettings, entry_format: int = ENTRY_FORMAT) -> str:
    """The entry of a clip's frames: by its content, the settings that matter and the
    entry's format (the first format's keys had none)."""
    settings = frames_that_matter(settings)
    spec = {"video": video_sha256, "settings": settings.as_dict(), "v": FRAME_ALGORITHM_VERSION}
    return entry_key(spec if entry_format == 1 else {**spec, "format": entry_format})


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
        with locked_all(root, [frames_key(digest, s) for s in missing]):
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
        video = _entry_frames(root, digest, settings) or _thinned_entry(root, digest, settings)
        if video is not None:
            ready[settings] = video
    return ready


def _entry_frames(root: Path, digest: str, settings: FrameSettings) -> SampledVideo | None:
    entry = _frames_entry(root, digest, settings)
    return read_frames(entry) or _kept(entry) or _converted(root, digest, settings)


def _converted(root: Path, digest: str, settings: FrameSettings) -> SampledVideo | None:
    """The frames of an entry in the first format (JPEG bytes), stored in this one: a
    cache prepared by an earlier version is not decoded again. The old entry stays for
    that version; `hss-inspect cache clear` removes both."""
    video = read_jpeg_entry(root / "frames" / frames_key(digest, settings, entry_format=1))
    if video is not None:
        _store_frames(root, digest, settings, video)
    return video


def _thinned_entry(root: Path, digest: str, settings: FrameSettings) -> SampledVideo | None:
    """The frames of a thinned set, from the clip's unthinned entry at the same size; stored
    as an entry of its own, so that later reads need not read every frame."""
    if settings.max_images is None:
        return None
    full = _entry_frames(root, digest, unthinned(settings))
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
    if not replace_entry(entry, lambda staging: write_entry(staging, video, manifest), root):
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
    return sum(sum(video.frame_sizes) for video in _unstored.values())


def _kept(entry: Path) -> SampledVideo | None:
    with _unstored_lock:
        return _unstored.get(entry)


def plan_key(video_sha256: str, settings: FrameSettings, plan: FramePlan) -> str:
    return entry_key(
        {
            "video": video_sha256,
            "settings": settings.as_dict(),
            "rate": plan.effective_fps,
            "slots": list(plan.slots),
            "v": FRAME_ALGORITHM_VERSION,
            "format": ENTRY_FORMAT,
        }
    )


def cached_decode_plan(
    path: Path, settings: FrameSettings, plan: FramePlan, video_sha256: str, deadline: Deadline
) -> SampledVideo:
    """Frames of a plan made elsewhere (a window, one frame), through the same cache."""
    return _cached_frames(
        cache_root(),
        plan_key(video_sha256, settings, plan),
        lambda: decode_plan(path, plan, settings, deadline),
        settings,
        video_sha256,
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
    with locked(root, key):
        # Another process may have finished this entry while we waited for the lock.
        cached = read_frames(entry)
        if cached is not None:
            return cached
        started = time.perf_counter()
        video = decode()
        manifest = manifest_of(video, settings, digest)
        replace_entry(entry, lambda staging: write_entry(staging, video, manifest), root)
        _log_decode(digest, [video], started)
        return video


def _log_decode(digest: str, videos: Sequence[SampledVideo], started: float) -> None:
    """One line per decode of a clip: a run's log shows which clips were prepared and
    which came from the cache (the shared-cache test counts these lines)."""
    frames, seconds = sum(len(v.jpegs) for v in videos), time.perf_counter() - started
    count_decoded(digest, frames, seconds)
    logger.info(
        "%s %s: decoded %d frames in %.1f s into %d cache entr%s",
        DECODED,
        digest[:12],
        frames,
        seconds,
        len(videos),
        "y" if len(videos) == 1 else "ies",
    )
