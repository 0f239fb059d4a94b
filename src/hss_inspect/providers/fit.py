"""Fitting a clip's frames to a model's token budget, as pure arithmetic.

The paper sends a model with a stricter input limit its "maximum supported frame capacity"
(Sec. 3, App. C.1): the frames are thinned uniformly, both ends kept, at the usual side,
exactly as for a provider's image cap (`media.plan.thin_uniformly`). Here the cap is the
most frames whose tokens fit the budget: the context window, less the output budget, the
turn's text, the chat template and a margin. Only when even `floor_frames` frames do not
fit at that side are they shrunk (one longest side for all), down to `floor_side`; a clip
that does not fit even then fails before anything is sent.

Text is counted as one token per UTF-8 byte: no tokenizer used by these models (byte-level
BPE, or SentencePiece with byte fallback) makes more tokens than bytes, so the count is a
bound, not a guess, and it costs little (the labels of the frames kept, the note, the
question: a few thousand bytes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from hss_inspect.core.options import spell
from hss_inspect.media.errors import MediaError
from hss_inspect.providers.limits import FitConstants

WindowSource = Literal["option", "server", "model info", "none"]
# Bump when the fitting rule itself changes (not its constants, which are data), so the
# version fingerprints change with it.
FIT_ALGORITHM_VERSION = 1

# (width, height) -> tokens of one image of that size
ImageCost = Callable[[int, int], int]
# longest side -> (width, height) of a frame sent at that side
FrameSize = Callable[[int], tuple[int, int]]


class DoesNotFit(MediaError):
    """Not even the floor's frames fit the model's token budget: nothing is sent."""

    @property
    def remedy(self) -> str:
        return (
            f"give the window the server really has ({spell('context_window', 'TOKENS')}, or "
            "serve the model with a longer context: vLLM --max-model-len, SGLang "
            "--context-length, Ollama num_ctx), or keep less for the output (--max-tokens, "
            f"{spell('output_reserve')})"
        )


@dataclass(frozen=True)
class TokenBudget:
    """The context window a request must fit, where it came from, and the output kept free.

    `input_limit` is a separate cap on the input where the model's information gives one
    (e.g. an input limit below context length minus output)."""

    window: int | None
    source: WindowSource
    detail: str
    output_reserve: int
    reserve_source: str
    input_limit: int | None = None
    served_root: str | None = None  # the checkpoint a vLLM/SGLang server says it serves

    @property
    def input_tokens(self) -> int | None:
        """Tokens the input may use: the window less the output, under any input cap."""
        if self.window is None:
            return self.input_limit
        room = self.window - self.output_reserve
        return room if self.input_limit is None else min(room, self.input_limit)

    def describe(self) -> str:
        """'a context window of 32,768 tokens (server: ...), 1,000 kept for the output (...)'"""
        if self.window is None and self.input_limit is None:
            return "no known context window"
        window = self.window if self.window is not None else self.input_limit
        return (
            f"a context window of {window:,} tokens ({self.source}: {self.detail}), "
            f"{self.output_reserve:,} kept for the output ({self.reserve_source})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "input_tokens": self.input_tokens}


NO_BUDGET = TokenBudget(None, "none", "no window known", 0, "none")


@dataclass(frozen=True)
class FrameFit:
    """How many frames of a clip, at which side, fit the budget; tokens as estimated."""

    planned: int
    frames: int
    asked_side: int
    side: int
    size: tuple[int, int]
    available: int  # tokens for the frames and their labels
    image_tokens: int
    label_tokens: int

    @property
    def thinned(self) -> bool:
        return self.frames < self.planned

    @property
    def shrunk(self) -> bool:
        return self.side < self.asked_side


def available_tokens(input_tokens: int, fixed_text_tokens: int, constants: FitConstants) -> int:
    """Tokens left for the frames and their labels once the fixed text, the template and
    the margin are taken off the input budget."""
    margin = math.ceil(constants.margin * input_tokens)
    return input_tokens - margin - constants.template_tokens - fixed_text_tokens


def fit_frames(
    planned: int,
    side: int,
    size_at: FrameSize,
    cost: ImageCost,
    label_tokens: int,
    available: int,
    constants: FitConstants,
) -> FrameFit | None:
    """The most of `planned` frames at `side` that fit in `available` tokens; at the floor
    count, the largest side (>= floor_side) at which they fit; None when nothing does."""
    per_frame = cost(*size_at(side)) + label_tokens
    most = available // per_frame if per_frame > 0 else planned
    floor = min(planned, constants.floor_frames)
    if most >= floor:
        return _fit(planned, min(planned, most), side, side, size_at, cost, label_tokens, available)
    for smaller in range(side - 1, min(side, constants.floor_side) - 1, -1):
        if floor * (cost(*size_at(smaller)) + label_tokens) <= available:
            return _fit(planned, floor, side, smaller, size_at, cost, label_tokens, available)
    return None


def _fit(
    planned: int,
    frames: int,
    asked_side: int,
    side: int,
    size_at: FrameSize,
    cost: ImageCost,
    label_tokens: int,
    available: int,
) -> FrameFit:
    size = size_at(side)
    return FrameFit(
        planned=planned,
        frames=frames,
        asked_side=asked_side,
        side=side,
        size=size,
        available=available,
        image_tokens=frames * cost(*size),
        label_tokens=frames * label_tokens,
    )


def floor_needs(
    planned: int, size_at: FrameSize, cost: ImageCost, label_tokens: int, constants: FitConstants
) -> int:
    """Tokens the floor's frames need at the floor side (for the error message)."""
    floor = min(planned, constants.floor_frames)
    return floor * (cost(*size_at(constants.floor_side)) + label_tokens)
