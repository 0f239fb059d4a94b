"""`hss-inspect estimate`: the requests, images, payload and image input tokens of a run,
before anything is sent.

Each selected sample's user turn is built exactly as the task builds it for the model
(`conditions.turn.user_turn_for`: the same limits, frames and re-encoding, filling the same
cache), so the figures are those of the requests the run will send. Image tokens follow
the provider's published formula (`image_tokens` in task_configs/model_limits.yaml).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict, dataclass
from typing import Any

from hss_inspect.core.errors import SetupError
from hss_inspect.core.options import FRAME_OPTIONS, SELECTION_OPTIONS, add_flags
from hss_inspect.core.settings import (
    DEFAULT_EPOCHS,
    FrameSettings,
    MediaSettings,
)
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import TaskRow, select_rows
from hss_inspect.providers.limits import ProviderRules, native_video_refusal, provider_rules
from hss_inspect.providers.tokens import image_tokens


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


ESTIMATE_OPTIONS = (
    *SELECTION_OPTIONS,
    *FRAME_OPTIONS,
    "frame_bytes_budget",
    "image_max_side",
    "image_max_bytes",
    "native_video",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", required=True, help="the model under evaluation, as Inspect names it"
    )
    parser.add_argument(
        "--epochs", type=int, default=DEFAULT_EPOCHS, help="attempts per task, as in the run"
    )
    add_flags(parser, ESTIMATE_OPTIONS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
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
        raise SetupError(refusal)
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    estimates = asyncio.run(_estimate_rows(release, rows, media, args.model))
    result = summary(estimates, args.epochs, args.model)
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0
