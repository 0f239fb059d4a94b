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
from hss_inspect.core.markdown import aligned
from hss_inspect.data.rows import TaskRow
from hss_inspect.providers.batching import batch_rules_for
from hss_inspect.providers.caching import (
    CacheRules,
    Gap,
    Pace,
    caching_rules_for,
    default_attempts,
    inspect_default_ttl,
    next_attempt_gap,
    offered_ttls,
    planned_attempts,
    write_rate,
)
from hss_inspect.providers.context import info_name
from hss_inspect.providers.prices import (
    TEXT_BYTES_PER_TOKEN,
    Charge,
    InputSplit,
    Price,
    attempts_split,
    dollars,
    dollars_text,
    input_dollars,
    price_text,
    priced_by_name,
    read_cost_config,
    text_tokens,
    total_dollars,
)
from hss_inspect.report.paper import published_rows, table1_row
from hss_inspect.report.pilot import Pilot


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


# Without a pilot, the next attempt of a task is assumed to come this long after the one
# before (a full run's epoch takes tens of minutes; a pilot measures it: --pilot).
DEFAULT_ATTEMPT_GAP_MINUTES = 20.0
# Inspect's default `max_connections`, which bounds the sample-epochs running at once.
DEFAULT_CONNECTIONS = 10


@dataclass(frozen=True)
class TaskCost:
    """One task's request as the estimate sizes it: its media type, kind of request, the
    tokens of its user turn (all of it shared by the attempts; None: not counted) and its
    text's UTF-8 bytes."""

    media_type: str
    kind: str
    prefix: int | None
    text_bytes: int


@dataclass(frozen=True)
class Measures:
    """The per-attempt figures the bill scales up, each with where it comes from."""

    output: dict[str, float]  # media type -> output tokens, thinking included
    output_source: str
    reasoning: dict[str, float | None]
    answer: int
    answer_source: str
    judge_output: float | None
    judge_output_source: str
    gap: Gap
    first_wave: int


def measures(
    model: str,
    tasks: Sequence[TaskCost],
    pilot: Pilot | None,
    given: Mapping[str, Any],
) -> Measures:
    """The figures of a run of `model` from a pilot log, else from the numbers given
    (`output_tokens`, `judge_output_tokens`, `answer_tokens`, `attempt_gap`,
    `connections`), else from Table 1 and the stated defaults."""
    media = sorted({t.media_type for t in tasks}) or ["image"]
    output, output_source, reasoning = _output(model, media, pilot, given.get("output_tokens"))
    answer, answer_source = _answer(model, pilot, given.get("answer_tokens"), output, reasoning)
    judge_output, judge_source = _judge_output(pilot, given.get("judge_output_tokens"))
    connections = given.get("connections") or (
        max(1, round(pilot.concurrency)) if pilot else DEFAULT_CONNECTIONS
    )
    gap = _gap(len(tasks), pilot, given.get("attempt_gap"), connections)
    return Measures(
        output, output_source, reasoning, answer, answer_source, judge_output, judge_source,
        gap, connections,
    )  # fmt: skip


def _output(
    model: str, media: list[str], pilot: Pilot | None, given: int | None
) -> tuple[dict[str, float], str, dict[str, float | None]]:
    if given is not None:
        return {m: float(given) for m in media}, "--output-tokens", {m: None for m in media}
    if pilot is not None:
        source = f"the pilot's {pilot.attempts} attempts ({pilot.source})"
        reasoning = {m: pilot.reasoning.get(m) for m in media}
        return {m: pilot.output_for(m) for m in media}, source, reasoning
    row = table1_row(model)
    if row is not None and row.values["answer_tokens"] is not None:
        think = row.values["think_tokens"]
        total = float(row.values["answer_tokens"]) + float(think or 0)
        return (
            {m: total for m in media},
            f"Table 1's means for {row.label}",
            {m: think for m in media},
        )
    counts = [
        float(r.values["answer_tokens"]) + float(r.values["think_tokens"] or 0)
        for r in published_rows()
        if r.kind == "model" and r.values["answer_tokens"] is not None
    ]
    median = statistics.median(counts)
    return (
        {m: median for m in media},
        f"the median over Table 1's {len(counts)} models",
        {m: None for m in media},
    )


def _answer(
    model: str,
    pilot: Pilot | None,
    given: int | None,
    output: Mapping[str, float],
    reasoning: Mapping[str, float | None],
) -> tuple[int, str]:
    """The length of the answer the judge reads: given, the pilot's output less its
    reasoning, else Table 1's answer tokens."""
    if given is None and pilot is not None and all(r is not None for r in reasoning.values()):
        answers = [output[m] - (reasoning[m] or 0.0) for m in output]
        return max(1, round(statistics.fmean(answers))), "the pilot's answers"
    return answer_length(model, given)


def _judge_output(pilot: Pilot | None, given: int | None) -> tuple[float | None, str]:
    if given is not None:
        return float(given), "--judge-output-tokens"
    if pilot is not None and pilot.judge_output is not None:
        return pilot.judge_output, f"the pilot's judge ({pilot.source})"
    return None, "not counted: give --pilot LOG or --judge-output-tokens N"


def _gap(tasks: int, pilot: Pilot | None, minutes: float | None, connections: int) -> Gap:
    if minutes is not None:
        return Gap(minutes * 60.0, f"--attempt-gap {minutes:g}")
    if pilot is not None and pilot.durations:
        pace = Pace(tasks, connections, pilot.durations)
        gap = next_attempt_gap(pace, None, False, 0.0)
        typical = pace.typical_duration() or 0.0
        return Gap(
            gap.seconds,
            f"the pilot's pace: {tasks} tasks x {typical:.0f} s a sample-epoch / "
            f"{connections} at once",
        )
    return Gap(
        DEFAULT_ATTEMPT_GAP_MINUTES * 60.0,
        "assumed: a pilot measures it (--pilot LOG), or give --attempt-gap MINUTES",
    )


def cost_estimate(
    rows: list[TaskRow],
    tasks: Sequence[TaskCost],
    result: dict[str, Any],
    model: Pricing,
    grader: Pricing,
    figures: Measures,
) -> dict[str, Any]:
    """The run's bill at the prices Inspect would use: each charge with caching off, then
    the whole bill under each caching strategy, with the assumptions made."""
    epochs = result["epochs"]
    typical = "x" * (figures.answer * TEXT_BYTES_PER_TOKEN)
    judge_in = sum(text_tokens(judge_request_bytes(row, typical)) for row in rows) * epochs
    judge_out = (
        None if figures.judge_output is None else round(figures.judge_output * len(rows) * epochs)
    )
    text = sum(text_tokens(t.text_bytes) for t in tasks)
    charges = [
        Charge("media", model.model, "input", result["image_tokens"], model.price),
        Charge("question text", model.model, "input", text * epochs, model.price),
        *output_charges(tasks, epochs, model, figures),
        Charge("judge input", grader.model, "input", judge_in, grader.price),
        Charge("judge output", grader.model, "output", judge_out, grader.price),
    ]
    native = sum(t.kind == "native_video" for t in tasks) * epochs
    judge = [c for c in charges if c.what.startswith("judge")]
    uncounted = [c.what for c in charges if c.tokens is None]
    counted = [c for c in charges if c.tokens is not None]
    return {
        "charges": [c.as_dict() for c in charges],
        # over what is counted; `lower_bound` says when something is not
        "total_dollars": total_dollars(counted) if counted else None,
        "lower_bound": bool(native or uncounted),
        "missing": [p.missing() for p in _unique(model, grader) if p.price is None],
        "judge_calls": len(rows) * epochs,
        "native_clips_uncounted": native,
        "uncounted": uncounted,
        "strategies": strategy_rows(tasks, epochs, model, figures, judge),
        "warnings": [w for p in _unique(model, grader) if (w := p.warning())],
        "assumptions": cost_assumptions(figures, native),
    }


def output_charges(
    tasks: Sequence[TaskCost], epochs: int, model: Pricing, figures: Measures
) -> list[Charge]:
    """The model's output (answers and thinking), one charge per media type."""
    charges = []
    for media in sorted(figures.output):
        count = sum(t.media_type == media for t in tasks)
        if count:
            tokens = round(figures.output[media] * count * epochs)
            charges.append(Charge(f"output, {media}", model.model, "output", tokens, model.price))
    return charges


# (name, sent through the batch API, who decides the caching)
STRATEGIES = (
    ("caching off", False, "off"),
    ("Inspect's default", False, "inspect"),
    ("the plan", False, "plan"),
    ("batch", True, "inspect"),
    ("batch + the plan", True, "plan"),
)


def strategy_rows(
    tasks: Sequence[TaskCost],
    epochs: int,
    model: Pricing,
    figures: Measures,
    judge: Sequence[Charge],
) -> list[dict[str, Any]]:
    """Each strategy's whole bill: the model's input split by how it is billed, its output,
    the judge's calls (never batched: the batch setting is the model's), and the total."""
    rules = caching_rules_for(model.model)
    batch = batch_rules_for(model.model)
    output = sum(c.tokens or 0 for c in output_charges(tasks, epochs, model, figures))
    judge_dollars = total_dollars(list(judge))
    rows: list[dict[str, Any]] = []
    for name, batched, who in STRATEGIES:
        if batched and not batch.available:
            rows.append({"strategy": name, "note": f"{batch.name}: no batch API"})
            continue
        split = strategy_split(tasks, epochs, rules, model.model, figures, who, batched)
        multiplier = (batch.price_multiplier or 1.0) if batched else 1.0
        rows.append(_row(name, split, output, model.price, rules, multiplier, judge_dollars))
    off = rows[0].get("total_dollars")
    for row in rows:
        total = row.get("total_dollars")
        row["vs_off"] = None if total is None or not off else total / off
    return rows


def strategy_split(
    tasks: Sequence[TaskCost],
    epochs: int,
    rules: CacheRules,
    model: str,
    figures: Measures,
    who: str,
    batched: bool,
) -> InputSplit:
    """The model's input over every task and attempt, as the strategy caches it."""
    ttls = offered_ttls(rules, model)
    if batched and rules.batch_ttl is not None:
        ttls = [t for t in ttls if t.name == rules.batch_ttl]
    default = inspect_default_ttl(rules)
    free = [t.name for t in rules.ttls if t.write <= 1.0]
    total = InputSplit()
    for index, task in enumerate(tasks):
        prefix = task.prefix or 0
        if who == "off":
            attempts: list[tuple[str, str | None]] = [("none", None)] * epochs
        elif who == "inspect":
            name = default.name if default else None
            attempts = [
                (a, name)
                for a in default_attempts(rules, default, task.prefix, epochs, figures.gap)
            ]
        else:
            paced = index >= figures.first_wave
            decided = planned_attempts(rules, ttls, task.prefix, epochs, figures.gap, paced)
            attempts = [(d.action, d.ttl) for d in decided]
        total = total + attempts_split(prefix, attempts, free)
    return total


def _row(
    name: str,
    split: InputSplit,
    output: int,
    price: Price | None,
    rules: CacheRules,
    multiplier: float,
    judge: float | None,
) -> dict[str, Any]:
    rates = {t.name: write_rate(rules, t.name) for t in rules.ttls}
    row: dict[str, Any] = {
        "strategy": name,
        "fresh": split.fresh,
        "written": dict(split.written),
        "read": split.read,
        "price_multiplier": multiplier,
    }
    if price is None:
        return row
    row["input_dollars"] = input_dollars(split, price, rates) * multiplier
    row["output_dollars"] = dollars(output, price.output) * multiplier
    row["judge_dollars"] = judge
    # without the judge's figure, the model's part alone (a lower bound, said so)
    row["total_dollars"] = row["input_dollars"] + row["output_dollars"] + (judge or 0.0)
    row["lower_bound"] = judge is None
    return row


def _unique(*pricings: Pricing) -> list[Pricing]:
    return list({p.model: p for p in pricings}.values())


def cost_assumptions(figures: Measures, native: int) -> list[str]:
    lines = [
        f"text tokens: UTF-8 bytes / {TEXT_BYTES_PER_TOKEN} (typical for English; no "
        "tokenizer is used); image tokens: by the formula named above",
        "output per attempt: "
        + ", ".join(f"{m} {v:,.0f}" for m, v in sorted(figures.output.items()))
        + f" tokens, thinking included ({figures.output_source})",
        f"the judge reads an answer of {figures.answer:,} tokens ({figures.answer_source}); "
        + (
            f"it replies with {figures.judge_output:,.0f} tokens ({figures.judge_output_source})"
            if figures.judge_output is not None
            else f"its reply is {figures.judge_output_source}"
        ),
        "one judge call per attempt with an answer; re-asks after an unreadable reply "
        "(-T judge_retries) and retries after errors are not included",
        f"caching: a task's next attempt comes {_minutes(figures.gap.seconds)} later "
        f"({figures.gap.source}); the first attempts of the first {figures.first_wave} tasks "
        "go before any finishes, so the plan writes nothing for them; the cached prefix is "
        "the whole user turn; in batch mode the cache hits of a direct run are counted (the "
        "providers call them best effort)",
    ]
    if native:
        lines.append(
            f"{native} clip request(s) send the clip whole and are not counted: the "
            "provider counts a clip's tokens its own way, so the media figure is a lower bound"
        )
    return lines


def _minutes(seconds: float | None) -> str:
    return "an unknown time" if seconds is None else f"about {seconds / 60:.0f} min"


def cost_lines(cost: dict[str, Any]) -> list[str]:
    """The bill block of the printed estimate: one line a charge with caching off, the
    total, the whole bill under each caching strategy, then the assumptions one a line; a
    charge without a price or a count says so and has no dollars."""
    lines = ["the bill with caching off, at the prices Inspect would use:"]
    for charge in cost["charges"]:
        lines.append(f"  {charge['what'] + ':':<15}{_charge_text(charge, cost)}")
    lines.append(f"  {'total:':<15}{_total_text(cost)}")
    lines += [f"  {missing}" for missing in cost["missing"]]
    lines += [f"  warning: {warning}" for warning in cost["warnings"]]
    lines += strategy_lines(cost["strategies"])
    return lines + ["assumptions:"] + [f"  {a}" for a in cost["assumptions"]]


def strategy_lines(rows: list[dict[str, Any]]) -> list[str]:
    header = [
        "strategy", "input", "cache writes", "cache reads", "input cost", "output cost",
        "judge cost", "total", "vs off",
    ]  # fmt: skip
    table = [header]
    for row in rows:
        if "note" in row:
            table.append([row["strategy"], row["note"], *[""] * (len(header) - 2)])
            continue
        written = sum(row["written"].values())
        ttls = "/".join(sorted(row["written"]))
        table.append(
            [
                row["strategy"],
                f"{row['fresh']:,}",
                f"{written:,}" + (f" ({ttls})" if ttls else ""),
                f"{row['read']:,}",
                *[_money(row.get(key)) for key in ("input_dollars", "output_dollars")],
                _money(row.get("judge_dollars")),
                ("at least " if row.get("lower_bound") else "") + _money(row.get("total_dollars")),
                "-" if row.get("vs_off") is None else f"{row['vs_off']:.2f}x",
            ]
        )
    return ["the whole bill by caching strategy (the model's input in tokens):", *aligned(table)]


def _money(amount: float | None) -> str:
    return "-" if amount is None else dollars_text(amount)


def _charge_text(charge: dict[str, Any], cost: dict[str, Any]) -> str:
    tokens = charge["tokens"]
    if tokens is None:
        why = (
            "this provider publishes no image-token formula"
            if charge["what"] == "media"
            else "give --pilot LOG or --judge-output-tokens N"
        )
        return f"not counted ({why})"
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
    if cost["missing"]:
        return "not known: give the prices in --model-cost-config FILE (Inspect's format)"
    if cost["total_dollars"] is None:
        return "not known: the media are not counted"
    left_out = f" ({', '.join(cost['uncounted'])} not counted)" if cost["uncounted"] else ""
    return (
        ("at least " if cost["lower_bound"] else "")
        + dollars_text(cost["total_dollars"])
        + left_out
    )
