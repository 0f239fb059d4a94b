"""The audit's answers as an Inspect solver: the variant of the sample's kind is submitted
as the answer, so the production scorer's judge grades it like any model's answer."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageUser,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from hss_inspect.audit.cache import VariantKey, cached_perturbation
from hss_inspect.audit.kinds import KIND_BY_NAME, Maker, expected_verdicts
from hss_inspect.audit.perturber import Perturbation, perturb, perturber_prompts
from hss_inspect.audit.variants import Variant, hedge_variant, rule_texts, rule_variant
from hss_inspect.conditions import prompt
from hss_inspect.core.roles import PERTURBER_ROLE, require_grader, require_role
from hss_inspect.core.settings import DEFAULT_PERTURBER_RETRIES
from hss_inspect.grading.judge import criteria_of, graded_task_of

AUDIT_MODEL_NAME = "hss_judge_audit"


def require_perturber(task_id: str | None, kind: str) -> None:
    where = f"task {task_id}, kind {kind}" if task_id else f"kind {kind}"
    require_role(
        PERTURBER_ROLE,
        (
            f"hss_judge_audit: {where}: this variant is written by a model "
            f"bound to the role '{PERTURBER_ROLE}', and none is. Add --model-role "
            f"{PERTURBER_ROLE}=<provider/model>, or choose only rule-made kinds with "
            "-T kinds=reference,injection,vague."
        ),
    )


def needs_perturber(kinds: list[str]) -> str | None:
    """The first of `kinds` whose variant the perturber writes (directly or as a source)."""
    for name in kinds:
        kind = KIND_BY_NAME[name]
        if kind.made_by is not Maker.RULE or kind.built_from is not None:
            return name
    return None


@solver
def audit_answer(  # inspect-evals-lint: ignore[custom_solver_tests] -- run by test_audit_eval
    perturber_retries: int = DEFAULT_PERTURBER_RETRIES,
    perturber_kind: str | None = None,
) -> Solver:
    """Submit the sample's known answer (its kind in metadata `audit_kind`) as the answer.

    With `perturber_kind` (a chosen kind the perturber writes), every sample refuses to
    start without a perturber, before the judge grades anything.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_grader()
        if perturber_kind is not None:
            require_perturber(state.metadata["task_id"], perturber_kind)
        variant, record = await variant_for(state.metadata, perturber_retries)
        state.metadata["audit"] = record
        state.messages = [ChatMessageUser(content=prompt.question_text(state.metadata["prompt"]))]
        text = variant.text if variant else ""
        state.output = ModelOutput.from_content(model=AUDIT_MODEL_NAME, content=text)
        if variant:
            state.messages.append(ChatMessageAssistant(content=text, model=AUDIT_MODEL_NAME))
        return state

    return solve


async def variant_for(
    metadata: dict[str, Any], retries: int
) -> tuple[Variant | None, dict[str, Any]]:
    """The sample's variant (None when the perturber could not write it) and its record."""
    kind = KIND_BY_NAME[metadata["audit_kind"]]
    reference = str(metadata["golden_response"])
    record: dict[str, Any] = {"kind": kind.name, "expectation": kind.expectation.value}
    if kind.made_by is Maker.RULE and kind.built_from is None:
        variant: Variant | None = rule_variant(kind.name, reference, rule_texts())
    else:
        source = await perturbed(kind.built_from or kind.name, metadata, retries)
        perturbation, record["perturber"] = source
        variant = perturbation.variant
        if variant is not None and kind.built_from:
            variant = hedge_variant(reference, variant, metadata["task_id"], rule_texts())
    return variant, {**record, **variant_record(variant, metadata)}


def variant_record(variant: Variant | None, metadata: dict[str, Any]) -> dict[str, Any]:
    if variant is None:
        return {"skipped": True, "text": None, "target": None, "expected": None}
    ids = [c.id for c in criteria_of(metadata)]
    return {
        "skipped": False,
        "text": variant.text,
        "variant_sha256": variant.sha256,
        "target": variant.target,
        "made_by": variant.made_by,
        "expected": expected_verdicts(KIND_BY_NAME[variant.kind], ids, variant.target),
    }


async def perturbed(
    kind: str, metadata: dict[str, Any], retries: int
) -> tuple[Perturbation, dict[str, Any]]:
    """The perturber's variant of this kind for this task, from the cache or written now."""
    require_perturber(metadata["task_id"], kind)
    model = get_model(role=PERTURBER_ROLE, required=True)
    prompts = perturber_prompts()
    key = VariantKey(
        task_id=metadata["task_id"],
        rubric_sha256=metadata["rubric_sha256"],
        kind=kind,
        perturber_model=str(model),
        perturber_prompt_sha256=prompts.sha256(kind),
    )

    async def write() -> Perturbation:
        return await perturb(
            model,
            prompts,
            kind,
            graded_task_of(metadata),
            retries=retries,
        )

    perturbation, cached = await cached_perturbation(key, write)
    return perturbation, {
        "source_kind": kind,
        "model": key.perturber_model,
        "prompt_sha256": key.perturber_prompt_sha256,
        "cached": cached,
        "cache_key": key.digest,
        "replies": perturbation.replies,
        "problems": perturbation.problems,
    }
