"""`hss-inspect estimate`: the requests, images, payload and image input tokens of a run,
how each clip's frames fit the model's context window, and the input cost in dollars at
the prices Inspect would use (`commands.cost`), before anything is sent.

Each selected sample's user turn is built exactly as the task builds it for the model
(`conditions.turn.user_turn_for`: the same limits, token budget, frames and re-encoding,
filling the same cache), so the figures are those of the requests the run will send. Image
tokens follow the model family's or the provider's formula (`image_tokens` in
task_configs/model_limits.yaml); the window is found as the run finds it
(`providers.context`), the server asked at `--model-base-url` or the provider's URL. It
also says how much of that media was already prepared, and what building the requests had
to decode, with the time that took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import asdict, dataclass
from typing import Any

from hss_inspect.commands import cost
from hss_inspect.core.errors import SetupError
from hss_inspect.core.markdown import aligned
from hss_inspect.core.options import (
    FRAME_OPTIONS,
    SELECTION_OPTIONS,
    add_flags,
    add_model_server_flags,
    media_settings,
)
from hss_inspect.core.settings import (
    DEFAULT_EPOCHS,
    MediaSettings,
)
from hss_inspect.data.release import Release, open_release
from hss_inspect.data.rows import TaskRow, select_rows
from hss_inspect.media import store
from hss_inspect.providers.fit import DoesNotFit, TokenBudget
from hss_inspect.providers.limits import (
    TokenRule,
    native_video_refusal,
    provider_rules,
    token_rule_for,
)
from hss_inspect.providers.prices import text_tokens
from hss_inspect.providers.tokens import check_rule
from hss_inspect.report.paper import judges
from hss_inspect.report.pilot import read_pilot


@dataclass
class RequestEstimate:
    task_id: str
    kind: str
    images: int
    request_bytes: int
    image_tokens: int | None
    sizes: list[tuple[int, int]]
    estimated_tokens: int | None = None
    frames_planned: int | None = None
    frames_sent: int | None = None
    frame_side: int | None = None
    # "thinned", "shrunk", "thinned+shrunk", None, or why the clip cannot fit (the sample
    # then fails before anything is sent)
    fit: str | None = None
    text_bytes: int = 0
    sent: bool = True  # False: the clip cannot fit, and the run fails it before sending


def task_cost(row: TaskRow, estimate: RequestEstimate) -> cost.TaskCost:
    """The task's request as the bill counts it: its user turn, all shared by its attempts
    (images by the formula, text at a typical rate; None when the images are not counted)."""
    prefix = (
        None
        if estimate.image_tokens is None
        else estimate.image_tokens + text_tokens(estimate.text_bytes)
    )
    return cost.TaskCost(row.media_type, estimate.kind, prefix, estimate.text_bytes)


def bill_figures(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "output_tokens": args.output_tokens,
        "judge_output_tokens": args.judge_output_tokens,
        "answer_tokens": args.answer_tokens,
        "attempt_gap": args.attempt_gap,
        "connections": args.max_connections,
    }


def estimate_request(record: dict[str, Any], task_id: str) -> RequestEstimate:
    from hss_inspect.conditions.turn import sent_image_sizes

    tokens = record.get("token_fit") or {}
    changed = [
        w
        for w, key in (("thinned", "thinned_to_fit"), ("shrunk", "shrunk_to_fit"))
        if tokens.get(key)
    ]
    return RequestEstimate(
        task_id=task_id,
        kind=record["kind"],
        images=record["payload"]["images"],
        request_bytes=record["payload"]["estimated_request_bytes"],
        image_tokens=tokens.get("estimated_image_tokens"),
        sizes=sent_image_sizes(record),
        estimated_tokens=tokens.get("estimated_tokens"),
        frames_planned=tokens.get("frames_planned"),
        frames_sent=tokens.get("frames_sent"),
        frame_side=tokens.get("frame_side"),
        fit="+".join(changed) or None,
        text_bytes=record["payload"]["text_bytes"],
    )


async def _estimate_rows(
    release: Release,
    rows: list[TaskRow],
    media: MediaSettings,
    model: str,
    base_url: str | None,
    max_tokens: int | None,
) -> tuple[TokenBudget, list[RequestEstimate], dict[str, Any]]:
    from hss_inspect.conditions.turn import user_turn_for
    from hss_inspect.providers.context import budget_for_name

    budget = await budget_for_name(
        model, media.context_window, media.output_reserve, base_url, max_tokens
    )
    estimates = []
    sent: list[tuple[str, str]] = []
    before = store.activity()
    for row in rows:
        try:
            _, record = await user_turn_for(release, media, model, row.sample_metadata(), budget)
        except DoesNotFit as exc:  # the run would fail this sample before sending it
            estimates.append(
                RequestEstimate(row.task_id, "frames", 0, 0, 0, [], fit=str(exc), sent=False)
            )
            continue
        estimates.append(estimate_request(record, row.task_id))
        sent.append((record["kind"], record["media_sha256"]))
    return budget, estimates, prepared_media(sent, store.activity().since(before))


def prepared_media(sent: list[tuple[str, str]], work: store.Activity) -> dict[str, Any]:
    """How much of the run's media was in the cache before this estimate, and what building
    its requests had to decode (the run reads it from the cache now, if it could be kept)."""
    clips = {digest for kind, digest in sent if kind == "frames"}
    images = {digest for kind, digest in sent if kind == "image"}
    decoded = {digest: frames for digest, frames in work.clips.items() if digest in clips}
    return {
        "clips": len(clips),
        "clips_prepared": len(clips - decoded.keys()),
        "images": len(images),
        "images_prepared": len(images - work.images.keys()),
        "clips_decoded": len(decoded),
        "frames_decoded": sum(decoded.values()),
        "decode_seconds": round(work.decode_seconds, 3),
        "stored": work.not_stored == 0,
    }


def media_lines(media: dict[str, Any], model: str) -> list[str]:
    lines = [
        f"media in the cache:  {media['clips_prepared']} of {media['clips']} clip(s), "
        f"{media['images_prepared']} of {media['images']} image(s), prepared before this estimate"
    ]
    if not media["clips_decoded"]:
        return [*lines, "left to decode:      nothing: the run reads every clip's frames"]
    kept = (
        "now cached for the run"
        if media["stored"]
        else "the cache could not keep them, so the run decodes them again"
    )
    return [
        *lines,
        f"left to decode:      {media['clips_decoded']} clip(s), {media['frames_decoded']:,} "
        f"frames: {media['decode_seconds']:.1f} s of decoding, done here and {kept} "
        f"(`hss-inspect prepare --model {model}` does it off the clock)",
    ]


def summary(
    estimates: list[RequestEstimate],
    epochs: int,
    model: str,
    budget: TokenBudget,
    rule: TokenRule | None,
) -> dict[str, Any]:
    rules = provider_rules(model)
    tokens = [e.image_tokens for e in estimates]
    largest = max(estimates, key=lambda e: e.request_bytes, default=None)
    return {
        "model": model,
        "provider": rules.name,
        "tasks": len(estimates),
        "epochs": epochs,
        "requests": sum(e.sent for e in estimates) * epochs,
        "images": sum(e.images for e in estimates) * epochs,
        "payload_bytes": sum(e.request_bytes for e in estimates) * epochs,
        "largest_request_bytes": largest.request_bytes if largest else 0,
        "largest_request_task": largest.task_id if largest else None,
        "request_max_bytes": rules.request_max_bytes,
        "image_tokens": None if None in tokens else sum(t or 0 for t in tokens) * epochs,
        "image_token_formula": rule.formula.get("formula") if rule else None,
        "image_token_rule": rule.as_dict() if rule else None,
        "token_budget": budget.as_dict(),
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
            f"context window:      {window_text(result['token_budget'])}",
            *(media_lines(result["media"], result["model"]) if "media" in result else []),
            *fit_lines(result),
            *(cost.cost_lines(result["cost"]) if "cost" in result else []),
        ]
    )


def window_text(budget: dict[str, Any]) -> str:
    if budget["input_tokens"] is None:
        return "none known: frames are not fitted to tokens (set -T context_window)"
    return (
        f"{budget['window'] or budget['input_limit']:,} tokens ({budget['source']}: "
        f"{budget['detail']}); {budget['output_reserve']:,} kept for the output "
        f"({budget['reserve_source']})"
    )


def fit_lines(result: dict[str, Any]) -> list[str]:
    """The fit of each clip: frames planned and sent, their side, estimated tokens; and
    the clips that cannot fit, which the run fails before sending anything."""
    clips = [t for t in result["per_task"] if t["kind"] == "frames"]
    if not clips or result["token_budget"]["input_tokens"] is None:
        return []
    failed = [t for t in clips if t["frames_sent"] is None and t["fit"]]

    def cell(value: Any) -> str:
        return "-" if value is None else f"{value:,}"

    rows = [
        [
            t["task_id"],
            cell(t["frames_planned"]),
            cell(t["frames_sent"]),
            cell(t["frame_side"]),
            cell(t["estimated_tokens"]),
            "does not fit" if t in failed else t["fit"] or "-",
        ]
        for t in clips
    ]
    header = ["task", "planned", "sent", "side", "est. tokens", "fit"]
    lines = ["frames fitted to the window, per clip:", *aligned([header, *rows])]
    return lines + [f"  {t['fit']}" for t in failed]


ESTIMATE_OPTIONS = (
    *SELECTION_OPTIONS,
    *FRAME_OPTIONS,
    "frame_bytes_budget",
    "image_max_side",
    "image_max_bytes",
    "native_video",
    "context_window",
    "output_reserve",
    "token_rules",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", required=True, help="the model under evaluation, as Inspect names it"
    )
    parser.add_argument(
        "--epochs", type=int, default=DEFAULT_EPOCHS, help="attempts per task, as in the run"
    )
    add_flags(parser, ESTIMATE_OPTIONS)
    add_model_server_flags(parser)
    cost.add_cost_config_argument(parser, "the model and the judge")
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
    parser.add_argument(
        "--pilot",
        metavar="LOG",
        help="a log of a short run of the same model (inspect eval ... --limit N): its "
        "output and reasoning tokens per media type, its judge's tokens and its pace",
    )
    parser.add_argument(
        "--output-tokens",
        type=int,
        metavar="N",
        help="output tokens per attempt, thinking included (default: the pilot's, else "
        "Table 1's means for the model)",
    )
    parser.add_argument(
        "--judge-output-tokens",
        type=int,
        metavar="N",
        help="the judge's reply per attempt, thinking included (default: the pilot's)",
    )
    parser.add_argument(
        "--attempt-gap",
        type=float,
        metavar="MINUTES",
        help="minutes between a task's attempts in the run, for the caching strategies "
        "(default: from the pilot's pace, else "
        f"{cost.DEFAULT_ATTEMPT_GAP_MINUTES:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="as inspect eval --max-connections: sample-epochs at once (default: the "
        f"pilot's, else Inspect's {cost.DEFAULT_CONNECTIONS})",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    store.check_cache_folder()
    media = media_settings(vars(args))
    refusal = native_video_refusal(media, args.model)
    if refusal is not None:
        raise SetupError(refusal)
    try:
        rule = token_rule_for(args.model, None, media.token_rules)
        if rule is not None:
            check_rule(rule)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    prices = cost.load_cost_config(args.model_cost_config)
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    budget, estimates, prepared = asyncio.run(
        _estimate_rows(release, rows, media, args.model, args.model_base_url, args.max_tokens)
    )
    rule = rule or token_rule_for(args.model, budget.served_root, media.token_rules)
    result = summary(estimates, args.epochs, args.model, budget, rule)
    result["media"] = prepared
    model, grader = (cost.inspect_pricing(m, prices) for m in (args.model, args.grader))
    # a clip that cannot fit is never sent, nor judged
    sent = [(row, e) for row, e in zip(rows, estimates, strict=True) if e.sent]
    tasks = [task_cost(row, e) for row, e in sent]
    pilot = read_pilot(args.pilot, args.model) if args.pilot else None
    figures = cost.measures(args.model, tasks, pilot, bill_figures(args))
    result["cost"] = cost.cost_estimate(
        [row for row, _ in sent], tasks, result, model, grader, figures
    )
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0
