"""The body of the `hss_judge_audit` task (its signature lives in hss_inspect.task)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task

from hss_inspect.audit.dataset import SAMPLE_SEED, build_audit_dataset, sample_rows
from hss_inspect.audit.kinds import resolve_kinds
from hss_inspect.audit.perturber import perturber_prompts
from hss_inspect.audit.report import AUDIT_CONDITION
from hss_inspect.audit.scorer import audit_sum, judge_audit
from hss_inspect.audit.solver import audit_answer, needs_perturber, require_perturber
from hss_inspect.core.roles import check_role_names, require_grader
from hss_inspect.data.release import Release
from hss_inspect.data.rows import TaskRow
from hss_inspect.grading.judge import judge_prompts


def build_audit_task(
    release: Release,
    selected: list[TaskRow],
    requested: dict[str, Any],
    selection: dict[str, Any],
    kinds: list[str],
    sample_tasks: int | None,
    judge_retries: int,
    perturber_retries: int,
    version: tuple[int, str],
    check_roles: bool = False,
) -> Task:
    """The audit of the selected rows (the task function has checked the shared options);
    `version` is the task version's N and its full `N-X` label."""
    chosen_kinds = resolve_kinds(kinds)
    perturber_kind = needs_perturber(chosen_kinds)
    if check_roles:  # else each sample checks them when it starts
        check_role_names()
        require_grader()
        if perturber_kind is not None:
            require_perturber(None, perturber_kind)
    count, retries, re_asks = sample_tasks, judge_retries, perturber_retries
    rows = sample_rows(selected, count)
    prompts = perturber_prompts()
    return Task(
        dataset=build_audit_dataset(release, rows, chosen_kinds),
        solver=audit_answer(perturber_retries=re_asks, perturber_kind=perturber_kind),
        scorer=judge_audit(retries=retries),
        epochs=Epochs(1, audit_sum()),
        version=version[0],
        metadata={
            "hss_task_version": version[1],
            "hss_condition": AUDIT_CONDITION,
            "hss_dataset": release.description,
            "hss_dataset_requested": requested,
            "hss_dataset_revision": release.revision,
            "hss_dataset_pinned": release.revision is not None
            and release.revision == requested.get("revision"),
            "hss_selection": {
                **selection,
                "tasks": len(rows),
                "of_tasks": len(selected),
                "sample_seed": SAMPLE_SEED if count is not None else None,
            },
            "hss_audit_kinds": chosen_kinds,
            "hss_judge_retries": retries,
            "hss_perturber_retries": re_asks,
            "hss_judge_prompt_sha256": judge_prompts().sha256,
            "hss_perturber_prompt_sha256": {k: prompts.sha256(k) for k in prompts.kinds},
        },
    )
