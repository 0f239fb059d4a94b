"""The frame sampling plan of the HSS protocol, as pure functions.

f_eff = min(fps, max_frames / T), N = min(floor(fps * T), max_frames) >= 1, slot i is
labelled i / f_eff seconds and shows the last decoded frame whose presentation time
(counted from the first frame) is before (i + 1/2) / f_eff: the choice of ffmpeg's
`fps` filter, which the reference harness used.

A clip whose data ends before its declared duration T (a download cut short) gets
only the slots that filter emits over the decodable data: it stops at the slot nearest
the end of the last decodable frame, round(span * f_eff), where span runs from the
first frame's start to the last decodable frame's end. The rate stays the one T gives.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from hss_inspect.core.settings import FrameSettings

T = TypeVar("T")

# Absorbs binary rounding only (20 * 1.15 is 22.999999999999996 in floating point);
# a probed duration is otherwise taken at face value, as the reference harness does.
_FLOOR_TOLERANCE = 1e-9


@dataclass(frozen=True)
class FramePlan:
    """Which slots a clip is sampled at.

    `planned_frames` counts the slots over the decodable data (N, unless the data ends
    early); `frames_dropped` the slots of N past that end; `slots` the ones kept after
    thinning to an image cap.
    """

    duration: float
    effective_fps: float
    planned_frames: int
    slots: tuple[int, ...]
    frames_dropped: int = 0
    decodable_span: float | None = None

    @property
    def timestamps(self) -> tuple[float, ...]:
        return tuple(slot / self.effective_fps for slot in self.slots)

    @property
    def boundaries(self) -> tuple[float, ...]:
        """For each kept slot, the time its source frame must precede."""
        return tuple((slot + 0.5) / self.effective_fps for slot in self.slots)

    @property
    def thinned(self) -> bool:
        return len(self.slots) < self.planned_frames


def plan_frames(
    duration: float, settings: FrameSettings, decodable_span: float | None = None
) -> FramePlan:
    """The slots a clip of `duration` seconds is sampled at under `settings`.

    `decodable_span` (seconds from the first frame to the end of the last decodable
    one), when known, limits the slots to those the `fps` filter emits over that data.
    """
    if not math.isfinite(duration) or duration < 0:
        raise ValueError(f"video duration must be a finite number >= 0, got {duration}")
    if duration > 0:
        effective_fps = min(settings.fps, settings.max_frames / duration)
    else:
        effective_fps = settings.fps
    declared = math.floor(settings.fps * duration + _FLOOR_TOLERANCE)
    declared = max(1, min(declared, settings.max_frames))
    planned = declared
    if decodable_span is not None:
        # At least one frame, as for any clip, when any frame decodes at all.
        planned = max(1, min(declared, slots_emitted(decodable_span, effective_fps)))
    kept = thin_uniformly(planned, settings.max_images or planned)
    return FramePlan(
        duration, effective_fps, planned, tuple(kept), declared - planned, decodable_span
    )


def frames_that_matter(settings: FrameSettings) -> FrameSettings:
    """`settings` less what cannot change a single frame: an image cap at or above
    `max_frames` thins nothing, since no clip is planned more frames than that. Settings
    that differ only there share one cache entry (a provider's cap of 600 or 1,500
    images, and none at all, all give the same 500 frames)."""
    if settings.max_images is not None and settings.max_images >= settings.max_frames:
        return replace(settings, max_images=None)
    return settings


def unthinned(settings: FrameSettings) -> FrameSettings:
    """The settings whose frames hold every frame of a plan thinned under `settings`."""
    return replace(settings, max_images=None)


def slots_emitted(span: float, effective_fps: float) -> int:
    """How many frames the `fps` filter emits for data lasting `span` seconds.

    At the end of its input the filter stops at the end time in output slots, rounded
    to the nearest slot (halves up), as its timestamps are.
    """
    return math.floor(span * effective_fps + 0.5 + _FLOOR_TOLERANCE)


def thin_uniformly(count: int, cap: int) -> list[int]:
    """`min(count, cap)` indices of range(count), evenly spread, first and last kept."""
    if count <= cap:
        return list(range(count))
    if cap == 1:
        return [0]
    return [round(j * (count - 1) / (cap - 1)) for j in range(cap)]


def select_per_boundary(
    timed_items: Iterable[tuple[float, T]], boundaries: Sequence[float]
) -> Iterator[tuple[int, float, T]]:
    """For each boundary, in order, the last item whose time is before it.

    Streams: at most one item is held at a time. Yields (boundary index, item time, item).
    Boundaries past the last item get the last item, as ffmpeg's fps filter repeats
    the final frame to fill its output.
    """
    slot = 0
    previous: tuple[float, T] | None = None
    for time, item in timed_items:
        while slot < len(boundaries) and previous is not None and time >= boundaries[slot]:
            yield slot, previous[0], previous[1]
            slot += 1
        if slot >= len(boundaries):
            return
        previous = (time, item)
    if previous is None:
        return
    while slot < len(boundaries):
        yield slot, previous[0], previous[1]
        slot += 1


def last_before(sorted_times: Sequence[float], boundaries: Sequence[float]) -> list[int]:
    """For each boundary, the index of the last time before it (0 when none is).

    The same choice as `select_per_boundary`, made from a list of presentation times
    known in advance (a clip's packet index) instead of a stream of decoded frames.
    """
    return [max(0, bisect.bisect_left(sorted_times, b) - 1) for b in boundaries]


def format_seconds(value: float) -> str:
    return f"{value:.2f}"


def plan_window(
    duration: float, start: float, end: float, fps: float, max_frames: int
) -> FramePlan:
    """The slots of the whole-clip plan at a higher rate that fall in [start, end).

    The same rule as `plan_frames`, restricted to a window: the rate is
    f = min(fps, max_frames / (end - start)), slot i is labelled i / f and shows the
    last frame before (i + 1/2) / f, and only slots the whole-clip plan at rate f has
    (i < floor(f * duration)) are kept. Raises ValueError naming the bad argument.
    """
    if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end <= start:
        raise ValueError(f"the window must satisfy 0 <= start < end, got {start}..{end}")
    if end > duration + _FLOOR_TOLERANCE:
        raise ValueError(
            f"the window ends at {format_seconds(end)} s, past the clip's end at "
            f"{format_seconds(duration)} s"
        )
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number, got {fps}")
    if max_frames < 1:
        raise ValueError(f"max_frames must be at least 1, got {max_frames}")
    rate = min(fps, max_frames / (end - start))
    clip_slots = max(1, math.floor(rate * duration + _FLOOR_TOLERANCE))
    first = math.ceil(start * rate - _FLOOR_TOLERANCE)
    stop = min(math.ceil(end * rate - _FLOOR_TOLERANCE), clip_slots, first + max_frames)
    if stop <= first:
        raise ValueError(
            f"no frame time at {rate:.2f} frames per second falls in "
            f"{format_seconds(start)}..{format_seconds(end)} s; widen the window or raise fps"
        )
    slots = tuple(range(first, stop))
    return FramePlan(duration, rate, len(slots), slots)
