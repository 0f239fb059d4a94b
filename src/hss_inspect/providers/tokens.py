"""Image input tokens by each provider's published formula (`image_tokens` of a provider in
task_configs/model_limits.yaml names the formula and gives its constants)."""

from __future__ import annotations

import math
from typing import Any

from hss_inspect.providers.limits import ProviderRules


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
        # keep whole patches along the width, as the guide's worked example does
        width_patches = width * shrink / patch
        shrink *= math.floor(width_patches) / width_patches
        patches = math.ceil(width * shrink / patch) * math.ceil(height * shrink / patch)
    return math.ceil(patches * float(formula.get("multiplier", 1.0)))


def gemini_tokens(width: int, height: int, formula: dict[str, Any]) -> int:
    """Gemini API tokens page: both sides within 384 px cost 258 tokens; larger images are
    cut into 768x768 tiles of 258 tokens each."""
    small, tile = int(formula["small_side"]), int(formula["tile"])
    per = int(formula["tokens_per_tile"])
    if width <= small and height <= small:
        return per
    return math.ceil(width / tile) * math.ceil(height / tile) * per


FORMULAS = {
    "anthropic": anthropic_tokens,
    "openai_patches": openai_patch_tokens,
    "gemini": gemini_tokens,
}


def image_tokens(rules: ProviderRules, width: int, height: int) -> int | None:
    formula = rules.image_tokens
    compute = FORMULAS.get(str(formula.get("formula")))
    return None if compute is None else compute(width, height, formula)
