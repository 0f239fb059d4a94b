"""The pure rules behind the agent's tools: the window plan, the crop geometry, the budgets."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hss_inspect.conditions.agentic.loop import CONVERSATION_TEXT_BYTES, tool_byte_budget
from hss_inspect.conditions.agentic.tools import AgentMedia
from hss_inspect.conditions.agentic.views import (
    Box,
    ViewError,
    checked_box,
    source_box,
    zoomed_size,
)
from hss_inspect.core.settings import AgentSettings, FrameSettings
from hss_inspect.media.plan import plan_frames, plan_window
from hss_inspect.providers.limits import PART_OVERHEAD_BYTES


@pytest.mark.parametrize(
    ("duration", "start", "end", "fps", "cap"),
    [(3.0, 1.0, 2.0, 10.0, 16), (3.1, 2.0, 3.1, 2.0, 16), (60.0, 0.0, 60.0, 8.0, 16),
     (10.0, 4.03, 4.97, 30.0, 500), (5.0, 0.0, 5.0, 2.0, 500)],
)  # fmt: skip
def test_window_is_the_whole_clip_plan_at_that_rate_cut_to_the_window(
    duration: float, start: float, end: float, fps: float, cap: int
) -> None:
    window = plan_window(duration, start, end, fps, cap)
    rate = min(fps, cap / (end - start))
    assert window.effective_fps == pytest.approx(rate)
    whole = plan_frames(duration, FrameSettings(fps=rate, max_frames=10**9))
    expected = [
        s for s, t in zip(whole.slots, whole.timestamps, strict=True) if start - 1e-9 <= t < end
    ]
    assert list(window.slots) == expected[:cap]
    assert len(window.slots) <= cap
    assert window.boundaries == pytest.approx([(s + 0.5) / rate for s in expected[:cap]])


def test_a_window_over_the_whole_clip_at_its_rate_is_the_first_turn() -> None:
    whole = plan_frames(7.3, FrameSettings(fps=2.0))
    window = plan_window(7.3, 0.0, 7.3, 2.0, 500)
    assert window.slots == whole.slots and window.timestamps == whole.timestamps


@pytest.mark.parametrize(
    ("start", "end", "fps", "message"),
    [(-1.0, 1.0, 2.0, "0 <= start < end"), (2.0, 1.0, 2.0, "0 <= start < end"),
     (1.0, 3.5, 2.0, "past the clip's end at 3.00 s"), (1.0, 2.0, 0.0, "fps must be"),
     (1.1, 1.2, 2.0, "widen the window"), (1.0, math.inf, 2.0, "0 <= start < end")],
)  # fmt: skip
def test_bad_windows_say_what_is_wrong(start: float, end: float, fps: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        plan_window(3.0, start, end, fps, 16)


def test_crop_box_checks_and_maps_to_the_source() -> None:
    assert checked_box(Box(0, 0, 64, 48), (64, 48), 8, "the image") == Box(0, 0, 64, 48)
    for bad in (Box(-1, 0, 10, 10), Box(0, 0, 65, 10), Box(10, 10, 12, 30), Box(5, 5, 1, 20)):
        with pytest.raises(ViewError, match="64x48 px"):
            checked_box(bad, (64, 48), 8, "the image")
    assert source_box(Box(20, 10, 52, 34), (64, 48), (160, 120)) == Box(50, 25, 130, 85)
    assert zoomed_size(80, 60, 768) == (768, 576)
    assert zoomed_size(2000, 100, 768) == (768, 38)


def agent_media(image_budget: int, byte_budget: int | None) -> AgentMedia:
    return AgentMedia(
        media_type="video",
        path=Path("clip.mp4"),
        frame_settings=FrameSettings(),
        settings=AgentSettings(),
        image_budget=image_budget,
        byte_budget=byte_budget,
    )


def test_tool_images_stop_at_the_image_and_byte_budgets() -> None:
    jpeg = bytes(3000)  # 4000 bytes once base64-encoded
    one = 4000 + PART_OVERHEAD_BYTES
    counted = agent_media(image_budget=3, byte_budget=None)
    assert counted.take_images([jpeg, jpeg]) and counted.take_images([jpeg])
    assert not counted.take_images([jpeg]) and counted.image_limit_reached
    assert counted.images_returned == 3
    sized = agent_media(image_budget=40, byte_budget=2 * one + 10)
    assert sized.take_images([jpeg, jpeg])
    assert not sized.take_images([b"x"]) and sized.image_limit_reached
    assert (sized.images_returned, sized.bytes_returned) == (2, 2 * one)


def test_the_first_turn_and_the_text_room_come_off_the_request_budget() -> None:
    sent = {"payload": {"estimated_request_bytes": 25_000_000}}
    assert tool_byte_budget(None, sent) is None
    assert tool_byte_budget(30_000_000, sent) == 5_000_000 - CONVERSATION_TEXT_BYTES
    assert tool_byte_budget(25_100_000, sent) == 0
