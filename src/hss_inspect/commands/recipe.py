"""`hss-inspect recipe`: one of the paper's experiments, run as an eval set
(`recipes.run`), printed as `inspect eval` commands (`--dry-run`) or written as an Inspect
Flow spec (`--flow`, `recipes.flow`); `judges` re-grades logs with the other judges."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

# Loaded before core.errors, so its SetupError is Inspect's PrerequisiteError in the evals
# this command runs in its own process (a command that runs none does not load Inspect).
import inspect_ai  # noqa: F401

from hss_inspect.commands.arguments import add_pairs_argument, named_pairs
from hss_inspect.core.command_line import inspect_score_command
from hss_inspect.core.errors import InputError
from hss_inspect.core.options import check, check_names
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.media.workers import Stopped
from hss_inspect.providers.paper_models import judges
from hss_inspect.recipes.flow import INSTALL_HINT, FlowOrigin, write_spec
from hss_inspect.recipes.plans import (
    PACKAGE,
    RECIPES,
    PlannedRun,
    grader_spec,
    plan_recipe,
    with_task_args,
)
from hss_inspect.recipes.processes import (
    ShareOutcome,
    available_memory,
    model_shares,
    processes_for,
    run_shares,
)
from hss_inspect.recipes.run import regrade, run_plan, run_share

ENGINES = ("processes", "ray")

# Inspect's options that switch off work a full run does not need, each passed to every
# eval set as `eval_set(NAME=False)` (docs/full-runs.md measures what each saves)
SWITCHES_OFF = {
    "--no-log-images": ("log_images", "keep the frames out of the logs"),
    "--no-log-realtime": ("log_realtime", "no live sample events for inspect view"),
    "--no-score-display": ("score_display", "no running metrics while the run goes"),
}


def add_arguments(recipe: argparse.ArgumentParser) -> None:
    recipe.description = "\n".join(f"{name}: {text}" for name, text in RECIPES.items())
    recipe.formatter_class = argparse.RawDescriptionHelpFormatter
    recipe.add_argument("name", choices=list(RECIPES), help="the experiment (listed above)")
    recipe.add_argument("logs", nargs="*", help="judges: the logs to re-grade (in place)")
    recipe.add_argument("--log-dir", default="logs", help="the eval set's folder")
    recipe.add_argument("--models", help="comma list of Table 5 model names (default: all)")
    add_pairs_argument(
        recipe,
        "--as",
        "aliases",
        "send a Table 5 model or judge to another Inspect model (repeatable)",
        "NAME=MODEL",
    )
    add_pairs_argument(
        recipe,
        "-T",
        "task_args",
        "task option for every run, e.g. -T dataset=... -T revision=<commit>",
    )
    recipe.add_argument(
        "--processes",
        type=int,
        help="models run at once, each in its own process and eval-set folder "
        "(default: what the memory holds at 3 GB each, up to 4 a core; 1: one eval set in this "
        "process)",
    )
    recipe.add_argument(
        "--engine",
        choices=ENGINES,
        default="processes",
        help="processes: on this machine; ray: each model a Ray task on the cluster "
        "`ray.init()` joins (RAY_ADDRESS), logs in a shared --log-dir [processes]",
    )
    recipe.add_argument("--max-connections", type=int, help="Inspect's: requests at once a model")
    recipe.add_argument("--max-samples", type=int, help="Inspect's: samples at once an eval")
    for flag, (_, why) in SWITCHES_OFF.items():
        recipe.add_argument(flag, action="store_true", help=f"Inspect's: {why}")
    recipe.add_argument("--dry-run", action="store_true", help="print the inspect commands")
    recipe.add_argument(
        "--flow",
        type=Path,
        metavar="OUT.py|OUT.yaml",
        help="write the plan as an Inspect Flow spec instead of running it "
        "(judges: the runs whose answers App. I re-grades)",
    )


def run(args: argparse.Namespace) -> int:
    aliases = named_pairs(args.aliases, "--as")
    task_args = task_options(args)
    if args.flow:
        return write_flow(args, aliases)
    if args.name == "judges":
        return _judges(args, aliases)
    runs = plan_recipe(args.name, _models(args), aliases)
    if args.dry_run:
        flags = inspect_flags(args)
        for run in with_task_args(runs, task_args):
            print(" ".join([run.command_line(), *flags]))
        return 0
    try:
        return 0 if run_recipe(runs, args, task_args) else 1
    except Stopped as stop:
        print(
            f"hss-inspect recipe: stopped by {stop.name}; the samples finished so far stay in "
            f"{args.log_dir}, and running the same command again resumes every model",
            file=sys.stderr,
        )
        return stop.exit_status


def run_recipe(runs: list[PlannedRun], args: argparse.Namespace, task_args: dict[str, str]) -> bool:
    """One eval set in this process for one model (or `--processes 1`); else one eval set
    a model, each in its own process (or Ray task), in folders of `--log-dir`."""
    shares = model_shares(runs, args.log_dir)
    inspect_args = eval_set_options(args)
    if args.engine == "ray":
        from hss_inspect.recipes.ray_engine import run_on_ray

        print(f"{len(shares)} model(s) as Ray tasks; logs in {args.log_dir}/<model>/")
        outcomes = run_on_ray(shares, task_args, inspect_args, print_outcome)
        return all(o.finished for o in outcomes)
    count = args.processes or processes_for(len(shares), os.cpu_count() or 1, available_memory())
    if len(shares) == 1 or count == 1:
        return run_plan(runs, args.log_dir, task_args, **inspect_args)
    print(
        f"{len(shares)} models, {count} process(es) at once (--processes), each an eval set "
        f"in {args.log_dir}/<model>/; follow them with inspect view --log-dir {args.log_dir}"
    )
    outcomes = run_shares(shares, count, run_share, task_args, inspect_args, print_outcome)
    return all(outcome.finished for outcome in outcomes)


def inspect_flags(args: argparse.Namespace) -> list[str]:
    """The Inspect options given to the recipe, as `inspect eval` flags."""
    flags = [
        f"--{name.replace('_', '-')} {value}"
        for name, value in (
            ("max_connections", args.max_connections),
            ("max_samples", args.max_samples),
        )
        if value is not None
    ]
    return flags + [flag for flag in SWITCHES_OFF if _given(args, flag)]


def eval_set_options(args: argparse.Namespace) -> dict[str, object]:
    """The Inspect options given to the recipe, as `eval_set` takes them."""
    given = {"max_connections": args.max_connections, "max_samples": args.max_samples}
    options: dict[str, object] = {k: v for k, v in given.items() if v is not None}
    options.update({name: False for flag, (name, _) in SWITCHES_OFF.items() if _given(args, flag)})
    return options


def _given(args: argparse.Namespace, flag: str) -> bool:
    return bool(getattr(args, flag[2:].replace("-", "_")))


def print_outcome(outcome: ShareOutcome) -> None:
    if outcome.error:
        said = f"stopped by an error: {outcome.error}"
    elif outcome.finished:
        said = "finished"
    else:
        said = "not finished: run the same command to resume"
    print(f"{outcome.model}: {said} ({outcome.log_dir})", flush=True)


def task_options(args: argparse.Namespace) -> dict[str, str]:
    """The `-T NAME=VALUE` options for every run, each name and value checked as the tasks
    check them, before any run starts."""
    given = named_pairs(args.task_args, "-T")
    check_names(given, "hss", recipe_place)
    for name, value in given.items():
        check(name, value)
    return given


def recipe_place(name: str, value: object) -> str | None:
    """Where the recipe takes `name`, given as `-T name=value`: the judge and the models
    are sent elsewhere with `--as`, and some of Inspect's options are the recipe's flags."""
    if name in ("grader", "judge"):
        return f"--as {judges()[0].name}={value} (the judge of Table 5 it replaces)"
    if name == "model":
        return f"--models NAME (Table 5's) or --as NAME={value}"
    if name in ("max_connections", "max_samples", "log_dir"):
        return f"--{name.replace('_', '-')} {value}"
    return None


def _models(args: argparse.Namespace) -> list[str] | None:
    return [m.strip() for m in args.models.split(",")] if args.models else None


def _judges(args: argparse.Namespace, aliases: Mapping[str, str]) -> int:
    if not args.logs:
        raise InputError(
            "recipe judges needs the logs to re-grade: hss-inspect recipe judges LOG_OR_FOLDER..."
        )
    from hss_inspect.report.logs import find_logs
    from hss_inspect.report.records import readable_headers

    logs = list(readable_headers(find_logs(args.logs)))  # a damaged one stops all, first
    if args.dry_run:
        for log in logs:
            for judge in judges()[1:]:
                roles = {GRADER_ROLE: grader_spec(judge, aliases)}
                print(inspect_score_command(log, f"{PACKAGE}/rubric_judge", roles))
        return 0
    regrade(logs, aliases)
    print(f"re-graded {len(logs)} log(s); now: hss-inspect agreement " + shlex.join(args.logs))
    return 0


def write_flow(args: argparse.Namespace, aliases: Mapping[str, str]) -> int:
    """Write the recipe's plan as an Inspect Flow spec and read it back with Flow's loader."""
    out: Path = args.flow
    runs = with_task_args(plan_recipe(args.name, _models(args), aliases), task_options(args))
    options = [("--as", v) for v in args.aliases] + [("-T", v) for v in args.task_args]
    origin = FlowOrigin(args.name, out, args.log_dir, args.models, tuple(options))
    read_back = write_spec(runs, origin)
    if read_back is None:
        print(f"wrote {out}: {len(runs)} tasks (not read back: {INSTALL_HINT})")
    else:
        print(f"wrote {out}: {read_back} tasks, read back by Inspect Flow's loader")
    return 0
