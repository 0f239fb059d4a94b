"""The user turn of `conditions/turn` (note, frames after their time labels, question; an
image at native resolution within the model's limits) in lmms-eval's chat format.

lmms-eval's models take `{"type": "image", "url": <PIL image>}`: each picture is an
`EncodedPicture` (`pictures`), which a local model reads the pixels of and an API model,
saving it as JPEG to encode it, sends as the Inspect task's own bytes. A model the task
YAML declares would write them in another format is refused first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from functools import cache
from typing import Any

from inspect_ai.model import Content, ContentImage, ContentText

from hss_inspect.conditions.turn import user_turn_for
from hss_inspect.core.options import DEFAULTS
from hss_inspect.lmms.docs import release_of
from hss_inspect.lmms.options import RunOptions
from hss_inspect.lmms.pictures import EncodedPicture, check_images_go_as_jpeg
from hss_inspect.media.uri import decode_data_uri
from hss_inspect.providers.context import budget_for_name
from hss_inspect.providers.fit import TokenBudget

# lmms-eval's lmms_eval_specific_kwargs: the task YAML's entry for the model of the run
ModelKwargs = Mapping[str, Any] | None


def chat_messages(
    doc: Mapping[str, Any], options: RunOptions, model: ModelKwargs = None
) -> list[dict[str, Any]]:
    """The conversation lmms-eval sends for `doc`: the standard condition's one user turn
    (HSS sends no system message)."""
    content = turn_content(doc, options, model)
    return [{"role": "user", "content": [chat_part(part) for part in content]}]


def turn_content(
    doc: Mapping[str, Any], options: RunOptions, model: ModelKwargs = None
) -> list[Content]:
    check_images_go_as_jpeg(model)
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
        return {"type": "image", "url": picture(part)}
    raise TypeError(f"the HSS turn holds a {part.type} part, which lmms-eval cannot send")


def visuals(
    doc: Mapping[str, Any], options: RunOptions, model: ModelKwargs = None
) -> list[EncodedPicture]:
    """The images of the turn, for lmms-eval's simple models (images first, then text)."""
    content = turn_content(doc, options, model)
    return [picture(part) for part in content if isinstance(part, ContentImage)]


def picture(part: ContentImage) -> EncodedPicture:
    return EncodedPicture.decode(decode_data_uri(part.image))


def text(doc: Mapping[str, Any], options: RunOptions, model: ModelKwargs = None) -> str:
    """The turn's words, for lmms-eval's simple models: the note (frame labels cannot sit
    between the frames there) and the question."""
    content = turn_content(doc, options, model)
    words = [part.text for part in content if isinstance(part, ContentText)]
    return words[0] + words[-1] if len(words) > 1 else "".join(words)


@cache
def token_budget(
    model: str, context_window: int | None, output_reserve: int, base_url: str | None
) -> TokenBudget:
    """The context window frames are fitted to, asked once a run (as `hss-inspect estimate`
    asks it from a model name)."""
    return asyncio.run(budget_for_name(model, context_window, output_reserve, base_url))
