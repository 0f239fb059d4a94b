"""The printed estimate: the run's requests, the context window and the fit of each clip,
what is already prepared, then the bill with caching off and under each strategy, with
its assumptions one a line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hss_inspect.core.markdown import aligned
from hss_inspect.core.options import spell
from hss_inspect.estimate.costs import CostEstimate, StrategyBill
from hss_inspect.estimate.requests import PreparedMedia, RunEstimate
from hss_inspect.providers.fit import TokenBudget
from hss_inspect.providers.prices import Charge, dollars_text, price_text


def estimate_text(run: RunEstimate, prepare_command: str) -> str:
    """The estimate as printed; `prepare_command` prepares what the run sends."""
    limit = run.request_max_bytes
    limit_text = f" of the {limit / 1e6:.1f} MB limit" if limit else ""
    tokens = run.image_tokens
    token_text = (
        f"{tokens:,} (the {run.image_token_formula} formula)"
        if tokens is not None
        else "not estimated: this provider publishes no image-token formula"
    )
    return "\n".join(
        [
            f"{run.model} ({run.provider}): {run.tasks} tasks x {run.epochs} epochs",
            f"requests:            {run.requests:,}",
            f"images:              {run.images:,}",
            f"payload:             {run.payload_bytes / 1e6:,.1f} MB encoded",
            f"largest request:     {run.largest_request_bytes / 1e6:.2f} MB{limit_text} "
            f"({run.largest_request_task})",
            f"image input tokens:  {token_text}",
            f"context window:      {window_text(run.token_budget)}",
            *(media_lines(run.media, prepare_command) if run.media is not None else []),
            *fit_lines(run),
            *(cost_lines(run.cost) if run.cost is not None else []),
        ]
    )


def window_text(budget: TokenBudget) -> str:
    if budget.input_tokens is None:
        return f"none known: frames are not fitted to tokens (set {spell('context_window')})"
    return (
        f"{budget.window or budget.input_limit:,} tokens ({budget.source}: "
        f"{budget.detail}); {budget.output_reserve:,} kept for the output "
        f"({budget.reserve_source})"
    )


def media_lines(media: PreparedMedia, prepare_command: str) -> list[str]:
    lines = [
        f"media in the cache:  {media.clips_prepared} of {media.clips} clip(s), "
        f"{media.images_prepared} of {media.images} image(s), prepared before this estimate"
    ]
    if not media.clips_decoded:
        return [*lines, "left to decode:      nothing: the run reads every clip's frames"]
    kept = (
        "now cached for the run"
        if media.stored
        else "the cache could not keep them, so the run decodes them again"
    )
    return [
        *lines,
        f"left to decode:      {media.clips_decoded} clip(s), {media.frames_decoded:,} "
        f"frames: {media.decode_seconds:.1f} s of decoding, done here and {kept} "
        f"(`{prepare_command}` does it off the clock)",
    ]


def fit_lines(run: RunEstimate) -> list[str]:
    """The fit of each clip: frames planned and sent, their side, estimated tokens; and
    the clips that cannot fit, which the run fails before sending anything."""
    clips = [t for t in run.per_task if t.kind == "frames"]
    if not clips or run.token_budget.input_tokens is None:
        return []
    failed = [t for t in clips if t.frames_sent is None and t.fit]

    def cell(value: Any) -> str:
        return "-" if value is None else f"{value:,}"

    rows = [
        [
            t.task_id,
            cell(t.frames_planned),
            cell(t.frames_sent),
            cell(t.frame_side),
            cell(t.estimated_tokens),
            "does not fit" if t in failed else t.fit or "-",
        ]
        for t in clips
    ]
    header = ["task", "planned", "sent", "side", "est. tokens", "fit"]
    lines = ["frames fitted to the window, per clip:", *aligned([header, *rows])]
    return lines + [f"  {t.fit}" for t in failed]


def cost_lines(cost: CostEstimate) -> list[str]:
    """The bill block: one line a charge with caching off, the total, the whole bill under
    each caching strategy, then the assumptions one a line; a charge without a price or a
    count says so and has no dollars."""
    lines = ["the bill with caching off, at the prices Inspect would use:"]
    for charge in cost.charges:
        lines.append(f"  {charge.what + ':':<15}{_charge_text(charge, cost.judge_calls)}")
    lines.append(f"  {'total:':<15}{_total_text(cost)}")
    lines += [f"  {missing}" for missing in cost.missing]
    lines += [f"  warning: {warning}" for warning in cost.warnings]
    lines += strategy_lines(cost.strategies)
    return lines + ["assumptions:"] + [f"  {a}" for a in cost.assumptions]


def strategy_lines(bills: Sequence[StrategyBill]) -> list[str]:
    header = [
        "strategy", "input", "cache writes", "cache reads", "input cost", "output cost",
        "judge cost", "total", "vs off",
    ]  # fmt: skip
    table = [header]
    for bill in bills:
        if bill.note is not None:
            table.append([bill.strategy, bill.note, *[""] * (len(header) - 2)])
            continue
        table.append([bill.strategy, *_input_cells(bill), *_dollar_cells(bill)])
    return ["the whole bill by caching strategy (the model's input in tokens):", *aligned(table)]


def _input_cells(bill: StrategyBill) -> list[str]:
    """The model's input: fresh, written, read; not known where the media's tokens are not
    (then caching off counts the question text alone: at least that)."""
    if bill.fresh is None or bill.written is None or bill.read is None:
        return [NOT_KNOWN] * 3
    least = "at least " if bill.input_lower_bound else ""
    ttls = "/".join(sorted(bill.written))
    written = f"{sum(bill.written.values()):,}" + (f" ({ttls})" if ttls else "")
    return [f"{least}{bill.fresh:,}", written, f"{bill.read:,}"]


def _dollar_cells(bill: StrategyBill) -> list[str]:
    """Input, output, judge and total dollars, and the ratio to caching off; an input not
    known leaves its cost, the total and the ratio not known (a price not known: '-')."""
    priced = bill.output_dollars is not None
    unknown = NOT_KNOWN if priced and not bill.input_known else "-"
    least = "at least " if bill.input_lower_bound else ""
    return [
        least + _money(bill.input_dollars) if bill.input_dollars is not None else unknown,
        _money(bill.output_dollars),
        ("at least " if bill.judge_lower_bound else "") + _money(bill.judge_dollars),
        ("at least " if bill.lower_bound else "") + _money(bill.total_dollars)
        if bill.total_dollars is not None
        else unknown,
        f"{bill.vs_off:.2f}x" if bill.vs_off is not None else unknown,
    ]


NOT_KNOWN = "not known"


def _money(amount: float | None) -> str:
    return "-" if amount is None else dollars_text(amount)


def _charge_text(charge: Charge, judge_calls: int) -> str:
    if charge.tokens is None:
        why = (
            "this provider publishes no image-token formula"
            if charge.what == "media"
            else "give --pilot LOG or --judge-output-tokens N"
        )
        return f"not counted ({why})"
    kind = "image tokens" if charge.what == "media" else "tokens"
    calls = f"{judge_calls:,} calls, " if charge.what == "judge input" else ""
    counted = f"{calls}{charge.tokens:,} {kind}"
    if charge.price is None or charge.dollars is None:
        return counted  # the model without a price is named once, below the total
    return (
        f"{counted} x {price_text(charge.price.per_million(charge.rate))} = "
        f"{dollars_text(charge.dollars)} ({charge.model}, {charge.price.source})"
    )


def _total_text(cost: CostEstimate) -> str:
    if cost.missing:
        return "not known: give the prices in --model-cost-config FILE (Inspect's format)"
    if cost.total_dollars is None:
        return "not known: the media are not counted"
    left_out = f" ({', '.join(cost.uncounted)} not counted)" if cost.uncounted else ""
    return ("at least " if cost.lower_bound else "") + dollars_text(cost.total_dollars) + left_out
