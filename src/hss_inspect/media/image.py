"""Images as the protocol sends them: untouched when within the limits, else re-encoded."""

from __future__ import annotations

import io
import logging
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

from hss_inspect.media.errors import NO_DEADLINE, Deadline, MediaError

logger = logging.getLogger(__name__)
# Pillow's own warning names no file, and a warnings filter cannot be set per call from
# worker threads safely; `upright_image` logs its own warning, naming the file.
warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)

# Formats every major provider accepts as sent; anything else is re-encoded.
_PASSTHROUGH = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}
_QUALITIES = (92, 85, 75, 65, 55)
_SHRINK_STEP = 0.8


@dataclass(frozen=True)
class PreparedImage:
    data: bytes
    mime: str
    width: int
    height: int
    reencoded: bool
    original_bytes: int


@dataclass(frozen=True)
class ImageFacts:
    """What decides how an image is sent, known once it has been prepared: its upright
    size, its bytes, and the type it goes as when untouched (None: always re-encoded)."""

    width: int
    height: int
    bytes: int
    mime: str | None

    def sent_as_is(self, max_side: int, max_bytes: int, max_pixels: int | None) -> bool:
        pixels_ok = max_pixels is None or self.width * self.height <= max_pixels
        fits = max(self.width, self.height) <= max_side and self.bytes <= max_bytes
        return self.mime is not None and fits and pixels_ok

    def reencoding_limits(
        self, max_side: int, max_bytes: int, max_pixels: int | None
    ) -> tuple[int | None, int, int | None]:
        """The limits a re-encoding depends on; None for one that cannot change it: a
        side at or above the image's own, a pixel cap that does not scale it down."""
        side = None if max_side >= max(self.width, self.height) else max_side
        pixels = max_pixels
        if max_pixels is not None and _pixel_scale(self.width * self.height, max_pixels) >= 1:
            pixels = None
        return side, max_bytes, pixels


def prepare_image(
    path: Path,
    max_side: int,
    max_bytes: int,
    deadline: Deadline = NO_DEADLINE,
    max_pixels: int | None = None,
) -> tuple[PreparedImage, ImageFacts]:
    """The bytes to send for the image at `path` under the side, pixel and size limits, and
    the facts that tell how the image goes under other limits."""
    raw = path.read_bytes()
    upright, source_format = upright_image(raw, path)
    deadline.check(path)
    width, height = upright.size
    facts = ImageFacts(width, height, len(raw), _PASSTHROUGH.get(source_format))
    if facts.mime is not None and facts.sent_as_is(max_side, max_bytes, max_pixels):
        return PreparedImage(raw, facts.mime, width, height, False, len(raw)), facts
    data, size = _reencode_within(upright, max_side, max_bytes, path, deadline, max_pixels)
    return PreparedImage(data, "image/jpeg", size[0], size[1], True, len(raw)), facts


def _pixel_scale(pixels: int, max_pixels: int) -> float:
    # floor to whole pixels below the limit: rounding up could land one row over it
    return math.sqrt(max_pixels / pixels) * 0.999


def upright_image(raw: bytes, path: Path) -> tuple[Image.Image, str]:
    """The image in `raw` turned upright by its EXIF orientation, and its format name.

    Pillow's decompression-bomb guard names neither the file nor what to do: past its
    error threshold the image is refused here with both; past its warning threshold
    (half of that) the image is used and a warning naming the file is logged instead.
    """
    try:
        with Image.open(io.BytesIO(raw)) as opened:
            opened.load()
            upright, source_format = ImageOps.exif_transpose(opened), opened.format or ""
    except Image.DecompressionBombError as exc:
        raise MediaError(
            f"{path}: refused as a possible decompression bomb ({exc}); a genuine image "
            "this large must be scaled down before use"
        ) from exc
    except (UnidentifiedImageError, OSError) as exc:
        raise MediaError(f"{path}: not a readable image ({exc})") from exc
    limit = Image.MAX_IMAGE_PIXELS
    if limit is not None and upright.width * upright.height > limit:
        logger.warning(
            "%s: %dx%d is over Pillow's %d-pixel decompression-bomb warning size; used as is",
            path,
            upright.width,
            upright.height,
            limit,
        )
    return upright, source_format


def _reencode_within(
    image: Image.Image,
    max_side: int,
    max_bytes: int,
    path: Path,
    deadline: Deadline,
    max_pixels: int | None = None,
) -> tuple[bytes, tuple[int, int]]:
    """JPEG at falling quality, then at smaller sizes, until it fits; upright orientation kept."""
    image = _flatten(image)
    scale = min(1.0, max_side / max(image.size))
    if max_pixels is not None:
        scale = min(scale, _pixel_scale(image.width * image.height, max_pixels))
    while True:
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        resized = image if size == image.size else image.resize(size, Image.Resampling.LANCZOS)
        for quality in _QUALITIES:
            deadline.check(path)
            data = _encode_jpeg(resized, quality)
            if len(data) <= max_bytes:
                return data, size
        if max(size) <= 16:
            raise MediaError(f"{path}: cannot bring the image under {max_bytes} bytes")
        scale *= _SHRINK_STEP


def _flatten(image: Image.Image) -> Image.Image:
    if image.mode in ("RGBA", "LA", "P"):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, (255, 255, 255))
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return image.convert("RGB") if image.mode != "RGB" else image


def _encode_jpeg(image: Image.Image, quality: int) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def shrink_jpegs_to_budget(
    jpegs: list[bytes], budget: int, quality: int, max_each: int | None = None
) -> list[bytes]:
    """Shrink every frame by one common factor until all of them fit in `budget` bytes
    and each fits in `max_each` bytes."""
    each = max_each if max_each is not None else budget

    def excess(frames: list[bytes]) -> float:
        return max(sum(len(j) for j in frames) / budget, max(len(j) for j in frames) / each)

    scale = 1.0
    shrunk = jpegs
    while jpegs and excess(shrunk) > 1:
        # Bytes of a JPEG grow roughly with its area, so aim below the budget's share.
        scale *= max(0.5, min(0.95, (1 / excess(shrunk)) ** 0.5 * 0.95))
        shrunk = [_rescale_jpeg(j, scale, quality) for j in jpegs]
        if scale < 0.05:
            raise MediaError(f"cannot fit {len(jpegs)} frames in {budget} bytes")
    return shrunk


def _rescale_jpeg(jpeg: bytes, scale: float, quality: int) -> bytes:
    with Image.open(io.BytesIO(jpeg)) as image:
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        return _encode_jpeg(image.resize(size, Image.Resampling.LANCZOS), quality)
