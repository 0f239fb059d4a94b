"""Media preparation for a running eval: off the event loop, once per clip and settings.

Epochs of a sample (and samples sharing a clip) may start together; the first caller
prepares, the others await the same work, and later callers read the disk cache.

Each preparation runs under a time limit (`MediaSettings.media_timeout`). When every
sample awaiting a preparation is cancelled (Inspect cancels the other samples when one
fails), the work is told to stop, and its outcome is retrieved here, so no exception is
left for asyncio to report as "never retrieved" after the run's real error.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar, cast

from hss_inspect.core.settings import DEFAULT_MEDIA, FrameSettings
from hss_inspect.media.errors import Deadline
from hss_inspect.media.facts import cached_clip_geometry, remembered_sha256
from hss_inspect.media.frame_cache import cached_decode_plan, cached_sample_video
from hss_inspect.media.image import PreparedImage, shrink_jpegs_to_budget
from hss_inspect.media.image_cache import cached_prepare_image
from hss_inspect.media.plan import FramePlan
from hss_inspect.media.video import SampledVideo

R = TypeVar("R")
DEFAULT_TIME_LIMIT = DEFAULT_MEDIA.media_timeout


@dataclass
class _Shared:
    """One preparation in flight and the samples awaiting it."""

    future: asyncio.Future[Any]
    stop: threading.Event = field(default_factory=threading.Event)
    waiters: int = 0


_inflight: dict[tuple[object, ...], _Shared] = {}


async def _once(
    key: tuple[object, ...], work: Callable[[Deadline], R], time_limit: float | None = None
) -> R:
    loop = asyncio.get_running_loop()
    full_key = (id(loop), *key)
    shared = _inflight.get(full_key)
    if shared is None:
        stop = threading.Event()
        # The clock starts when a worker thread takes the job, not while it queues.
        future = asyncio.ensure_future(asyncio.to_thread(lambda: work(Deadline(time_limit, stop))))
        shared = _Shared(future, stop)
        _inflight[full_key] = shared
        future.add_done_callback(lambda done: _finished(full_key, shared, done))
    shared.waiters += 1
    try:
        # shield: one sample being cancelled must not cancel the work others await
        return cast(R, await asyncio.shield(shared.future))
    finally:
        shared.waiters -= 1
        if shared.waiters == 0 and not shared.future.done():
            _abandon(full_key, shared)


def _abandon(full_key: tuple[object, ...], shared: _Shared) -> None:
    """Nobody awaits this work any more: stop it, and let a later caller start afresh."""
    shared.stop.set()
    if _inflight.get(full_key) is shared:
        del _inflight[full_key]


def _finished(full_key: tuple[object, ...], shared: _Shared, done: asyncio.Future[Any]) -> None:
    if _inflight.get(full_key) is shared:
        del _inflight[full_key]
    if not done.cancelled():
        # Marks the exception as seen; anyone awaiting the future still receives it.
        done.exception()


async def media_sha256(path: Path) -> str:
    return await _once(("sha", str(path)), lambda _: remembered_sha256(path))


async def video_frames(
    path: Path,
    settings: FrameSettings,
    byte_budget: int,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    max_each: int | None = None,
) -> SampledVideo:
    sampled = await sampled_frames(path, settings, time_limit)
    return await fitted_frames(path, sampled, settings, byte_budget, max_each)


async def sampled_frames(
    path: Path, settings: FrameSettings, time_limit: float | None = DEFAULT_TIME_LIMIT
) -> SampledVideo:
    """The clip's frames at `settings`, from the cache (sampled and stored on a miss)."""
    digest = await media_sha256(path)
    return await _once(
        ("frames", digest, settings),
        lambda deadline: cached_sample_video(path, settings, digest, deadline=deadline),
        time_limit,
    )


async def fitted_frames(
    path: Path,
    video: SampledVideo,
    settings: FrameSettings,
    byte_budget: int,
    max_each: int | None = None,
) -> SampledVideo:
    """`video` (the frames of `path` at `settings`) within a byte budget and a cap on each
    frame: as it is when it fits, else each frame re-encoded smaller."""
    sizes = video.frame_sizes
    fits_each = max_each is None or all(size <= max_each for size in sizes)
    if sum(sizes) <= byte_budget and fits_each:
        return video
    digest = await media_sha256(path)
    shrunk = await _once(
        ("budget", digest, settings, byte_budget, max_each),
        lambda _: shrink_jpegs_to_budget(
            list(video.jpegs), byte_budget, settings.jpeg_quality, max_each
        ),
    )
    return _with_jpegs(video, shrunk)


_geometry: dict[str, tuple[float, int, int]] = {}


async def video_geometry(path: Path) -> tuple[float, int, int]:
    """The clip's duration and its frames' size as shown: probed once, then read from the
    cache (a prepared clip is not opened for them), and kept for the process."""
    digest = await media_sha256(path)
    if digest not in _geometry:
        _geometry[digest] = await _once(
            ("geometry", digest), lambda _: cached_clip_geometry(path, digest)
        )
    return _geometry[digest]


async def plan_frames_of(
    path: Path,
    settings: FrameSettings,
    plan: FramePlan,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> SampledVideo:
    """Frames of a plan made elsewhere (a window of the clip, one frame), cached."""
    digest = await media_sha256(path)
    return await _once(
        ("plan", digest, settings, plan.effective_fps, plan.slots),
        lambda deadline: cached_decode_plan(path, settings, plan, digest, deadline=deadline),
        time_limit,
    )


def _with_jpegs(video: SampledVideo, jpegs: list[bytes]) -> SampledVideo:
    return replace(video, jpegs=tuple(jpegs))


async def image_bytes(
    path: Path, max_side: int, max_bytes: int, max_pixels: int | None, time_limit: float | None
) -> PreparedImage:
    """The image to send under the side, byte and pixel limits, prepared once per process
    and within `time_limit` seconds (None: no limit)."""
    return await _once(
        ("image", str(path), max_side, max_bytes, max_pixels),
        lambda deadline: cached_prepare_image(
            path, max_side, max_bytes, deadline=deadline, max_pixels=max_pixels
        ),
        time_limit,
    )


async def fetch(fetcher: Callable[[], Path], key: str) -> Path:
    """Download or locate a media file off the event loop (hub downloads block)."""
    return await _once(("fetch", key), lambda _: fetcher())
