"""Media preparation for a running eval: off the event loop, once per clip and settings.

Epochs of a sample (and samples sharing a clip) may start together; the first caller
prepares, the others await the same work, and later callers read the disk cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

from hss_inspect.media.image import PreparedImage, shrink_jpegs_to_budget
from hss_inspect.media.plan import FramePlan
from hss_inspect.media.store import (
    cached_decode_plan,
    cached_prepare_image,
    cached_sample_video,
    remembered_sha256,
)
from hss_inspect.media.video import SampledVideo
from hss_inspect.settings import FrameSettings

R = TypeVar("R")

_inflight: dict[tuple[object, ...], asyncio.Future[Any]] = {}


async def _once(key: tuple[object, ...], work: Callable[[], R]) -> R:
    loop = asyncio.get_running_loop()
    full_key = (id(loop), *key)
    future = _inflight.get(full_key)
    if future is None:
        future = asyncio.ensure_future(asyncio.to_thread(work))
        _inflight[full_key] = future
        future.add_done_callback(lambda _: _inflight.pop(full_key, None))
    # shield: one sample being cancelled must not cancel the work others await
    return cast(R, await asyncio.shield(future))


async def media_sha256(path: Path) -> str:
    return await _once(("sha", str(path)), lambda: remembered_sha256(path))


async def video_frames(path: Path, settings: FrameSettings, byte_budget: int) -> SampledVideo:
    digest = await media_sha256(path)
    video = await _once(
        ("frames", digest, settings), lambda: cached_sample_video(path, settings, digest)
    )
    if sum(len(j) for j in video.jpegs) <= byte_budget:
        return video
    shrunk = await _once(
        ("budget", digest, settings, byte_budget),
        lambda: shrink_jpegs_to_budget(list(video.jpegs), byte_budget, settings.jpeg_quality),
    )
    return _with_jpegs(video, shrunk)


async def plan_frames_of(path: Path, settings: FrameSettings, plan: FramePlan) -> SampledVideo:
    """Frames of a plan made elsewhere (a window of the clip, one frame), cached."""
    digest = await media_sha256(path)
    return await _once(
        ("plan", digest, settings, plan.effective_fps, plan.slots),
        lambda: cached_decode_plan(path, settings, plan, digest),
    )


def _with_jpegs(video: SampledVideo, jpegs: list[bytes]) -> SampledVideo:
    return replace(video, jpegs=tuple(jpegs))


async def image_bytes(path: Path, max_side: int, max_bytes: int) -> PreparedImage:
    return await _once(
        ("image", str(path), max_side, max_bytes),
        lambda: cached_prepare_image(path, max_side, max_bytes),
    )


async def fetch(fetcher: Callable[[], Path], key: str) -> Path:
    """Download or locate a media file off the event loop (hub downloads block)."""
    return await _once(("fetch", key), fetcher)
