"""A recipe's plan run as one Inspect eval set (`run_plan`, which resumes an interrupted
folder), or one eval set a model, each in its own process (`run_share`, the job
`recipes.processes` gives each process), and logs graded again with the paper's other
judges (`regrade`, App. I)."""

from __future__ import annotations

import contextvars
from collections.abc import Mapping, Sequence
from typing import Any

from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.providers.paper_models import judges
from hss_inspect.recipes.plans import PlannedRun, grader_spec, with_task_args
from hss_inspect.recipes.processes import ModelShare


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
    # In a copy of the context: eval_set resolves its tasks in the caller's context, whose
    # model roles would otherwise outlive the call (core.roles.roles_resolved reads them).
    success, _ = contextvars.copy_context().run(eval_set, tasks, log_dir=log_dir, **eval_set_args)
    return bool(success)


def run_share(
    share: ModelShare, task_args: Mapping[str, Any], eval_set_args: Mapping[str, Any]
) -> bool:
    """One model's runs as their own eval set, in their own folder (a process's job)."""
    return run_plan(share.runs, share.log_dir, task_args, **eval_set_args)


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


def regrade(logs: Sequence[str], aliases: Mapping[str, str] = {}) -> list[str]:
    """Grade the answers in each log again with each other judge of Table 5, appending
    one scorer per judge to the log in place (App. I)."""
    from inspect_ai import score
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import GenerateConfig, get_model

    from hss_inspect.grading.scorer import rubric_judge
    from hss_inspect.report.logs import reading

    chosen = judges()[1:]
    for path in logs:
        with reading(path):
            log = read_eval_log(path)
        for judge in chosen:
            spec = grader_spec(judge, aliases)
            grader = get_model(spec.pop("model"), config=GenerateConfig(**spec))
            log = score(log, rubric_judge(), model_roles={GRADER_ROLE: grader}, action="append")
        write_eval_log(log, path)
    return list(logs)
