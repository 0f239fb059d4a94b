"""The pictures of an HSS turn as lmms-eval's models take them: a PIL image a local model
reads the pixels of, which an API model sends as the bytes the Inspect task sends.

lmms-eval 0.7.3 has no content part for an image already encoded: every model is handed a
PIL image (or a file path it opens) and encodes it itself, by saving it in its own format
(its `openai` models in LMMS_IMAGE_ENCODE_FORMAT, PNG unless set). A picture here keeps the
bytes it was decoded from, and saving it in their format writes them unchanged: a JPEG
frame saved as JPEG is the protocol's JPEG, byte for byte. In any other format it is
encoded as any PIL image is.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from PIL import Image, ImageOps

from hss_inspect.core.errors import SetupError

# Pillow's name for a format, from the names lmms-eval's settings accept for it
_FORMAT_NAMES = {"JPG": "JPEG"}

PathOrFile = str | bytes | os.PathLike[str] | os.PathLike[bytes] | IO[bytes]


class EncodedPicture(Image.Image):
    """A picture decoded (upright, as a viewer shows it) from the bytes the Inspect task
    sends, keeping those bytes (`encoded`, in `encoded_format`).

    Local models read its pixels; a conversion, a resize or a copy of it is an ordinary
    PIL image, which keeps no bytes of the old pixels.
    """

    encoded: bytes
    encoded_format: str

    @classmethod
    def decode(cls, data: bytes) -> EncodedPicture:
        with Image.open(io.BytesIO(data)) as opened:
            encoded_format = str(opened.format)
            # an EXIF orientation stays in the bytes (the provider applies it, as for the
            # Inspect task's request); the pixels are turned, as a local model must see them
            upright = ImageOps.exif_transpose(opened)
        picture = cls()
        # Pillow builds its images by factory functions only: the pixels are taken over by
        # pickling's own state (mode, size, palette, data), the one way in that is not private
        Image.Image.__setstate__(picture, upright.__getstate__())
        picture.encoded, picture.encoded_format = data, encoded_format
        return picture

    def save(self, fp: PathOrFile, format: str | None = None, **params: Any) -> None:
        """Saved in the format of its bytes, the picture writes those bytes (options such as
        a JPEG quality do not re-encode it); in any other format it is encoded by Pillow."""
        if written_format(fp, format) != self.encoded_format:
            super().save(fp, format, **params)
        elif isinstance(fp, str | bytes | os.PathLike):
            Path(os.fsdecode(fp)).write_bytes(self.encoded)
        else:
            fp.write(self.encoded)

    def __getstate__(self) -> list[Any]:
        return [*super().__getstate__(), self.encoded, self.encoded_format]

    def __setstate__(self, state: list[Any]) -> None:
        super().__setstate__(state)
        self.encoded, self.encoded_format = state[-2], state[-1]


def written_format(fp: PathOrFile, format: str | None) -> str | None:
    """The format `Image.save` writes: the one named, else the file name's (None: unknown)."""
    if format:
        return format_name(format)
    if isinstance(fp, str | bytes | os.PathLike):
        suffix = Path(os.fsdecode(fp)).suffix.lower()
        return Image.registered_extensions().get(suffix)
    return None


def format_name(name: str) -> str:
    """Pillow's name for an image format, from any name lmms-eval accepts for it."""
    upper = name.upper()
    return _FORMAT_NAMES.get(upper, upper)


# The task YAML's lmms_eval_specific_kwargs declare, per lmms-eval API model, the format it
# writes every image of a request in: a format, or the variable its `openai` models read.
WRITES_KEY = "writes_images_as"
ENCODE_FORMAT_VARIABLE = "LMMS_IMAGE_ENCODE_FORMAT"
# lmms-eval's format when the variable is unset
ENCODE_FORMAT_DEFAULT = "PNG"


def check_images_go_as_jpeg(
    model_kwargs: Mapping[str, Any] | None, environ: Mapping[str, str] = os.environ
) -> None:
    """Refuse a model that would write HSS's JPEG frames in another format: as PNG they are
    several times the bytes the protocol budgets, past providers' request limits on long
    clips. A model the YAML does not name passes: a local one reads the pixels, `claude`
    and `qwen_vl_api` write JPEG."""
    declared = str((model_kwargs or {}).get(WRITES_KEY) or "")
    if not declared:
        return
    from_variable = declared == ENCODE_FORMAT_VARIABLE
    chosen = environ.get(ENCODE_FORMAT_VARIABLE) if from_variable else declared
    written = format_name(chosen or ENCODE_FORMAT_DEFAULT)
    if written == "JPEG":
        return
    if from_variable:
        setting = (
            f"{ENCODE_FORMAT_VARIABLE}={chosen}" if chosen else f"{ENCODE_FORMAT_VARIABLE} unset"
        )
        how = f"writes each image as {written} ({setting})"
        remedy = f"set {ENCODE_FORMAT_VARIABLE}=JPEG and they go as the Inspect task's own bytes"
    else:
        how = f"writes every image as {written}"
        remedy = (
            f"reach the model through `--model openai` (its OpenAI-compatible endpoint) with "
            f"{ENCODE_FORMAT_VARIABLE}=JPEG, or run the Inspect task"
        )
    raise SetupError(
        f"HSS in lmms-eval: this lmms-eval model {how}, which makes HSS's JPEG frames several "
        f"times the bytes the protocol budgets (past providers' request limits on long "
        f"clips); {remedy}"
    )
