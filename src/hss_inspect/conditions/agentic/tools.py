"""The agent's inspection tools: crop and zoom, more frames of a window, two frames side by side.

Tools work on the same prepared media and the same cache as the single-call condition.
A bad argument raises `ToolError`, which Inspect hands back to the model as the tool's
result, so the model can correct itself; the sample goes on.
"""

from __future__ import annotations

import asyncio
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from inspect_ai.model import ContentImage, ContentText
from inspect_ai.tool import Tool, ToolError, ToolResult, tool, tool_with
from PIL import Image

from hss_inspect.conditions import prompt
from hss_inspect.conditions.agentic.views import (
    Box,
    ShownFrame,
    ViewError,
    Views,
    checked_box,
    crop_and_zoom,
    image_size,
    jpeg_of,
    side_by_side,
    source_box,
)
from hss_inspect.core.settings import AgentSettings, FrameSettings
from hss_inspect.media import service
from hss_inspect.media.errors import MediaCancelled, MediaError, MediaTimeout
from hss_inspect.media.image import upright_image
from hss_inspect.media.plan import FramePlan, format_seconds, plan_window
from hss_inspect.media.uri import data_uri
from hss_inspect.media.video import SampledVideo
from hss_inspect.providers.limits import PART_OVERHEAD_BYTES

# Frames decoded for cropping keep the source resolution (`scaled_size` never upscales).
NATIVE_SIDE = 1 << 16
# Failures of this machine, not of the model's request: they fail the sample rather than
# come back to the model as a tool result it could act on.
MACHINE_MEDIA_ERRORS = (MediaTimeout, MediaCancelled)
# Labels carry two decimals; above 60 fps neighbouring frames could share a label.
MAX_WINDOW_FPS = 60

# What the model reads about the tools whose behaviour depends on the task's settings;
# the parameters are described in each tool's docstring.
CROP_DESCRIPTION = (
    "Crop a rectangle of the image, or of one video frame you have been shown, and zoom in.\n\n"
    "Coordinates are pixels of the image exactly as you were shown it: x grows from 0 at\n"
    "the left edge, y from 0 at the top edge. The region is cut from the full-resolution\n"
    "source and returned scaled so that its longer side is {zoom_side} px."
)
FRAMES_DESCRIPTION = (
    "Fetch more frames of a time window of the video, at a higher frame rate.\n\n"
    "Frames are chosen by the same rule as the frames you were first shown, at the\n"
    "requested rate (lowered if needed so that at most {max_frames} frames come back), and are\n"
    "labelled with their times in seconds."
)
FRAMES_FPS_PARAMETER = "Frames per second within the window (default {fps})."


@dataclass
class AgentMedia:
    """One conversation's media, what it has shown, and its image budget."""

    media_type: str
    path: Path
    frame_settings: FrameSettings
    settings: AgentSettings
    image_budget: int
    duration: float | None = None
    # Encoded bytes tool images may add to a request (None: the provider states no limit):
    # every step resends the whole conversation, so they count against each request.
    byte_budget: int | None = None
    # Input tokens they may add, by the model's image-token rule, where the first turn was
    # fitted to a context window (None: no window known)
    token_budget: int | None = None
    image_cost: Callable[[int, int], int] | None = None
    views: Views = field(default_factory=Views)
    images_returned: int = 0
    bytes_returned: int = 0
    tokens_returned: int = 0
    image_limit_reached: bool = False
    answer: str | None = None

    def take_images(self, jpegs: Sequence[bytes]) -> bool:
        """Count `jpegs` as returned; False, and the limit marked, if they do not fit."""
        added = sum(encoded_size(j) for j in jpegs)
        cost = self.image_cost
        tokens = sum(cost(*image_size(j)) for j in jpegs) if cost is not None else 0
        over_count = self.images_returned + len(jpegs) > self.image_budget
        over_bytes = self.byte_budget is not None and self.bytes_returned + added > self.byte_budget
        over_tokens = (
            self.token_budget is not None and self.tokens_returned + tokens > self.token_budget
        )
        if over_count or over_bytes or over_tokens:
            self.image_limit_reached = True
            return False
        self.images_returned += len(jpegs)
        self.bytes_returned += added
        self.tokens_returned += tokens
        return True


def encoded_size(jpeg: bytes) -> int:
    """Bytes of an image once base64-encoded into a request, with its part's framing."""
    return 4 * math.ceil(len(jpeg) / 3) + PART_OVERHEAD_BYTES


def image_limit_text(media: AgentMedia) -> str:
    size = "" if media.byte_budget is None else f" ({media.byte_budget} encoded bytes)"
    return (
        f"This conversation's limit of {media.image_budget} tool images{size} is reached; "
        "no image was returned and the conversation ends here."
    )


def inspection_tools(media: AgentMedia) -> list[Tool]:
    """The tools for this media type, with `submit` last."""
    settings = media.settings
    cropping = tool_with(
        crop(media), description=CROP_DESCRIPTION.format(zoom_side=settings.zoom_side)
    )
    if media.media_type == "image":
        return [cropping, submit(media)]
    more_frames = tool_with(
        frames(media),
        description=FRAMES_DESCRIPTION.format(max_frames=settings.window_max_frames),
        parameters={"fps": FRAMES_FPS_PARAMETER.format(fps=f"{settings.window_fps:g}")},
    )
    return [cropping, more_frames, compare(media), submit(media)]


@tool
def crop(media: AgentMedia) -> Tool:
    async def execute(
        x0: int, y0: int, x1: int, y1: int, frame_time: float | None = None
    ) -> ToolResult:
        """Crop and zoom (the model reads CROP_DESCRIPTION).

        Args:
            x0: Left edge of the region, in pixels.
            y0: Top edge of the region, in pixels.
            x1: Right edge of the region, in pixels (greater than x0).
            y1: Bottom edge of the region, in pixels (greater than y0).
            frame_time: For a video, the time label in seconds of the frame to crop
                (12.5 for the frame labelled 12.50 s). Leave empty for an image.
        """
        try:
            source, shown, what = await _crop_source(media, frame_time)
            box = checked_box(Box(x0, y0, x1, y1), shown, media.settings.min_crop_side, what)
        except ViewError as exc:
            raise ToolError(str(exc)) from exc
        region = source_box(box, shown, source.size)
        zoomed = await asyncio.to_thread(crop_and_zoom, source, region, media.settings.zoom_side)
        data = await asyncio.to_thread(jpeg_of, zoomed, media.frame_settings.jpeg_quality)
        if not media.take_images([data]):
            return image_limit_text(media)
        note = (
            f"The region {box.text()} of {what}, cut from the source at "
            f"{source.width}x{source.height} px and shown at {zoomed.width}x{zoomed.height} px."
        )
        return [ContentText(text=note), ContentImage(image=prompt_data_uri(data))]

    return execute


async def _crop_source(
    media: AgentMedia, frame_time: float | None
) -> tuple[Image.Image, tuple[int, int], str]:
    """The full-resolution source, the size the model saw it at, and how to name it."""
    if media.media_type == "image":
        if frame_time is not None:
            raise ViewError("this task shows an image, not a video: leave frame_time empty")
        assert media.views.image_size is not None
        raw = await asyncio.to_thread(media.path.read_bytes)
        upright, _ = await asyncio.to_thread(upright_image, raw, media.path)
        return upright, media.views.image_size, "the image"
    if frame_time is None:
        raise ViewError(
            "this task shows a video: give frame_time, the time label of a frame you were shown"
        )
    shown = media.views.frame(frame_time)
    native = await _native_frame(media, shown)
    return native, (shown.width, shown.height), f"the frame at {shown.label} s"


async def _native_frame(media: AgentMedia, shown: ShownFrame) -> Image.Image:
    assert media.duration is not None
    plan = FramePlan(media.duration, shown.rate, 1, (shown.slot,))
    settings = replace(media.frame_settings, frame_side=NATIVE_SIDE, max_images=None)
    try:
        video = await service.plan_frames_of(media.path, settings, plan)
    except MACHINE_MEDIA_ERRORS:
        raise
    except MediaError as exc:
        raise ViewError(f"the frame at {shown.label} s cannot be decoded ({exc})") from exc
    return await asyncio.to_thread(_open_jpeg, video.jpegs[0])


def _open_jpeg(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as opened:
        opened.load()
        return opened.copy()


@tool
def frames(media: AgentMedia) -> Tool:
    async def execute(start: float, end: float, fps: float | None = None) -> ToolResult:
        """More frames of a window (the model reads FRAMES_DESCRIPTION).

        Args:
            start: Start of the window in seconds (0 or more).
            end: End of the window in seconds (after start, at most the clip's duration).
            fps: (FRAMES_FPS_PARAMETER, with the task's default rate)
        """
        assert media.duration is not None
        rate = media.settings.window_fps if fps is None else fps
        if rate > MAX_WINDOW_FPS:
            raise ToolError(
                f"fps {rate:g} is too high: at most {MAX_WINDOW_FPS} frames per second "
                "(time labels have two decimals)"
            )
        try:
            plan = plan_window(media.duration, start, end, rate, media.settings.window_max_frames)
        except ValueError as exc:
            raise ToolError(str(exc)) from exc
        if media.images_returned + len(plan.slots) > media.image_budget:
            media.image_limit_reached = True  # known before decoding anything
            return image_limit_text(media)
        try:
            video = await service.plan_frames_of(media.path, media.frame_settings, plan)
        except MACHINE_MEDIA_ERRORS:
            raise
        except MediaError as exc:
            raise ToolError(f"these frames cannot be decoded ({exc})") from exc
        if not media.take_images(video.jpegs):
            return image_limit_text(media)
        shown = shown_frames(video, plan)
        media.views.add_frames(shown)
        return window_content(plan, shown, start, end)

    return execute


def shown_frames(video: SampledVideo, plan: FramePlan) -> list[ShownFrame]:
    return [
        ShownFrame(plan.effective_fps, slot, jpeg, *image_size(jpeg))
        for slot, jpeg in zip(plan.slots, video.jpegs, strict=True)
    ]


def window_content(
    plan: FramePlan, shown: list[ShownFrame], start: float, end: float
) -> ToolResult:
    count = "1 frame" if len(shown) == 1 else f"{len(shown)} frames"
    note = ContentText(
        text=f"{count} of {format_seconds(start)}..{format_seconds(end)} s at "
        f"{plan.effective_fps:.2f} frames per second, each after its time label."
    )
    labelled = [
        part
        for frame in shown
        for part in (
            ContentText(text=prompt.frame_label(frame.time)),
            ContentImage(image=prompt_data_uri(frame.jpeg)),
        )
    ]
    return [note, *labelled]


@tool
def compare(media: AgentMedia) -> Tool:
    async def execute(frame_time_a: float, frame_time_b: float) -> ToolResult:
        """Show two video frames you have been shown next to each other in one image.

        Args:
            frame_time_a: Time label in seconds of the frame to put on the left.
            frame_time_b: Time label in seconds of the frame to put on the right.
        """
        try:
            left, right = media.views.frame(frame_time_a), media.views.frame(frame_time_b)
        except ViewError as exc:
            raise ToolError(str(exc)) from exc
        if left.label == right.label:
            raise ToolError("give two different frame times to compare")
        joined = await asyncio.to_thread(
            lambda: side_by_side(_open_jpeg(left.jpeg), _open_jpeg(right.jpeg))
        )
        data = await asyncio.to_thread(jpeg_of, joined, media.frame_settings.jpeg_quality)
        if not media.take_images([data]):
            return image_limit_text(media)
        note = f"Left: the frame at {left.label} s. Right: the frame at {right.label} s."
        return [ContentText(text=note), ContentImage(image=prompt_data_uri(data))]

    return execute


@tool
def submit(media: AgentMedia) -> Tool:
    async def execute(answer: str) -> str:
        """Submit your final answer to the question. This ends the task.

        Args:
            answer: Your complete final answer, as you want it graded.
        """
        if not answer.strip():
            raise ToolError("the answer is empty: submit the full text of your answer")
        media.answer = answer.strip()
        return "Answer received."

    return execute


def prompt_data_uri(jpeg: bytes) -> str:
    return data_uri(jpeg, "image/jpeg")
