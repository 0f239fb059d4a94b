"""The user turn of `conditions/turn` (note, frames after their time labels, question; an
image at native resolution within the model's limits) in lmms-eval's chat format.

lmms-eval's chat models take `{"type": "image", "url": <PIL image>}` and encode it
themselves; its `openai` model writes PNG (unless LMMS_IMAGE_ENCODE_FORMAT says
otherwise), which keeps every decoded pixel of the frame the protocol prepared.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Mapping
from functools import cache
from typing import Any

from inspect_ai.model import Content, ContentImage, ContentText
from PIL import Image, ImageOps

from hss_inspect.conditions.turn import user_turn_for
from hss_inspect.core.options import DEFAULTS
from hss_inspect.lmms.docs import release_of
from hss_inspect.lmms.options import RunOptions
from hss_inspect.media.uri import decode_data_uri
from hss_inspect.providers.context import budget_for_name
from hss_inspect.providers.fit import TokenBudget


def chat_messages(doc: Mapping[str, Any], options: RunOptions) -> list[dict[str, Any]]:
    """The conversation lmms-eval sends for `doc`: the standard condition's one user turn
    (HSS sends no system message)."""
    content = turn_content(doc, options)
    return [{"role": "user", "content": [chat_part(part) for part in content]}]


def turn_content(doc: Mapping[str, Any], options: RunOptions) -> list[Content]:
    release = release_of(doc, DEFAULTS["revision"])
    media = options.media
    budget = token_budget(
        options.model, media.context_window, media.output_reserve, options.base_url
    )
    content, _ = asyncio.run(
        user_turn_for(release, options.media, options.model, dict(doc), budget)
    )
    return content


def chat_part(part: Content) -> dict[str, Any]:
    if isinstance(part, ContentText):
        return {"type": "text", "text": part.text}
    if isinstance(part, ContentImage):
        return {"type": "image", "url": upright_image(decode_data_uri(part.image))}
    raise TypeError(f"the HSS turn holds a {part.type} part, which lmms-eval cannot send")


def upright_image(data: bytes) -> Image.Image:
    """The image as a viewer shows it: lmms-eval re-encodes it, which would drop an EXIF
    orientation the provider would otherwise apply."""
    with Image.open(io.BytesIO(data)) as image:
        return ImageOps.exif_transpose(image)


def visuals(doc: Mapping[str, Any], options: RunOptions) -> list[Image.Image]:
    """The images of the turn, for lmms-eval's simple models (images first, then text)."""
    parts = [chat_part(part) for part in turn_content(doc, options)]
    return [part["url"] for part in parts if part["type"] == "image"]


def text(doc: Mapping[str, Any], options: RunOptions) -> str:
    """The turn's words, for lmms-eval's simple models: the note (frame labels cannot sit
    between the frames there) and the question."""
    parts = [chat_part(part) for part in turn_content(doc, options)]
    words = [part["text"] for part in parts if part["type"] == "text"]
    return words[0] + words[-1] if len(words) > 1 else "".join(words)


@cache
def token_budget(
    model: str, context_window: int | None, output_reserve: int, base_url: str | None
) -> TokenBudget:
    """The context window frames are fitted to, asked once a run (as `hss-inspect estimate`
    asks it from a model name)."""
    return asyncio.run(budget_for_name(model, context_window, output_reserve, base_url))
