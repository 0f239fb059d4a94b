"""Generated media for the near-duplicate checks: scenes with structure at every scale
(soft blobs of colour under sharp shapes), their re-encodes, resizes and crops, and clips
that pan across a wide scene, so a clip cut from a longer one shows the same frames at the
same times from its start on."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFilter


def scene(seed: int, size: tuple[int, int] = (480, 360)) -> Image.Image:
    """A picture of its own for each seed."""
    rng = np.random.default_rng(seed)
    width, height = size
    small = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    image = Image.fromarray(small).resize(size, Image.Resampling.BICUBIC)
    draw = ImageDraw.Draw(image)
    for _ in range(14):
        x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
        w, h = (
            int(rng.integers(width // 12, width // 3)),
            int(rng.integers(height // 12, height // 3)),
        )
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape((x, y, x + w, y + h), fill=colour)
    return image.filter(ImageFilter.GaussianBlur(1.0))


def save(image: Image.Image, path: Path, **options: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, **options)  # type: ignore[arg-type]
    return path


def crop_share(image: Image.Image, box: tuple[float, float, float, float]) -> Image.Image:
    """`image` cropped to `box`, given as shares of its width and height."""
    left, top, right, bottom = box
    w, h = image.size
    return image.crop((round(left * w), round(top * h), round(right * w), round(bottom * h)))


def panning_frames(
    seed: int, seconds: float, fps: int, size: tuple[int, int], start: float = 0.0
) -> list[np.ndarray]:
    """The frames of a camera panning across a wide scene at a steady pace, from `start`
    seconds into the pan: the same `seed` and time give the same frame."""
    width, height = size
    pan_seconds = 40.0
    wide = np.asarray(scene(seed, (width * 4, height)))
    travel = wide.shape[1] - width
    frames = []
    for index in range(round(seconds * fps)):
        time = start + index / fps
        x = round(travel * (time % pan_seconds) / pan_seconds)
        frames.append(np.ascontiguousarray(wide[:, x : x + width]))
    return frames


def write_clip(
    path: Path, frames: list[np.ndarray], fps: int, codec: str = "libx264",
    size: tuple[int, int] | None = None,
) -> Path:  # fmt: skip
    """Encode `frames` (resized to `size` when given) at `fps`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    height, width = frames[0].shape[:2]
    width, height = size or (width, height)
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height = width, height
        stream.pix_fmt = "yuv420p"
        for index, pixels in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            if size is not None:
                frame = frame.reformat(width=width, height=height)
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return path
