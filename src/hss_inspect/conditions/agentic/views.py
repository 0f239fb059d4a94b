"""What the agent has been shown, and the geometry of its crops, as pure functions.

Every image the model has seen is named the way it was labelled: the task's image, or
a video frame by its time label (`12.50`). A crop is given in the pixel coordinates of
the image as the model saw it, and is cut from the best source there is (the original
image, or the source video frame at its own resolution), scaled by the same factor.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from PIL import Image

from hss_inspect.media.plan import format_seconds


class ViewError(ValueError):
    """A tool argument that names nothing the model was shown; the text says what to do."""


@dataclass(frozen=True)
class ShownFrame:
    """One video frame the model saw: its place in a sampling plan and its bytes."""

    rate: float
    slot: int
    jpeg: bytes
    width: int
    height: int

    @property
    def time(self) -> float:
        return self.slot / self.rate

    @property
    def label(self) -> str:
        return format_seconds(self.time)


@dataclass
class Views:
    """The task's image size (image tasks) and the frames shown so far (video tasks)."""

    image_size: tuple[int, int] | None = None
    frames: dict[str, ShownFrame] = field(default_factory=dict)

    def add_frames(self, frames: Sequence[ShownFrame]) -> None:
        """Frames shown later replace earlier ones with the same time label."""
        for frame in frames:
            self.frames[frame.label] = frame

    def frame(self, time: float) -> ShownFrame:
        label = format_seconds(time)
        found = self.frames.get(label)
        if found is None:
            raise ViewError(
                f"no frame labelled {label} s has been shown; {self.known_frames_text(time)}"
            )
        return found

    def known_frames_text(self, near: float) -> str:
        if not self.frames:
            return "no frames have been shown yet: fetch some with the frames tool first"
        nearest = sorted(self.frames.values(), key=lambda f: abs(f.time - near))[:5]
        listed = ", ".join(f.label for f in sorted(nearest, key=lambda f: f.time))
        return f"the nearest frames shown are at {listed} s (give frame_time as one of these)"


@dataclass(frozen=True)
class Box:
    left: int
    top: int
    right: int
    bottom: int

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    def text(self) -> str:
        return f"x {self.left}..{self.right}, y {self.top}..{self.bottom}"


def checked_box(box: Box, size: tuple[int, int], min_side: int, what: str) -> Box:
    """`box` if it lies inside an image of `size` and is at least `min_side` px each way."""
    width, height = size
    frame = (
        f"{what} is {width}x{height} px (x from 0 at the left to {width}, "
        f"y from 0 at the top to {height})"
    )
    if box.left < 0 or box.top < 0 or box.right > width or box.bottom > height:
        raise ViewError(f"the box {box.text()} reaches outside the image: {frame}")
    if box.width < min_side or box.height < min_side:
        raise ViewError(
            f"the box {box.text()} must be at least {min_side} px wide and high, with "
            f"x1 > x0 and y1 > y0; {frame}"
        )
    return box


def source_box(box: Box, shown: tuple[int, int], source: tuple[int, int]) -> Box:
    """The same region in a source image of another size (the shown image is scaled)."""
    sx, sy = source[0] / shown[0], source[1] / shown[1]
    return Box(
        round(box.left * sx),
        round(box.top * sy),
        max(round(box.right * sx), round(box.left * sx) + 1),
        max(round(box.bottom * sy), round(box.top * sy) + 1),
    )


def zoomed_size(width: int, height: int, side: int) -> tuple[int, int]:
    """Scale a crop, up or down, so its longest side is `side` px, keeping its shape."""
    scale = side / max(width, height)
    return max(1, round(width * scale)), max(1, round(height * scale))


def crop_and_zoom(source: Image.Image, box: Box, side: int) -> Image.Image:
    """The region `box` (source pixels) of `source`, scaled with Lanczos to `side` px."""
    region = source.convert("RGB").crop((box.left, box.top, box.right, box.bottom))
    return region.resize(zoomed_size(box.width, box.height, side), Image.Resampling.LANCZOS)


# Pixels of white between two frames shown side by side.
SIDE_BY_SIDE_GAP = 8


def side_by_side(left: Image.Image, right: Image.Image) -> Image.Image:
    """Two images next to each other on one canvas, top-aligned, separated by a white gap."""
    height, gap = max(left.height, right.height), SIDE_BY_SIDE_GAP
    canvas = Image.new("RGB", (left.width + gap + right.width, height), (255, 255, 255))
    canvas.paste(left.convert("RGB"), (0, 0))
    canvas.paste(right.convert("RGB"), (left.width + gap, 0))
    return canvas


def image_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as opened:
        return opened.size


def jpeg_of(image: Image.Image, quality: int) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()
