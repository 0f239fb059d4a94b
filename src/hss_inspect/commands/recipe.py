"""The paper's experiments as runnable recipes over Inspect's `eval_set`.

Each recipe is a plan (pure: `commands.plans.plan_recipe`) of runs built from the paper's registry
(`task_configs/paper_models.yaml`, Table 5): the model, its reasoning effort and output
ceiling, the 1200 s timeout and 5 retries, the primary judge at its Table 5 settings,
and the task options of the experiment. `run_plan` hands the plan to `eval_set`, which
resumes an interrupted folder; `regrade` re-scores logs with the other judges.

`--flow OUT.py` (or `.yaml`) writes the same plan as an Inspect Flow spec instead
(`hss_inspect.commands.flow`); for `judges` that is the runs whose answers App. I
re-grades, the five models at their Table 1 settings.
"""

from __future__ import annotations

import argparse
import contextvars
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hss_inspect.commands import flow
from hss_inspect.commands.plans import (
    RECIPES,
    PlannedRun,
    grader_spec,
    named_pairs,
    plan_recipe,
    with_task_args,
)
from hss_inspect.core.errors import InputError
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.report.paper import (
    judges,
    paper_data,
)


def run_plan(
    runs: Sequence[PlannedRun],
    log_dir: str,
    task_args: Mapping[str, Any] = {},
    **eval_set_args: Any,
) -> bool:
    """Run the plan as one eval set (resumable); `task_args` (dataset, revision, ...) go
    to every task. Returns whether every eval finished."""
    from inspect_ai import eval_set, task_with
    from inspect_ai.model import GenerateConfig, get_model

    tasks = []
    for run in with_task_args(runs, task_args):
        grader = dict(run.grader)
        grader_model = get_model(grader.pop("model"), config=GenerateConfig(**grader))
        tasks.append(
            task_with(
                contextvars.copy_context().run(_build_for_model, run),
                model=run.model,
                config=GenerateConfig(**run.generate),
                model_roles={GRADER_ROLE: grader_model},
                epochs=run.epochs,
            )
        )
    success, _ = eval_set(tasks, log_dir=log_dir, **eval_set_args)
    return bool(success)


def _build_for_model(run: PlannedRun) -> Any:
    """The run's task built as `inspect eval` (and Inspect Flow) build it: with its model
    active, so the task checks the provider's limits and records them. Called in a copy
    of the context, so the active model does not outlive the call."""
    from inspect_ai.model import get_model

    # Private, as no public API makes a model active before a task is built; Inspect's
    # eval and Inspect Flow both call it there. Pinned by tests/test_report_e2e.py (the
    # limits recorded) and tests/test_flow.py (the same metadata as Flow's).
    from inspect_ai.model._model import (
        init_active_model,  # inspect-evals-lint: ignore[private_api_imports] -- see above
    )

    from hss_inspect import task as hss_tasks

    model = get_model(run.model)
    init_active_model(model, model.config)
    return getattr(hss_tasks, run.task)(**run.task_args)


def regrade(
    logs: Sequence[str], aliases: Mapping[str, str] = {}, judge_names: Sequence[str] = ()
) -> list[str]:
    """Grade the answers in each log again with each other judge of Table 5 (or those
    named), appending one scorer per judge to the log in place (App. I)."""
    from inspect_ai import score
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import GenerateConfig, get_model

    from hss_inspect.grading.scorer import rubric_judge

    chosen = [j for j in judges()[1:] if not judge_names or j.name in judge_names]
    for path in logs:
        log = read_eval_log(path)
        for judge in chosen:
            spec = grader_spec(judge, aliases)
            grader = get_model(spec.pop("model"), config=GenerateConfig(**spec))
            log = score(log, rubric_judge(), model_roles={GRADER_ROLE: grader}, action="append")
        write_eval_log(log, path)
    return list(logs)


# ---- the `hss-inspect recipe` command ---------------------------------------------------


def add_arguments(recipe: argparse.ArgumentParser) -> None:
    recipe.description = "\n".join(f"{name}: {text}" for name, text in RECIPES.items())
    recipe.formatter_class = argparse.RawDescriptionHelpFormatter
    recipe.add_argument("name", choices=list(RECIPES))
    recipe.add_argument("logs", nargs="*", help="judges: the logs to re-grade (in place)")
    recipe.add_argument("--log-dir", default="logs", help="the eval set's folder")
    recipe.add_argument("--models", help="comma list of Table 5 model names (default: all)")
    recipe.add_argument(
        "--as",
        dest="aliases",
        action="append",
        default=[],
        metavar="NAME=MODEL",
        help="send a Table 5 model or judge to another Inspect model (repeatable)",
    )
    recipe.add_argument(
        "-T",
        dest="task_args",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="task option for every run, e.g. -T dataset=... -T revision=<commit>",
    )
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
    if args.flow:
        return write_flow(args, aliases)
    if args.name == "judges":
        return _judges(args, aliases)
    runs = plan_recipe(args.name, _models(args), aliases)
    task_args = named_pairs(args.task_args, "-T")
    if args.dry_run:
        for run in with_task_args(runs, task_args):
            print(run.command_line())
        return 0
    return 0 if run_plan(runs, args.log_dir, task_args) else 1


def _models(args: argparse.Namespace) -> list[str] | None:
    return [m.strip() for m in args.models.split(",")] if args.models else None


def _judges(args: argparse.Namespace, aliases: Mapping[str, str]) -> int:
    if not args.logs:
        raise InputError(
            "recipe judges needs the logs to re-grade: hss-inspect recipe judges LOG_OR_FOLDER..."
        )
    from hss_inspect.report.logs import find_logs

    logs = find_logs(args.logs)
    if args.dry_run:
        for judge in judges()[1:]:
            print(f"re-grade {len(logs)} log(s) with {grader_spec(judge, aliases)}")
        return 0
    regrade(logs, aliases)
    print(f"re-graded {len(logs)} log(s); now: hss-inspect agreement " + shlex.join(args.logs))
    return 0


def write_flow(args: argparse.Namespace, aliases: Mapping[str, str]) -> int:
    """Write the recipe's plan as an Inspect Flow spec and read it back with Flow's loader."""
    out: Path = args.flow
    runs = with_task_args(
        plan_recipe(args.name, _models(args), aliases), named_pairs(args.task_args, "-T")
    )
    data = flow.spec_data([r.flow_task() for r in runs], _log_dir_seen_from(out, args.log_dir))
    text = flow.spec_text(data, out, _flow_header(args, out))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    if not flow.flow_installed():
        print(f"wrote {out}: {len(runs)} tasks (not read back: {flow.INSTALL_HINT})")
        return 0
    loaded = flow.load_with_flow(out)
    print(f"wrote {out}: {len(loaded.tasks)} tasks, read back by Inspect Flow's loader")
    return 0


def _log_dir_seen_from(spec: Path, log_dir: str) -> str:
    """Flow reads a relative `log_dir` from the spec's folder; the recipe's is the cwd's."""
    if Path(log_dir).is_absolute():
        return log_dir
    return os.path.relpath(Path(log_dir).resolve(), spec.resolve().parent)


def _flow_subject(name: str) -> str:
    if name == "judges":
        count = len(paper_data()["sweeps"]["judges"]["models"])
        return f"the runs whose answers App. I re-grades: {count} models at their Table 1 settings"
    return RECIPES[name]


def _same_runs_as(args: argparse.Namespace) -> str:
    """The recipe command that makes the spec's runs."""
    if args.name != "judges":
        return f"hss-inspect recipe {args.name}"
    models = args.models or ",".join(paper_data()["sweeps"]["judges"]["models"])
    return f"hss-inspect recipe table1 --models {models}"


def _flow_header(args: argparse.Namespace, out: Path) -> str:
    words = ["hss-inspect", "recipe", args.name, "--flow", str(out), "--log-dir", args.log_dir]
    words += ["--models", args.models] if args.models else []
    for option, values in (("--as", args.aliases), ("-T", args.task_args)):
        for value in values:
            words += [option, value]
    lines = [
        f"Inspect Flow spec of the HSS recipe `{args.name}` — {_flow_subject(args.name)}.",
        "",
        f"Written by: {shlex.join(words)}",
        f"The runs are those `{_same_runs_as(args)}` makes with the same options",
        "(tasks, task options, generate options, epochs, judge), so the logs are the same",
        "and either finishes a log folder the other started.",
        "",
        f"Run:   flow run {out.name}     (needs: {flow.INSTALL_HINT})",
        f"Check: flow check {out.name}   (which tasks the log folder has complete)",
    ]
    if args.name == "judges":
        lines += [
            "These runs give the answers; App. I grades them again with the other judges:",
            "       hss-inspect recipe judges <the log_dir below>",
        ]
    return "\n".join(lines)
