"""The paper's experiments as runnable recipes over Inspect's `eval_set`.

Each recipe is a plan (pure: `plan_recipe`) of runs built from the paper's registry
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
import dataclasses
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hss_inspect.commands import flow
from hss_inspect.core.command_line import inspect_eval_command
from hss_inspect.core.errors import InputError
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.report.paper import (
    Deployment,
    deployment,
    deployments,
    generate_settings,
    judge_settings,
    judges,
    paper_data,
)
from hss_inspect.report.paper import request_settings as paper_request

RECIPES: dict[str, str] = {
    "table1": "every model of Table 1, 3 attempts, primary judge",
    "blind": "the blind control: GPT-6-astra without media, 3 attempts (Table 1)",
    "effort": "the reasoning-effort sweep of App. G, 1 attempt per level",
    "frames": "the frame-budget sweep of App. H: video tasks at 10..500 frames, 1 attempt",
    "judges": "re-grade logs with the two other judges of Table 5 (App. I)",
}
PACKAGE = "hss_inspect"


@dataclass(frozen=True)
class PlannedRun:
    """One eval of a recipe: task, options, model with its settings, attempts, judge."""

    task: str
    model: str
    epochs: int
    generate: dict[str, Any]
    grader: dict[str, Any]
    task_args: dict[str, Any] = field(default_factory=dict)

    @property
    def registry_name(self) -> str:
        return f"{PACKAGE}/{self.task}"

    def command_line(self) -> str:
        """The same run as an `inspect eval` command."""
        return inspect_eval_command(
            self.registry_name,
            self.model,
            self.generate,
            self.task_args,
            {GRADER_ROLE: self.grader},
            options=[("epochs", self.epochs)],
        )

    def flow_task(self) -> dict[str, Any]:
        """The same run as an Inspect Flow task (`hss_inspect.commands.flow`)."""
        grader = dict(self.grader)
        judge = {"name": grader.pop("model"), **({"config": grader} if grader else {})}
        return {
            "name": self.registry_name,
            **({"args": dict(self.task_args)} if self.task_args else {}),
            "model": self.model,
            "config": dict(self.generate),
            "model_roles": {GRADER_ROLE: judge},
            "epochs": self.epochs,
        }


def grader_spec(judge: Deployment, aliases: Mapping[str, str] = {}) -> dict[str, Any]:
    """The judge's `--model-role grader=...` at its Table 5 settings, or an alias of it."""
    return {**judge_settings(judge), "model": aliases.get(judge.name, judge.inspect_model)}


def plan_recipe(
    name: str,
    models: Sequence[str] | None = None,
    aliases: Mapping[str, str] = {},
) -> list[PlannedRun]:
    """The runs of a recipe; for `judges`, the runs whose answers App. I re-grades.

    `models` narrows it to some of the paper's models (names as in Table 5), `aliases`
    points a model or judge name at another Inspect model."""
    if name not in RECIPES:
        raise InputError(f"unknown recipe {name!r}: use one of {', '.join(RECIPES)}")
    grader = grader_spec(judges()[0], aliases)
    epochs = paper_request()["epochs"]
    sweeps = paper_data()["sweeps"]
    runs: list[PlannedRun] = []
    for model, levels in _models_of(name, sweeps, models):
        target = aliases.get(model.name, model.inspect_model)
        for task, effort, task_args, attempts in _variants(name, model, levels, sweeps, epochs):
            runs.append(
                PlannedRun(
                    task, target, attempts, generate_settings(model, effort), grader, task_args
                )
            )
    return runs


def _models_of(
    name: str, sweeps: dict[str, Any], chosen: Sequence[str] | None
) -> list[tuple[Deployment, list[Any]]]:
    """The recipe's models with their sweep levels (effort names or frame budgets)."""
    budgets = list(sweeps["frames"]["budgets"])
    if chosen:
        known = {m.name for m in deployments()}
        unknown = [c for c in chosen if c not in known]
        if unknown:
            raise InputError(f"not a model of Table 5: {', '.join(unknown)}")
        names = list(chosen)
    elif name == "table1":
        names = [m.name for m in deployments()]
    elif name == "blind":
        names = [c["model"] for c in paper_data()["controls"]]
    elif name == "judges":
        names = list(sweeps["judges"]["models"])
    else:
        names = list(sweeps["effort"]) if name == "effort" else list(sweeps["frames"]["models"])
    if name == "effort":
        return [(deployment(n), _effort_levels(n, sweeps)) for n in names]
    return [(deployment(n), budgets if name == "frames" else []) for n in names]


def _effort_levels(model: str, sweeps: dict[str, Any]) -> list[str]:
    levels = sweeps["effort"].get(model)
    if levels is None:
        swept = ", ".join(sweeps["effort"])
        raise InputError(f"the paper gives no effort levels for {model}; App. G sweeps {swept}")
    return list(levels)


def _variants(
    name: str, model: Deployment, levels: list[Any], sweeps: dict[str, Any], epochs: int
) -> list[tuple[str, str | None, dict[str, Any], int]]:
    """(task, effort override, task options, attempts) of each run for one model."""
    if name in ("table1", "judges"):
        return [("hss", None, {}, epochs)]
    if name == "blind":
        return [("hss_blind", None, {}, epochs)]
    if name == "effort":
        return [("hss", level, {}, 1) for level in levels]
    # Frames: every model gets frames (not the clip) so that the budget is what varies.
    return [("hss_video", None, {"max_frames": int(b), "native_video": "false"}, 1) for b in levels]


def with_task_args(runs: Sequence[PlannedRun], task_args: Mapping[str, Any]) -> list[PlannedRun]:
    """The runs with `task_args` (dataset, revision, ...) added to every task's own."""
    return [dataclasses.replace(r, task_args={**r.task_args, **task_args}) for r in runs]


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


def _pairs(values: Sequence[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, sep, target = value.partition("=")
        if not sep or not name or not target:
            raise InputError(f"{option} takes NAME=VALUE, got {value!r}")
        pairs[name.strip()] = target.strip()
    return pairs


def run(args: argparse.Namespace) -> int:
    aliases = _pairs(args.aliases, "--as")
    if args.flow:
        return write_flow(args, aliases)
    if args.name == "judges":
        return _judges(args, aliases)
    runs = plan_recipe(args.name, _models(args), aliases)
    task_args = _pairs(args.task_args, "-T")
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
    from hss_inspect.report.records import find_logs

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
        plan_recipe(args.name, _models(args), aliases), _pairs(args.task_args, "-T")
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
