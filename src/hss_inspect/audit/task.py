"""The body of the `hss_judge_audit` task (its signature lives in hss_inspect.task)."""

from __future__ import annotations

from importlib.metadata import version

from inspect_ai import Epochs, Task

from hss_inspect.audit.dataset import SAMPLE_SEED, build_audit_dataset, sample_rows
from hss_inspect.audit.kinds import resolve_kinds
from hss_inspect.audit.perturber import perturber_prompts
from hss_inspect.audit.report import AUDIT_CONDITION
from hss_inspect.audit.scorer import audit_sum, judge_audit
from hss_inspect.audit.solver import audit_answer
from hss_inspect.judge import judge_prompts
from hss_inspect.release import open_release
from hss_inspect.rows import OptionList, as_list, select_rows


def build_audit_task(
    dataset: str,
    revision: str,
    media: str,
    domains: OptionList,
    subdomains: OptionList,
    kinds: OptionList,
    sample_tasks: int | None,
    judge_retries: int,
    perturber_retries: int,
) -> Task:
    chosen_kinds = resolve_kinds(as_list(kinds))
    release = open_release(dataset, revision)
    selected = select_rows(release.read_rows(), media, domains, subdomains)
    rows = sample_rows(selected, None if sample_tasks is None else int(sample_tasks))
    prompts = perturber_prompts()
    return Task(
        dataset=build_audit_dataset(release, rows, chosen_kinds),
        solver=audit_answer(perturber_retries=int(perturber_retries)),
        scorer=judge_audit(retries=int(judge_retries)),
        epochs=Epochs(1, audit_sum()),
        version=version("hss-inspect"),
        metadata={
            "hss_condition": AUDIT_CONDITION,
            "hss_dataset": release.description,
            "hss_dataset_requested": {"dataset": dataset, "revision": revision},
            "hss_dataset_revision": release.revision,
            "hss_dataset_pinned": release.revision is not None and release.revision == revision,
            "hss_selection": {
                "media": media,
                "domains": as_list(domains),
                "subdomains": as_list(subdomains),
                "tasks": len(rows),
                "of_tasks": len(selected),
                "sample_seed": SAMPLE_SEED if sample_tasks is not None else None,
            },
            "hss_audit_kinds": chosen_kinds,
            "hss_judge_retries": int(judge_retries),
            "hss_perturber_retries": int(perturber_retries),
            "hss_judge_prompt_sha256": judge_prompts().sha256,
            "hss_perturber_prompt_sha256": {k: prompts.sha256(k) for k in prompts.kinds},
        },
    )
