"""The bill of a run before it is sent: each charge with caching off, then the whole bill
under each caching strategy, from the requests the estimate sized, the per-attempt figures
of a pilot log (or the numbers given, or Table 1) and the prices Inspect would use. Pure
arithmetic: the requests, the pilot and the prices are read elsewhere."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from hss_inspect.data.rows import TaskRow
from hss_inspect.providers.batching import NO_BATCH, batch_rules_for
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
from hss_inspect.providers.price_lookup import Pricing
from hss_inspect.providers.prices import (
    TEXT_BYTES_PER_TOKEN,
    Charge,
    InputSplit,
    Price,
    attempts_split,
    dollars,
    input_dollars,
    text_tokens,
    total_dollars,
)
from hss_inspect.report.paper import published_rows, table1_row
from hss_inspect.report.pilot import Pilot

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
class Given:
    """The per-attempt figures a user gave on the command line (None: not given)."""

    output_tokens: int | None = None
    judge_output_tokens: int | None = None
    answer_tokens: int | None = None
    attempt_gap: float | None = None  # minutes
    max_connections: int | None = None


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


def measures(model: str, tasks: Sequence[TaskCost], pilot: Pilot | None, given: Given) -> Measures:
    """The figures of a run of `model` from the numbers given, else a pilot log, else
    Table 1 and the stated defaults."""
    media = sorted({t.media_type for t in tasks}) or ["image"]
    output, output_source, reasoning = _output(model, media, pilot, given.output_tokens)
    answer, answer_source = _answer(model, pilot, given.answer_tokens, output, reasoning)
    judge_output, judge_source = _judge_output(pilot, given.judge_output_tokens)
    connections = given.max_connections or (
        max(1, round(pilot.concurrency)) if pilot else DEFAULT_CONNECTIONS
    )
    gap = _gap(len(tasks), pilot, given.attempt_gap, connections)
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


def judge_request_bytes(row: TaskRow, answer: str) -> int:
    """UTF-8 bytes of the judge's system and user messages when it grades `answer`."""
    from hss_inspect.grading.judge import judge_prompts, render_judge_request

    prompts = judge_prompts()
    request = render_judge_request(prompts, row.graded, answer)
    return len(prompts.system.encode()) + len(request.encode())


@dataclass(frozen=True)
class Strategy:
    """A way of running the model: through the batch API or not, and who decides its
    prompt caching (`off`: nothing is written; `inspect`: Inspect's defaults; `plan`: the
    package's cache plan)."""

    name: str
    batched: bool
    caching: Literal["off", "inspect", "plan"]


STRATEGIES = (
    Strategy("caching off", False, "off"),
    Strategy("Inspect's default", False, "inspect"),
    Strategy("the plan", False, "plan"),
    Strategy("batch", True, "inspect"),
    Strategy("batch + the plan", True, "plan"),
)


@dataclass(frozen=True)
class StrategyBill:
    """One strategy's whole bill: the model's input split by how it is billed, and, where
    the model's price is known, the dollars of its input, its output and the judge's calls
    (never batched: the batch setting is the model's). `note` says why a strategy has no
    bill at all. Where the model's image tokens are not known (no formula), the split is
    not known either (None), save with caching off, where it is at least the question
    text the bill counts (`input_lower_bound`)."""

    strategy: str
    note: str | None = None
    fresh: int | None = 0
    written: dict[str, int] | None = field(default_factory=dict)
    read: int | None = 0
    price_multiplier: float = 1.0
    input_dollars: float | None = None
    output_dollars: float | None = None
    judge_dollars: float | None = None  # the judge's charges that are counted
    judge_lower_bound: bool = False  # some of the judge's charges are not counted
    # the counted parts; `lower_bound` when a part is not counted or has no price
    total_dollars: float | None = None
    lower_bound: bool = False
    vs_off: float | None = None
    input_lower_bound: bool = False

    @property
    def input_known(self) -> bool:
        return self.fresh is not None

    def as_dict(self) -> dict[str, Any]:
        if self.note is not None:
            return {"strategy": self.strategy, "note": self.note, "vs_off": self.vs_off}
        row: dict[str, Any] = {
            "strategy": self.strategy,
            "fresh": self.fresh,
            "written": None if self.written is None else dict(self.written),
            "read": self.read,
            "input_lower_bound": self.input_lower_bound,
            "price_multiplier": self.price_multiplier,
        }
        if self.output_dollars is not None:
            row |= {
                "input_dollars": self.input_dollars,
                "output_dollars": self.output_dollars,
                "judge_dollars": self.judge_dollars,
                "judge_lower_bound": self.judge_lower_bound,
                "total_dollars": self.total_dollars,
                "lower_bound": self.lower_bound,
            }
        return row | {"vs_off": self.vs_off}


@dataclass(frozen=True)
class CostEstimate:
    """The run's bill at the prices Inspect would use, with the assumptions made."""

    charges: tuple[Charge, ...]
    total_dollars: float | None  # over what is counted; `lower_bound` says when not all is
    lower_bound: bool
    missing: tuple[str, ...]  # models without a price
    judge_calls: int
    native_clips_uncounted: int
    uncounted: tuple[str, ...]  # charges whose tokens are not counted
    strategies: tuple[StrategyBill, ...]
    warnings: tuple[str, ...]
    assumptions: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "charges": [c.as_dict() for c in self.charges],
            "total_dollars": self.total_dollars,
            "lower_bound": self.lower_bound,
            "missing": list(self.missing),
            "judge_calls": self.judge_calls,
            "native_clips_uncounted": self.native_clips_uncounted,
            "uncounted": list(self.uncounted),
            "strategies": [s.as_dict() for s in self.strategies],
            "warnings": list(self.warnings),
            "assumptions": list(self.assumptions),
        }


def cost_estimate(
    rows: Sequence[TaskRow],
    tasks: Sequence[TaskCost],
    epochs: int,
    image_tokens: int | None,
    model: Pricing,
    grader: Pricing,
    figures: Measures,
) -> CostEstimate:
    """Each charge with caching off, then the whole bill under each caching strategy."""
    typical = "x" * (figures.answer * TEXT_BYTES_PER_TOKEN)
    judge_in = sum(text_tokens(judge_request_bytes(row, typical)) for row in rows) * epochs
    judge_out = (
        None if figures.judge_output is None else round(figures.judge_output * len(rows) * epochs)
    )
    text = sum(text_tokens(t.text_bytes) for t in tasks)
    charges = (
        Charge("media", model.model, "input", image_tokens, model.price),
        Charge("question text", model.model, "input", text * epochs, model.price),
        *output_charges(tasks, epochs, model, figures),
        Charge("judge input", grader.model, "input", judge_in, grader.price),
        Charge("judge output", grader.model, "output", judge_out, grader.price),
    )
    native = sum(t.kind == "native_video" for t in tasks) * epochs
    judge = [c for c in charges if c.what.startswith("judge")]
    uncounted = tuple(c.what for c in charges if c.tokens is None)
    model_uncounted = bool(native) or any(c.tokens is None for c in charges if c not in judge)
    counted = [c for c in charges if c.tokens is not None]
    parties = _unique(model, grader)
    return CostEstimate(
        charges=charges,
        total_dollars=total_dollars(counted) if counted else None,
        lower_bound=bool(native or uncounted),
        missing=tuple(p.missing() for p in parties if p.price is None),
        judge_calls=len(rows) * epochs,
        native_clips_uncounted=native,
        uncounted=uncounted,
        strategies=strategy_bills(tasks, epochs, model, figures, judge, model_uncounted),
        warnings=tuple(w for p in parties if (w := p.warning())),
        assumptions=cost_assumptions(figures, native),
    )


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


@dataclass(frozen=True)
class JudgePart:
    """What every strategy's bill adds for the judge (never batched: the batch setting is
    the model's), and what leaves the totals lower bounds."""

    dollars: float | None  # the counted charges; None: none counted, or no price
    partial: bool  # some of the judge's charges are not counted
    model_uncounted: bool  # some of the model's own tokens are not counted


def strategy_bills(
    tasks: Sequence[TaskCost],
    epochs: int,
    model: Pricing,
    figures: Measures,
    judge: Sequence[Charge],
    model_uncounted: bool = False,
) -> tuple[StrategyBill, ...]:
    """Each strategy's whole bill, and its ratio to the bill with caching off; the judge's
    counted charges are in every one, as in the bill with caching off, and a part left
    uncounted (the judge's reply, a clip sent whole) makes every total a lower bound.

    The bill with caching off counts the model's input as the bill does; where the media's
    tokens are not known, that is the question text alone, a lower bound, and what the
    other strategies would cache is not known."""
    rules = caching_rules_for(model.model)
    batch = batch_rules_for(model.model)
    output = sum(c.tokens or 0 for c in output_charges(tasks, epochs, model, figures))
    counted = [c for c in judge if c.tokens is not None]
    judge_part = JudgePart(
        total_dollars(counted) if counted else None, len(counted) < len(judge), model_uncounted
    )
    media_known = all(t.prefix is not None for t in tasks)
    bills: list[StrategyBill] = []
    for strategy in STRATEGIES:
        if strategy.batched and not batch.available:
            bills.append(StrategyBill(strategy.name, note=_no_batch(batch.name)))
            continue
        multiplier = (batch.price_multiplier or 1.0) if strategy.batched else 1.0
        if not media_known and strategy.caching != "off":
            bills.append(_input_unknown(strategy.name, output, model.price, multiplier, judge_part))
            continue
        split = strategy_split(tasks, epochs, rules, model.model, figures, strategy)
        bill = _bill(strategy.name, split, output, model.price, rules, multiplier, judge_part)
        bills.append(replace(bill, input_lower_bound=not media_known))
    off = bills[0].total_dollars
    return tuple(
        b if b.total_dollars is None or not off else _with_ratio(b, b.total_dollars / off)
        for b in bills
    )


def _no_batch(provider: str) -> str:
    """Why a batched strategy has no bill: the provider (named where it is known) has no
    batch API that Inspect can use."""
    return NO_BATCH.name if provider == NO_BATCH.name else f"{provider}: {NO_BATCH.name}"


def _input_unknown(
    name: str, output: int, price: Price | None, multiplier: float, judge: JudgePart
) -> StrategyBill:
    """A strategy's bill where what it would cache is not known (the media's tokens are
    not): its output and the judge's calls, its input and total not known."""
    unknown = StrategyBill(name, None, None, None, None, multiplier)
    if price is None:
        return unknown
    return replace(
        unknown,
        output_dollars=dollars(output, price.output) * multiplier,
        judge_dollars=judge.dollars,
        judge_lower_bound=judge.partial,
    )


def _with_ratio(bill: StrategyBill, ratio: float) -> StrategyBill:
    return replace(bill, vs_off=ratio)


def strategy_split(
    tasks: Sequence[TaskCost],
    epochs: int,
    rules: CacheRules,
    model: str,
    figures: Measures,
    strategy: Strategy,
) -> InputSplit:
    """The model's input over every task and attempt, as the strategy caches it."""
    ttls = offered_ttls(rules, model)
    if strategy.batched and rules.batch_ttl is not None:
        ttls = [t for t in ttls if t.name == rules.batch_ttl]
    default = inspect_default_ttl(rules)
    free = [t.name for t in rules.ttls if t.write <= 1.0]
    total = InputSplit()
    for index, task in enumerate(tasks):
        # the media's tokens not known: the question text the bill counts (caching off)
        prefix = text_tokens(task.text_bytes) if task.prefix is None else task.prefix
        if strategy.caching == "off":
            attempts: list[tuple[str, str | None]] = [("none", None)] * epochs
        elif strategy.caching == "inspect":
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


def _bill(
    name: str,
    split: InputSplit,
    output: int,
    price: Price | None,
    rules: CacheRules,
    multiplier: float,
    judge: JudgePart,
) -> StrategyBill:
    unpriced = StrategyBill(name, None, split.fresh, dict(split.written), split.read, multiplier)
    if price is None:
        return unpriced
    rates = {t.name: write_rate(rules, t.name) for t in rules.ttls}
    input_cost = input_dollars(split, price, rates) * multiplier
    output_cost = dollars(output, price.output) * multiplier
    return replace(
        unpriced,
        input_dollars=input_cost,
        output_dollars=output_cost,
        judge_dollars=judge.dollars,
        judge_lower_bound=judge.partial,
        total_dollars=input_cost + output_cost + (judge.dollars or 0.0),
        lower_bound=judge.dollars is None or judge.partial or judge.model_uncounted,
    )


def _unique(*pricings: Pricing) -> list[Pricing]:
    return list({p.model: p for p in pricings}.values())


def cost_assumptions(figures: Measures, native: int) -> tuple[str, ...]:
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
        "(the run's -T judge_retries) and retries after errors are not included",
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
    return tuple(lines)


def _minutes(seconds: float | None) -> str:
    return "an unknown time" if seconds is None else f"about {seconds / 60:.0f} min"
