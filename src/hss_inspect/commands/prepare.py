"""`hss-inspect prepare`: fetch the selected media and fill the cache before a run
(`media.prepare`), and with `--model` (repeatable) or `--recipe` also build what each named
model is sent, where its limits or context window thin or shrink the frames
(`conditions.prepared_turns`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from hss_inspect.commands.arguments import add_pairs_argument, named_pairs
from hss_inspect.conditions.prepared_turns import ModelRun, targets_for, with_model_turns
from hss_inspect.core.options import (
    PREPARE_OPTIONS,
    add_flags,
    add_model_server_flags,
    check,
    media_settings,
)
from hss_inspect.core.settings import MediaSettings
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import select_rows
from hss_inspect.media.cache_folder import check_cache_folder
from hss_inspect.media.prepare import jobs_for, prepare_all
from hss_inspect.media.workers import Stopped, stopping_on_signals
from hss_inspect.providers.model_names import NEWER_INSPECT, check_model_name
from hss_inspect.recipes.plans import RECIPES, plan_recipe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # several frame caps prepare a frame-budget sweep in one decode per clip
    add_flags(parser, PREPARE_OPTIONS, many=("max_frames",))
    parser.add_argument(
        "--model",
        dest="models",
        action="append",
        default=[],
        metavar="MODEL",
        help="also prepare what this model is sent, where its limits or context window "
        "thin or shrink the frames (repeatable; named as Inspect names it)",
    )
    parser.add_argument(
        "--recipe",
        choices=list(RECIPES),
        help="also prepare what each run of this recipe (hss-inspect recipe) is sent",
    )
    add_pairs_argument(
        parser,
        "--as",
        "aliases",
        "with --recipe: a Table 5 model sent to another Inspect model, as the recipe takes it",
        "NAME=MODEL",
    )
    add_model_server_flags(parser)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")


def run(args: argparse.Namespace) -> int:
    # Caught outside: a signal whose raise went nowhere inside is raised again on leaving.
    try:
        with stopping_on_signals():
            return prepare(args)
    except Stopped as stop:
        print(stopped_text(stop), file=sys.stderr)
        return stop.exit_status


def stopped_text(stop: Stopped) -> str:
    return (
        f"hss-inspect prepare: stopped by {stop.name}; the media prepared so far stay in the "
        "cache, and running the same command again prepares the rest"
    )


def prepare(args: argparse.Namespace) -> int:
    root = check_cache_folder()
    budgets = [media_settings({**vars(args), "max_frames": cap}) for cap in args.max_frames]
    targets = targets_for(model_runs(args, budgets), args.model_base_url)
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    jobs = with_model_turns(jobs_for(rows, budgets), rows, release, targets)
    print(f"preparing {len(jobs)} media file(s) from {release.description} into {root}")
    summary = prepare_all(release.media_file, jobs, args.jobs)
    if summary.not_stored:
        print(f"warning: {summary.not_stored[0].not_stored}", file=sys.stderr)
    print("\n".join(summary.lines()))
    return 1 if summary.failures or summary.not_stored else 0


def model_runs(args: argparse.Namespace, budgets: Sequence[MediaSettings]) -> list[ModelRun]:
    """The runs to prepare for: each --model at each frame budget, and each run of the
    --recipe with its own task options and output budget (the blind control sends none)."""
    for name in args.models:
        check_model_name(name, "--model", NEWER_INSPECT)
    runs = [(name, media, args.max_tokens) for name in args.models for media in budgets]
    if args.recipe:
        for planned in plan_recipe(args.recipe, None, named_pairs(args.aliases, "--as")):
            if planned.task == "hss_blind":
                continue
            given = {k: check(k, v) for k, v in planned.task_args.items()}
            for cap in args.max_frames:
                media = media_settings({**vars(args), "max_frames": cap, **given})
                runs.append((planned.model, media, planned.generate.get("max_tokens")))
    return runs
