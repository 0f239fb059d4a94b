"""`hss-inspect estimate`: the requests, images, payload and image input tokens of a run,
before anything is sent.

Each selected sample's user turn is built exactly as the task builds it for the model
(`solver.user_turn_for`: the same limits, frames and re-encoding, filling the same
cache), so the figures are those of the requests the run will send. Image tokens follow
the provider's published formula (`image_tokens` in task_configs/model_limits.yaml).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from hss_inspect.core.settings import (
    DEFAULT_DATASET,
    DEFAULT_EPOCHS,
    DEFAULT_FRAMES,
    DEFAULT_MEDIA,
    DEFAULT_REVISION,
    FrameSettings,
    MediaSettings,
)
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import TaskRow, select_rows
from hss_inspect.providers.limits import ProviderRules, native_video_refusal, provider_rules


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


@dataclass
class RequestEstimate:
    task_id: str
    kind: str
    images: int
    request_bytes: int
    image_tokens: int | None
    sizes: list[tuple[int, int]]


def image_sizes(record: dict[str, Any]) -> list[tuple[int, int]]:
    if record["kind"] == "image":
        return [(record["width"], record["height"])]
    if record["kind"] == "frames":
        width, height = record["frame_size_sent"]
        return [(width, height)] * record["frame_count"]
    return []


def estimate_request(rules: ProviderRules, record: dict[str, Any], task_id: str) -> RequestEstimate:
    sizes = image_sizes(record)
    tokens = [image_tokens(rules, w, h) for w, h in sizes]
    known = None if any(t is None for t in tokens) else sum(t or 0 for t in tokens)
    return RequestEstimate(
        task_id=task_id,
        kind=record["kind"],
        images=record["payload"]["images"],
        request_bytes=record["payload"]["estimated_request_bytes"],
        image_tokens=known,
        sizes=sizes,
    )


async def _estimate_rows(
    release: Any, rows: list[TaskRow], media: MediaSettings, model: str
) -> list[RequestEstimate]:
    from hss_inspect.conditions.turn import user_turn_for

    rules = provider_rules(model)
    estimates = []
    for row in rows:
        meta = {
            "task_id": row.task_id,
            "media_path": row.media_path,
            "media_type": row.media_type,
            "prompt": row.prompt,
        }
        _, record = await user_turn_for(release, media, model, meta)
        estimates.append(estimate_request(rules, record, row.task_id))
    return estimates


def summary(estimates: list[RequestEstimate], epochs: int, model: str) -> dict[str, Any]:
    rules = provider_rules(model)
    tokens = [e.image_tokens for e in estimates]
    largest = max(estimates, key=lambda e: e.request_bytes, default=None)
    return {
        "model": model,
        "provider": rules.name,
        "tasks": len(estimates),
        "epochs": epochs,
        "requests": len(estimates) * epochs,
        "images": sum(e.images for e in estimates) * epochs,
        "payload_bytes": sum(e.request_bytes for e in estimates) * epochs,
        "largest_request_bytes": largest.request_bytes if largest else 0,
        "largest_request_task": largest.task_id if largest else None,
        "request_max_bytes": rules.request_max_bytes,
        "image_tokens": None if None in tokens else sum(t or 0 for t in tokens) * epochs,
        "image_token_formula": rules.image_tokens.get("formula"),
        "per_task": [asdict(e) for e in estimates],
    }


def render(result: dict[str, Any]) -> str:
    limit = result["request_max_bytes"]
    limit_text = f" of the {limit / 1e6:.1f} MB limit" if limit else ""
    tokens = result["image_tokens"]
    token_text = (
        f"{tokens:,} (the {result['image_token_formula']} formula)"
        if tokens is not None
        else "not estimated: this provider publishes no image-token formula"
    )
    return "\n".join(
        [
            f"{result['model']} ({result['provider']}): {result['tasks']} tasks x "
            f"{result['epochs']} epochs",
            f"requests:            {result['requests']:,}",
            f"images:              {result['images']:,}",
            f"payload:             {result['payload_bytes'] / 1e6:,.1f} MB encoded",
            f"largest request:     {result['largest_request_bytes'] / 1e6:.2f} MB{limit_text} "
            f"({result['largest_request_task']})",
            f"image input tokens:  {token_text}",
            "Text tokens, the judge's calls and output tokens come on top.",
        ]
    )


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser(
        "estimate",
        help="requests, images, payload MB and image tokens of a run, before sending anything",
    )
    parser.add_argument(
        "--model", required=True, help="the model under evaluation, as Inspect names it"
    )
    parser.add_argument("--dataset", default=DEFAULT_DATASET)
    parser.add_argument("--revision", default=DEFAULT_REVISION)
    parser.add_argument("--media", default="all", choices=["all", "image", "video"])
    parser.add_argument("--domains", default=None)
    parser.add_argument("--subdomains", default=None)
    parser.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS)
    parser.add_argument("--fps", type=float, default=DEFAULT_FRAMES.fps)
    parser.add_argument("--max-frames", type=int, default=DEFAULT_FRAMES.max_frames)
    parser.add_argument("--frame-side", type=int, default=DEFAULT_FRAMES.frame_side)
    parser.add_argument("--max-images", type=int, default=DEFAULT_FRAMES.max_images)
    parser.add_argument("--frame-bytes-budget", type=int, default=DEFAULT_MEDIA.frame_bytes_budget)
    parser.add_argument("--image-max-side", type=int, default=DEFAULT_MEDIA.image_max_side)
    parser.add_argument("--image-max-bytes", type=int, default=DEFAULT_MEDIA.image_max_bytes)
    parser.add_argument(
        "--native-video", default=DEFAULT_MEDIA.native_video, choices=["auto", "true", "false"]
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def estimate_command(args: argparse.Namespace) -> int:
    media = MediaSettings(
        frames=FrameSettings(
            fps=args.fps,
            max_frames=args.max_frames,
            frame_side=args.frame_side,
            max_images=args.max_images,
        ),
        frame_bytes_budget=args.frame_bytes_budget,
        image_max_side=args.image_max_side,
        image_max_bytes=args.image_max_bytes,
        native_video=args.native_video,
    )
    refusal = native_video_refusal(media, args.model)
    if refusal is not None:
        raise ValueError(refusal)
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    estimates = asyncio.run(_estimate_rows(release, rows, media, args.model))
    result = summary(estimates, args.epochs, args.model)
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0
