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
import contextlib
import json
import os
import statistics
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
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
from hss_inspect.providers.prices import (
    TEXT_BYTES_PER_TOKEN,
    Charge,
    Price,
    dollars_text,
    price_text,
    priced_by_name,
    read_cost_config,
    text_tokens,
    total_dollars,
)
from hss_inspect.providers.tokens import image_tokens
from hss_inspect.report.paper import judges, published_rows, table1_row


@dataclass
class RequestEstimate:
    task_id: str
    kind: str
    images: int
    request_bytes: int
    image_tokens: int | None
    sizes: list[tuple[int, int]]
    text_bytes: int = 0


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
        text_bytes=record["payload"]["text_bytes"],
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
    lines = [
        f"{result['model']} ({result['provider']}): {result['tasks']} tasks x "
        f"{result['epochs']} epochs",
        f"requests:            {result['requests']:,}",
        f"images:              {result['images']:,}",
        f"payload:             {result['payload_bytes'] / 1e6:,.1f} MB encoded",
        f"largest request:     {result['largest_request_bytes'] / 1e6:.2f} MB{limit_text} "
        f"({result['largest_request_task']})",
        f"image input tokens:  {token_text}",
    ]
    return "\n".join(lines + (cost_lines(result["cost"]) if "cost" in result else []))


# ---- cost in dollars: the prices Inspect would charge (providers.prices) ---------------


@dataclass(frozen=True)
class Pricing:
    """A model's price as Inspect would find it, and whether its database knows the model
    (`--model-cost-config` refuses an entry for a model it does not know)."""

    model: str
    price: Price | None
    in_database: bool

    def warning(self) -> str | None:
        if self.price is None or self.in_database or self.price.source == DATABASE:
            return None
        return (
            f"{self.model} is not in Inspect's model database, so `inspect eval "
            f"--model-cost-config` stops with \"Model '{self.model}' not found.\"; set "
            f'its price in Python instead: set_model_info("{self.model}", '
            "ModelInfo(cost=ModelCost(...)))"
        )

    def missing(self) -> str:
        listed = "lists it without a price" if self.in_database else "does not list it"
        return f"no price known for {self.model} (Inspect's model database {listed})"


DATABASE = "Inspect's model database"


def load_cost_config(path: str | None) -> dict[str, Price]:
    """The prices of a `--model-cost-config` file (none given: no prices)."""
    if not path:
        return {}
    file = Path(path)
    if not file.is_file():
        raise SetupError(f"--model-cost-config {path}: no such file")
    return read_cost_config(file.read_text(encoding="utf-8"), path)


def inspect_pricing(model: str, prices: Mapping[str, Price]) -> Pricing:
    """The price Inspect would charge `model`: the file's entry of that name (Inspect puts
    those over its database), else its model database's."""
    from inspect_ai.model import get_model_info

    # A name the database lacks makes Inspect create the provider to ask it, and its
    # start-up notice is printed: keep it out of the figures (and of --json).
    with contextlib.redirect_stdout(sys.stderr):
        info = get_model_info(model)
    price = priced_by_name(prices, model)
    if price is None and info is not None and info.cost is not None:
        price = Price(**info.cost.model_dump(), source=DATABASE)
    return Pricing(model, price, info is not None)


def answer_length(model: str, given: int | None) -> tuple[int, str]:
    """Tokens of the answer the judge reads, and where the figure comes from."""
    if given is not None:
        return given, "--answer-tokens"
    row = table1_row(model)
    if row is not None and row.values["answer_tokens"] is not None:
        return round(row.values["answer_tokens"]), f"the mean Table 1 gives {row.label}"
    published = [r.values["answer_tokens"] for r in published_rows() if r.kind == "model"]
    counts = sorted(v for v in published if v is not None)
    return round(statistics.median(counts)), f"the median over Table 1's {len(counts)} models"


def judge_request_bytes(row: TaskRow, answer: str) -> int:
    """UTF-8 bytes of the judge's system and user messages when it grades `answer`."""
    from hss_inspect.grading.judge import judge_prompts, render_judge_request

    prompts = judge_prompts()
    request = render_judge_request(
        prompts, row.prompt, row.media_type, row.golden_response, list(row.criteria), answer
    )
    return len(prompts.system.encode()) + len(request.encode())


def cost_estimate(
    rows: list[TaskRow],
    estimates: list[RequestEstimate],
    result: dict[str, Any],
    model: Pricing,
    grader: Pricing,
    answer_tokens: int | None = None,
) -> dict[str, Any]:
    """The run's input charges at the prices Inspect would use, with the assumptions made."""
    epochs = result["epochs"]
    answer, answer_source = answer_length(model.model, answer_tokens)
    typical = "x" * (answer * TEXT_BYTES_PER_TOKEN)
    judge_tokens = sum(text_tokens(judge_request_bytes(row, typical)) for row in rows)
    text = sum(text_tokens(e.text_bytes) for e in estimates)
    charges = [
        Charge("media", model.model, "input", result["image_tokens"], model.price),
        Charge("question text", model.model, "input", text * epochs, model.price),
        Charge("judge input", grader.model, "input", judge_tokens * epochs, grader.price),
    ]
    native = sum(e.kind == "native_video" for e in estimates) * epochs
    return {
        "charges": [c.as_dict() for c in charges],
        "total_dollars": total_dollars(charges),
        "missing": [p.missing() for p in _unique(model, grader) if p.price is None],
        "judge_calls": len(rows) * epochs,
        "native_clips_uncounted": native,
        "warnings": [w for p in _unique(model, grader) if (w := p.warning())],
        "assumptions": cost_assumptions(answer, answer_source, native),
    }


def _unique(*pricings: Pricing) -> list[Pricing]:
    return list({p.model: p for p in pricings}.values())


def cost_assumptions(answer: int, answer_source: str, native: int) -> list[str]:
    lines = [
        f"text tokens: UTF-8 bytes / {TEXT_BYTES_PER_TOKEN} (typical for English; no "
        "tokenizer is used); image tokens: the provider's formula",
        f"the judge reads an answer of {answer:,} tokens ({answer_source})",
        "one judge call per attempt with an answer; re-asks after an unreadable reply "
        "(-T judge_retries) are not included",
        "not included: the model's answers and thinking, the judge's reply and thinking "
        "(output tokens), retries after errors",
    ]
    if native:
        lines.append(
            f"{native} clip request(s) send the clip whole and are not counted: the "
            "provider counts a clip's tokens its own way, so the media figure is a lower bound"
        )
    return lines


def cost_lines(cost: dict[str, Any]) -> list[str]:
    """The cost block of the printed estimate: one line a charge, the total, the
    assumptions one a line; a charge without a price says so and has no dollars."""
    lines = ["input cost, at the prices Inspect would use:"]
    for charge in cost["charges"]:
        lines.append(f"  {charge['what'] + ':':<15}{_charge_text(charge, cost)}")
    lines.append(f"  {'total:':<15}{_total_text(cost)}")
    lines += [f"  {missing}" for missing in cost["missing"]]
    lines += [f"  warning: {warning}" for warning in cost["warnings"]]
    return lines + ["assumptions:"] + [f"  {a}" for a in cost["assumptions"]]


def _charge_text(charge: dict[str, Any], cost: dict[str, Any]) -> str:
    tokens = charge["tokens"]
    if tokens is None:
        return "not counted (this provider publishes no image-token formula)"
    kind = "image tokens" if charge["what"] == "media" else "tokens"
    calls = f"{cost['judge_calls']:,} calls, " if charge["what"] == "judge input" else ""
    counted = f"{calls}{tokens:,} {kind}"
    if charge["price_per_million"] is None:
        return f"{counted} ({charge['model']}: no price known)"
    return (
        f"{counted} x {price_text(charge['price_per_million'])} = "
        f"{dollars_text(charge['dollars'])} ({charge['model']}, {charge['price_source']})"
    )


def _total_text(cost: dict[str, Any]) -> str:
    total = cost["total_dollars"]
    if total is not None:
        return ("at least " if cost["native_clips_uncounted"] else "") + dollars_text(total)
    if cost["missing"]:
        return "not known: give the prices in --model-cost-config FILE (Inspect's format)"
    return "not known: the media are not counted"


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
    parser.add_argument(
        "--model-cost-config",
        metavar="FILE",
        default=os.environ.get("INSPECT_EVAL_MODEL_COST_CONFIG"),
        help="prices as given to inspect eval --model-cost-config (YAML or JSON: model: "
        "{input, output, input_cache_write, input_cache_read} in $ per million tokens); "
        "default: $INSPECT_EVAL_MODEL_COST_CONFIG",
    )
    parser.add_argument(
        "--grader",
        metavar="MODEL",
        default=judges()[0].inspect_model,
        help="the judge (--model-role grader=...), priced for its calls "
        "(default: the paper's primary judge, %(default)s)",
    )
    parser.add_argument(
        "--answer-tokens",
        type=int,
        metavar="N",
        help="length of the answer the judge reads (default: Table 1's mean for the "
        "model, else the median over Table 1's models)",
    )
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
    prices = load_cost_config(args.model_cost_config)
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    estimates = asyncio.run(_estimate_rows(release, rows, media, args.model))
    result = summary(estimates, args.epochs, args.model)
    model, grader = (inspect_pricing(m, prices) for m in (args.model, args.grader))
    result["cost"] = cost_estimate(rows, estimates, result, model, grader, args.answer_tokens)
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0
