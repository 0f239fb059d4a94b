"""`hss-inspect estimate`: the requests, images, payload and image input tokens of a run,
how each clip's frames fit the model's context window, what is already prepared, and the
bill under each caching strategy at the prices Inspect would use, before anything is sent
(the work is `hss_inspect.estimate`)."""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import fields

from hss_inspect.commands.arguments import add_cost_config_argument
from hss_inspect.conditions.preflight import check_before_run
from hss_inspect.core.command_line import prepare_command
from hss_inspect.core.options import (
    FRAME_OPTIONS,
    SELECTION_OPTIONS,
    add_flags,
    add_model_server_flags,
    media_settings,
)
from hss_inspect.core.settings import DEFAULT_EPOCHS
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import select_rows
from hss_inspect.estimate.costs import (
    DEFAULT_ATTEMPT_GAP_MINUTES,
    DEFAULT_CONNECTIONS,
    Given,
    cost_estimate,
    measures,
)
from hss_inspect.estimate.requests import run_estimate, size_requests
from hss_inspect.estimate.text import estimate_text
from hss_inspect.providers.limits import token_rule_for
from hss_inspect.providers.model_names import check_model_name
from hss_inspect.providers.paper_models import judges
from hss_inspect.providers.price_lookup import inspect_pricing, load_cost_config
from hss_inspect.report.pilot import read_pilot

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
    add_cost_config_argument(parser, "the model and the judge")
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
        f"{DEFAULT_ATTEMPT_GAP_MINUTES:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        metavar="N",
        help="as inspect eval --max-connections: sample-epochs at once (default: the "
        f"pilot's, else Inspect's {DEFAULT_CONNECTIONS})",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    media = media_settings(vars(args))
    prices = load_cost_config(args.model_cost_config)
    for name, option in ((args.model, "--model"), (args.grader, "--grader")):
        check_model_name(name, option, also_known=prices)
    limits = check_before_run(media, args.model, "standard")
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    budget, estimates, prepared = asyncio.run(
        size_requests(release, rows, media, args.model, args.model_base_url, args.max_tokens)
    )
    rule = limits.token_rule if limits is not None else None
    rule = rule or token_rule_for(args.model, budget.served_root, media.token_rules)
    run = run_estimate(estimates, args.epochs, args.model, budget, rule)
    run.media = prepared
    model, grader = (inspect_pricing(m, prices) for m in (args.model, args.grader))
    # a clip that cannot fit is never sent, nor judged
    sent = [(row, e) for row, e in zip(rows, estimates, strict=True) if e.sent]
    tasks = [e.task_cost(row.media_type) for row, e in sent]
    pilot = read_pilot(args.pilot, args.model) if args.pilot else None
    figures = measures(args.model, tasks, pilot, given_figures(args))
    run.cost = cost_estimate(
        [row for row, _ in sent], tasks, run.epochs, run.image_tokens, model, grader, figures
    )
    print(json.dumps(run.as_dict(), indent=1) if args.json else estimate_text(run, prepare(args)))
    return 0


def prepare(args: argparse.Namespace) -> str:
    """The `hss-inspect prepare` that prepares what this run sends, on the same data."""
    server = [("--model", args.model), ("--model-base-url", args.model_base_url)]
    return prepare_command(vars(args), [*server, ("--max-tokens", args.max_tokens)])


def given_figures(args: argparse.Namespace) -> Given:
    """The figures given by their flags (`--output-tokens` is `output_tokens`, ...)."""
    return Given(**{field.name: getattr(args, field.name) for field in fields(Given)})
