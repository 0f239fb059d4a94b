"""Image input tokens by each provider's published formula and each open-weight family's
image processor (`image_tokens` in task_configs/model_limits.yaml names the formula and
gives its constants, with its source)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hss_inspect.providers.limits import TokenRule


def anthropic_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """Claude vision guide ("Evaluate image size"): an image over the long-edge or pixel
    limit is first scaled down; then tokens = width * height / 750."""
    max_side, max_pixels = float(formula["max_side"]), float(formula["max_pixels"])
    scale = min(1.0, max_side / max(width, height), math.sqrt(max_pixels / (width * height)))
    return math.ceil(width * scale * height * scale / float(formula["pixels_per_token"]))


def openai_patch_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """OpenAI images and vision guide ("Calculating costs"): 32 px patches; an image over
    the patch budget is scaled down to fit it; tokens = patches x the model's multiplier."""
    patch, budget = int(formula["patch"]), int(formula["max_patches"])
    patches = math.ceil(width / patch) * math.ceil(height / patch)
    if patches > budget:
        shrink = math.sqrt(patch * patch * budget / (width * height))
        # the guide then shrinks a little more, so that the side losing most keeps whole
        # patches, and takes the resized image's whole pixels
        along = (width * shrink / patch, height * shrink / patch)
        shrink *= min(math.floor(n) / n for n in along)
        resized = (math.floor(width * shrink), math.floor(height * shrink))
        patches = math.ceil(resized[0] / patch) * math.ceil(resized[1] / patch)
    # the count is capped at the budget (float rounding can leave one patch row over it)
    return math.ceil(min(patches, budget) * float(formula.get("multiplier", 1.0)))


def gemini_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """Gemini API tokens page: both sides within 384 px cost 258 tokens; larger images are
    cut into 768x768 tiles of 258 tokens each."""
    small, tile = int(formula["small_side"]), int(formula["tile"])
    per = int(formula["tokens_per_tile"])
    if width <= small and height <= small:
        return per
    return math.ceil(width / tile) * math.ceil(height / tile) * per


def smart_resize(
    width: int, height: int, factor: int, min_pixels: int, max_pixels: int
) -> tuple[int, int]:
    """The Qwen-VL image processors' resize: each side rounded to a multiple of `factor`
    (Python's round, halves to even, as the processors do), then the area brought within
    [min_pixels, max_pixels] keeping the aspect ratio, sides floored or ceiled to the factor."""
    w_bar = max(factor, round(width / factor) * factor)
    h_bar = max(factor, round(height / factor) * factor)
    if w_bar * h_bar > max_pixels:
        beta = math.sqrt(width * height / max_pixels)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
    elif w_bar * h_bar < min_pixels:
        beta = math.sqrt(min_pixels / (width * height))
        w_bar = math.ceil(width * beta / factor) * factor
        h_bar = math.ceil(height * beta / factor) * factor
    return w_bar, h_bar


def qwen_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """Qwen2-VL, Qwen2.5-VL, Qwen3-VL: one token per factor x factor block of the resized
    image (patches merged 2 x 2), plus the vision start and end tokens."""
    factor = int(formula["factor"])
    w_bar, h_bar = smart_resize(
        width, height, factor, int(formula["min_pixels"]), int(formula["max_pixels"])
    )
    return (w_bar // factor) * (h_bar // factor) + int(formula.get("wrapper_tokens", 0))


def fixed_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """Gemma 3 without pan-and-scan: the same count whatever the size."""
    return int(formula["tokens_per_image"])


def internvl_grid(width: int, height: int, max_tiles: int, tile: int) -> tuple[int, int]:
    """InternVL's tile grid: of the grids with 1..max_tiles tiles, the one whose aspect
    ratio is closest to the image's; on a tie the larger one when the image covers more
    than half of it."""
    grids = sorted(
        {
            (i, j)
            for i in range(1, max_tiles + 1)
            for j in range(1, max_tiles + 1)
            if i * j <= max_tiles
        },
        key=lambda grid: grid[0] * grid[1],
    )
    aspect, area = width / height, width * height
    best, best_diff = (1, 1), math.inf
    for grid in grids:
        diff = abs(aspect - grid[0] / grid[1])
        if diff < best_diff:
            best, best_diff = grid, diff
        elif diff == best_diff and area > 0.5 * tile * tile * grid[0] * grid[1]:
            best = grid
    return best


def internvl_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """InternVL2.5/3: a fixed count per 448 px tile, a thumbnail tile when there are several."""
    columns, rows = internvl_grid(width, height, int(formula["max_tiles"]), int(formula["tile"]))
    tiles = columns * rows
    if formula.get("thumbnail", True) and tiles > 1:
        tiles += 1
    return tiles * int(formula["tokens_per_tile"]) + int(formula.get("wrapper_tokens", 0))


def pixtral_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """Pixtral: scaled within the longest edge, one token per 16 px patch and one per row
    (the row breaks, the last one the image end)."""
    patch, longest = int(formula["patch"]), int(formula["longest_edge"])
    ratio = max(width / longest, height / longest)
    if ratio > 1:
        width, height = math.floor(width / ratio), math.floor(height / ratio)
    columns, rows = (width - 1) // patch + 1, (height - 1) // patch + 1
    return rows * (columns + 1)


FORMULAS: dict[str, Callable[[int, int, dict[str, Any]], int]] = {
    "anthropic": anthropic_tokens,
    "openai_patches": openai_patch_tokens,
    "gemini": gemini_tokens,
    "qwen_smart_resize": qwen_tokens,
    "fixed": fixed_tokens,
    "internvl_tiles": internvl_tokens,
    "pixtral": pixtral_tokens,
}


def has_formula(rule: TokenRule) -> bool:
    return str(rule.formula.get("formula")) in FORMULAS


def image_tokens(rule: TokenRule | None, width: int, height: int) -> int | None:
    """Tokens of one `width` x `height` image under `rule`; None without a known formula."""
    if rule is None:
        return None
    compute = FORMULAS.get(str(rule.formula.get("formula")))
    return None if compute is None else compute(width, height, rule.formula)


def check_rule(rule: TokenRule) -> None:
    """Raise ValueError naming the rule when its formula is unknown or a constant missing."""
    name = str(rule.formula.get("formula"))
    if name not in FORMULAS:
        raise ValueError(
            f"image-token rule {rule.name!r} ({rule.source}): unknown formula {name!r}; "
            f"use one of {', '.join(FORMULAS)}"
        )
    try:
        FORMULAS[name](768, 432, rule.formula)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"image-token rule {rule.name!r} ({rule.source}): constant {exc} missing or invalid"
        ) from None
