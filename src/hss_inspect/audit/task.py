"""The body of the `hss_judge_audit` task (its signature lives in hss_inspect.task)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task

from hss_inspect import options as opt
from hss_inspect.audit.dataset import SAMPLE_SEED, build_audit_dataset, sample_rows
from hss_inspect.audit.kinds import resolve_kinds
from hss_inspect.audit.perturber import perturber_prompts
from hss_inspect.audit.report import AUDIT_CONDITION
from hss_inspect.audit.scorer import audit_sum, judge_audit
from hss_inspect.audit.solver import audit_answer, needs_perturber
from hss_inspect.judge import judge_prompts
from hss_inspect.release import Release
from hss_inspect.rows import OptionList, TaskRow, as_list
from hss_inspect.versioning import comparability_version, task_version


def build_audit_task(
    release: Release,
    selected: list[TaskRow],
    requested: dict[str, Any],
    selection: dict[str, Any],
    kinds: OptionList,
    sample_tasks: Any,
    judge_retries: Any,
    perturber_retries: Any,
) -> Task:
    """The audit of the selected rows (the task function has checked the shared options)."""
    chosen_kinds = resolve_kinds(as_list(kinds))
    count = opt.optional_whole_number("sample_tasks", sample_tasks, 1)
    retries = opt.whole_number("judge_retries", judge_retries, 0)
    re_asks = opt.whole_number("perturber_retries", perturber_retries, 0)
    rows = sample_rows(selected, count)
    prompts = perturber_prompts()
    return Task(
        dataset=build_audit_dataset(release, rows, chosen_kinds),
        solver=audit_answer(
            perturber_retries=re_asks, perturber_kind=needs_perturber(chosen_kinds)
        ),
        scorer=judge_audit(retries=retries),
        epochs=Epochs(1, audit_sum()),
        version=comparability_version(),
        metadata={
            "hss_task_version": task_version(),
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
