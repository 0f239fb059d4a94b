"""Generated media for the near-duplicate checks: scenes with structure at every scale
(soft blobs of colour under sharp shapes), their re-encodes, resizes and crops, and clips
that pan across a wide scene, so a clip cut from a longer one shows the same frames at the
same times from its start on. And pools that trouble a hash: pictures of a few flat shapes
on white, distinct but alike in their broad layout, and look-alikes that differ only in a
flat colour and a caption."""

from __future__ import annotations

from fractions import Fraction
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont


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


def shape_picture(seed: int, size: tuple[int, int] = (320, 240)) -> Image.Image:
    """Eight flat shapes (ellipses, rectangles, triangles) of random colours, places and
    sizes on white, and a caption naming the seed: no two alike but by chance."""
    rng = np.random.default_rng(seed)
    width, height = size
    image = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(image)
    for _ in range(8):
        w = int(rng.integers(width // 10, width // 2))
        h = int(rng.integers(height // 10, height // 2))
        x, y = int(rng.integers(0, width - w)), int(rng.integers(0, height - h))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        kind = int(rng.integers(0, 3))
        if kind == 0:
            draw.ellipse((x, y, x + w, y + h), fill=colour)
        elif kind == 1:
            draw.rectangle((x, y, x + w, y + h), fill=colour)
        else:
            draw.polygon([(x, y + h), (x + w // 2, y), (x + w, y + h)], fill=colour)
    caption = ImageFont.load_default(size=18)
    draw.text((10, height - 28), f"picture {seed:04d}", fill=(0, 0, 0), font=caption)
    return image


def look_alike(seed: int, size: tuple[int, int] = (320, 240)) -> Image.Image:
    """A flat colour and a caption, "scene 0042": every such picture like every other to a
    hash that reads the broad layout."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", size, tuple(int(c) for c in rng.integers(0, 256, 3)))
    caption = ImageFont.load_default(size=44)
    ImageDraw.Draw(image).text((30, 95), f"scene {seed:04d}", fill=(255, 255, 255), font=caption)
    return image


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


def sample_photographs() -> list[Path]:
    """scikit-image's sample pictures (photographs, scans, textures, a few drawings), read
    as the files its wheel carries: the package is a test dependency for them alone, never
    imported. None when it is not installed."""
    try:
        found = distribution("scikit-image").files or []
    except PackageNotFoundError:
        return []
    pictures = [f for f in found if f.parent.as_posix() == "skimage/data"
                and f.suffix in (".png", ".jpg")]  # fmt: skip
    return sorted(Path(str(f.locate())) for f in pictures)
