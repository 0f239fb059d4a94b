"""The sampling plan and the frame-choice rule, checked against direct computation."""

from __future__ import annotations

import math
import random

import pytest

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.plan import plan_frames, select_per_boundary, thin_uniformly


def brute_force_choice(times: list[float], boundaries: tuple[float, ...]) -> list[int]:
    """For each boundary, the last frame index whose time is before it (0 if none)."""
    chosen = []
    for boundary in boundaries:
        before = [i for i, t in enumerate(times) if t < boundary]
        chosen.append(before[-1] if before else 0)
    return chosen


@pytest.mark.parametrize(
    ("duration", "fps", "cap", "frames", "rate"),
    [
        (10.0, 2.0, 500, 20, 2.0),
        (76.0, 2.0, 500, 152, 2.0),
        (28 * 60.0, 2.0, 500, 500, 500 / (28 * 60.0)),
        (0.3, 2.0, 500, 1, 2.0),
        (9.999999, 2.0, 500, 19, 2.0),
        (1.15, 20.0, 500, 23, 20.0),
        (300.0, 2.0, 10, 10, 10 / 300.0),
    ],
)
def test_plan_follows_equation_1(
    duration: float, fps: float, cap: int, frames: int, rate: float
) -> None:
    plan = plan_frames(duration, FrameSettings(fps=fps, max_frames=cap))
    assert plan.planned_frames == frames
    assert len(plan.slots) == frames
    assert plan.effective_fps == pytest.approx(rate)
    assert plan.timestamps == pytest.approx([i / rate for i in range(frames)])
    # The frames span the whole clip: the last label is less than two intervals from the end.
    if frames > 1:
        assert duration - plan.timestamps[-1] < 2 / rate


def test_thinning_keeps_both_ends_and_spreads_evenly() -> None:
    plan = plan_frames(277.0, FrameSettings(max_images=50))
    assert plan.planned_frames == 500
    assert len(plan.slots) == 50
    assert plan.slots[0] == 0 and plan.slots[-1] == plan.planned_frames - 1
    gaps = {b - a for a, b in zip(plan.slots, plan.slots[1:], strict=False)}
    assert max(gaps) - min(gaps) <= 1
    assert plan.thinned


@pytest.mark.parametrize(("count", "cap"), [(5, 10), (10, 1), (10, 2), (554, 250), (7, 6)])
def test_thin_uniformly(count: int, cap: int) -> None:
    kept = thin_uniformly(count, cap)
    assert len(kept) == min(count, cap)
    assert kept == sorted(set(kept))
    if count > cap > 1:
        assert kept[0] == 0 and kept[-1] == count - 1


def test_paper_example_30fps_at_2fps_picks_7_22_37() -> None:
    times = [i / 30 for i in range(90)]
    plan = plan_frames(3.0, FrameSettings())
    picked = [t for _, t, _ in select_per_boundary(((t, t) for t in times), plan.boundaries)]
    assert [round(t * 30) for t in picked] == [7, 22, 37, 52, 67, 82]


@pytest.mark.parametrize("seed", range(20))
def test_streaming_choice_matches_brute_force_on_variable_frame_rates(seed: int) -> None:
    rng = random.Random(seed)
    times = [0.0]
    for _ in range(rng.randint(1, 400)):
        times.append(times[-1] + rng.choice([1 / 60, 1 / 30, 1 / 24, 0.2, 0.9]))
    duration = times[-1] + 1 / 30
    settings = FrameSettings(fps=rng.choice([0.5, 1.0, 2.0, 5.0]), max_frames=rng.randint(1, 60))
    plan = plan_frames(duration, settings)
    streamed = [
        i for _, _, i in select_per_boundary(((t, i) for i, t in enumerate(times)), plan.boundaries)
    ]
    assert streamed == brute_force_choice(times, plan.boundaries)


def test_streaming_holds_at_most_one_item() -> None:
    """The selector consumes lazily: slot k is emitted before frames far beyond it are read."""
    consumed = []

    def frames():  # type: ignore[no-untyped-def]
        for i in range(1000):
            consumed.append(i)
            yield i / 30, i

    plan = plan_frames(1000 / 30, FrameSettings())
    selector = select_per_boundary(frames(), plan.boundaries)
    next(selector)
    assert len(consumed) <= 9  # the chosen frame 7 and the one after it


def test_bad_duration_is_refused() -> None:
    with pytest.raises(ValueError, match="duration"):
        plan_frames(math.nan, FrameSettings())


@pytest.mark.parametrize(
    ("declared", "span", "settings", "frames", "dropped"),
    [
        # The clip: 2.5 s declared, data to 1.4 s + one 1/30 s frame -> 3 of 5 slots.
        (2.5, 1.4 + 1 / 30, FrameSettings(), 3, 2),
        (3.0, 3.0, FrameSettings(), 6, 0),
        (3.3, 3.3, FrameSettings(), 6, 0),  # ffmpeg would emit 7; N caps it at 6
        (3.0, 1.2, FrameSettings(), 2, 4),  # 2.4 slots: rounds down
        (3.0, 1.25, FrameSettings(), 3, 3),  # 2.5 slots: halves round up
        (3.0, 0.1, FrameSettings(), 1, 5),  # one frame at least, as for any clip
        (600.0, 300.0, FrameSettings(), 250, 250),  # the rate stays 500/600 fps
        (600.0, 300.0, FrameSettings(max_images=50), 250, 250),
    ],
)
def test_data_ending_early_keeps_the_slots_the_fps_filter_emits(
    declared: float, span: float, settings: FrameSettings, frames: int, dropped: int
) -> None:
    plan = plan_frames(declared, settings, decodable_span=span)
    full = plan_frames(declared, settings)
    assert plan.effective_fps == full.effective_fps
    assert plan.planned_frames == frames
    assert plan.frames_dropped == dropped
    assert plan.planned_frames + plan.frames_dropped == full.planned_frames
    kept = min(frames, settings.max_images or frames)
    assert len(plan.slots) == kept and plan.slots[-1] == frames - 1
    assert plan.timestamps[-1] == pytest.approx((frames - 1) / plan.effective_fps)
