"""The cost in dollars of `hss-inspect estimate`: the prices Inspect would charge, found
as Inspect finds them (a `--model-cost-config` file in its format, else its model
database), applied to the run's estimated input tokens (the arithmetic is
`providers.prices`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hss_inspect.core.errors import SetupError
from hss_inspect.data.rows import TaskRow
from hss_inspect.providers.context import info_name
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
from hss_inspect.report.paper import published_rows, table1_row


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


def add_cost_config_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`--model-cost-config FILE`, in Inspect's format and with its default (the variable
    `inspect eval` reads); `what` the prices are for."""
    parser.add_argument(
        "--model-cost-config",
        metavar="FILE",
        default=os.environ.get("INSPECT_EVAL_MODEL_COST_CONFIG"),
        help=f"prices for {what}, as given to inspect eval --model-cost-config (YAML or JSON: "
        "model: {input, output, input_cache_write, input_cache_read} in $ per million "
        "tokens); default: $INSPECT_EVAL_MODEL_COST_CONFIG",
    )


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

    # A name the database lacks makes Inspect create the provider to ask it: looked up by
    # `info_name`, a provider that could start a server or load weights is never created,
    # and a client's start-up notice goes to stderr, out of the figures (and of --json).
    with contextlib.redirect_stdout(sys.stderr):
        info = get_model_info(info_name(model))
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
    requests: Sequence[tuple[str, int]],
    result: dict[str, Any],
    model: Pricing,
    grader: Pricing,
    answer_tokens: int | None = None,
) -> dict[str, Any]:
    """The run's input charges at the prices Inspect would use, with the assumptions made;
    `requests` holds each task's kind of request and the UTF-8 bytes of its text."""
    epochs = result["epochs"]
    answer, answer_source = answer_length(model.model, answer_tokens)
    typical = "x" * (answer * TEXT_BYTES_PER_TOKEN)
    judge_tokens = sum(text_tokens(judge_request_bytes(row, typical)) for row in rows)
    text = sum(text_tokens(text_bytes) for _, text_bytes in requests)
    charges = [
        Charge("media", model.model, "input", result["image_tokens"], model.price),
        Charge("question text", model.model, "input", text * epochs, model.price),
        Charge("judge input", grader.model, "input", judge_tokens * epochs, grader.price),
    ]
    native = sum(kind == "native_video" for kind, _ in requests) * epochs
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
        "tokenizer is used); image tokens: by the formula named above",
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
