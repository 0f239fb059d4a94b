"""The paper's experiments as plans of runs (pure): each recipe's models with their
settings from the paper's registry (`task_configs/paper_models.yaml`, Table 5), the task
options of the experiment, the attempts and the judge.

`hss-inspect recipe` runs a plan (`recipes.run`); `hss-inspect prepare --recipe`
prepares the media its runs will send.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hss_inspect.core.command_line import inspect_eval_command
from hss_inspect.core.errors import InputError
from hss_inspect.core.names import unknown_text
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.providers.model_names import NEWER_INSPECT, check_model_name
from hss_inspect.providers.paper_models import (
    TABLE5_LISTED,
    Deployment,
    deployment,
    deployments,
    generate_settings,
    judge_settings,
    judges,
    paper_data,
)
from hss_inspect.providers.paper_models import request_settings as paper_request

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
        """The same run as an Inspect Flow task (`hss_inspect.recipes.flow`)."""
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
    check_aliases(aliases)
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


def check_aliases(aliases: Mapping[str, str]) -> None:
    """Every `--as NAME=MODEL` names a model or judge of Table 5 (another is never used),
    and a MODEL that is not a slip of a model Inspect or Table 5 knows."""
    known = [d.name for d in deployments() + judges()]
    for name, model in aliases.items():
        if name not in known:
            what = "a model or judge of the paper's Table 5 (--as NAME=MODEL)"
            raise InputError(unknown_text(name, what, known, TABLE5_LISTED))
        check_model_name(model, f"--as {name}=MODEL", NEWER_INSPECT)


def _models_of(
    name: str, sweeps: dict[str, Any], chosen: Sequence[str] | None
) -> list[tuple[Deployment, list[Any]]]:
    """The recipe's models with their sweep levels (effort names or frame budgets)."""
    budgets = list(sweeps["frames"]["budgets"])
    if chosen:
        known = [m.name for m in deployments()]
        for model in chosen:
            if model not in known:
                what = "a model of the paper's Table 5 (--models)"
                raise InputError(unknown_text(model, what, known, TABLE5_LISTED))
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
