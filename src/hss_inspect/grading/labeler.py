"""The failure-cause labeller (paper Sec. 3.2, App. D) as an Inspect scorer.

For each attempt the rubric judge failed (a graded zero, not a grading failure or a
model error), the model bound to the role `labeler` names the primary cause from the
question, the reference answer and the answer. An empty answer is labelled "no
committed answer" without a call. A reply that names no valid cause is re-asked up to
`retries` times, then the attempt is recorded as unlabelled, never guessed.

Passed and ungraded attempts, and attempts after the first (the paper labels first
attempts), get no label: the scorer returns no score for them.
It runs after `rubric_judge` in the same eval (`-T labeler=true`), or afterwards on a
log: `inspect score --scorer hss_inspect/failure_cause --action append
--model-role labeler=<model> LOG`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    Model,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from hss_inspect.core.errors import SetupError
from hss_inspect.core.roles import LABELER_ROLE, require_labeler
from hss_inspect.core.settings import DEFAULT_LABELER_RETRIES
from hss_inspect.grading.asking import Exchange, converse, model_reply
from hss_inspect.grading.causes import (
    FAMILIES,
    NO_ANSWER_FAMILY,
    Label,
    LabelerPrompts,
    Taxonomy,
    labeler_prompts,
    parse_label,
    render_label_request,
    render_label_retry,
    taxonomy,
)
from hss_inspect.grading.judge import UnreadableReply, graded_task_of
from hss_inspect.grading.metrics import REFUSAL

RUBRIC_SCORER = "rubric_judge"
UNLABELLED = "unlabelled"
ALL_FAMILIES: tuple[str, ...] = (*FAMILIES, NO_ANSWER_FAMILY)
NO_RUBRIC_MESSAGE = (
    "failure_cause labels attempts the rubric judge failed, and this sample has no "
    "rubric_judge score. Run it after the judge (-T labeler=true), or on a graded log "
    "with `inspect score --scorer hss_inspect/failure_cause --action append`."
)


@dataclass
class LabelSession(Exchange):
    label: Label | None = None


def label_value(causes: Taxonomy, cause: str) -> dict[str, float]:
    """1 for the label's family, 0 for the others; NaN for all when unlabelled.

    Numbers, so any epoch reducer and the metric below can average them; the cause id
    itself is in the score's metadata (`cause`).
    """
    family = causes.family_of(cause) if cause != UNLABELLED else None
    value = {f: math.nan if family is None else float(f == family) for f in ALL_FAMILIES}
    return {"labelled": float(family is not None), **value}


@metric(name="failure_families")
def failure_families() -> Metric:
    """Failures labelled, unlabelled, and each family's share of the labelled ones."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        values = [s.score.value for s in scores if isinstance(s.score.value, dict)]
        labelled = [v for v in values if v.get("labelled") == 1]
        shares = {
            f: sum(float(v.get(f, 0.0)) for v in labelled) / len(labelled) if labelled else math.nan
            for f in ALL_FAMILIES
        }
        return {"labelled": len(labelled), "unlabelled": len(values) - len(labelled), **shares}

    return compute


@scorer(metrics=[failure_families()])
def failure_cause(
    retries: int = DEFAULT_LABELER_RETRIES, first_attempt_only: bool = True
) -> Scorer:
    """The primary cause of each failed attempt, named by the `labeler` role.

    As in the paper, only first attempts (epoch 1) are labelled unless
    `first_attempt_only` is false.
    """
    causes, prompts = taxonomy(), labeler_prompts()

    async def score(state: TaskState, target: Target) -> Score | None:
        require_labeler()
        if first_attempt_only and state.epoch != 1:
            return None
        judged = rubric_value(state)
        if not graded_failure(judged):
            return None
        # a refusal's text is the provider's message, not an answer
        answer = state.output.completion.strip() if state.output else ""
        if not answer or judged.get(REFUSAL):
            return Score(
                value=label_value(causes, causes.no_answer.id),
                answer="",
                explanation="The answer is empty: no committed answer (no labeller call).",
                metadata=label_metadata(causes, prompts, causes.no_answer.id, LabelSession()),
            )
        labeler = get_model(role=LABELER_ROLE, required=True)
        session = await run_labeler(labeler, prompts, causes, state, answer, retries)
        return labelled_score(session, labeler, prompts, causes, answer)

    return score


def rubric_value(state: TaskState) -> dict[str, Any]:
    """The rubric judge's value for this attempt, found by its shape (a `pass` key)."""
    scores = state.scores or {}
    for found in scores.values():
        if isinstance(found.value, dict) and "pass" in found.value:
            return found.value
    if RUBRIC_SCORER in scores:
        return {}  # unscored (a grading failure): nothing to label
    raise SetupError(NO_RUBRIC_MESSAGE)


def graded_failure(value: dict[str, Any]) -> bool:
    """A failed attempt the judge could grade: pass is 0, not NaN, and no error flags."""
    passed = value.get("pass")
    if not isinstance(passed, int | float) or math.isnan(passed):
        return False
    if value.get("grading_failure") or value.get("model_error"):
        return False
    return passed == 0


async def run_labeler(
    labeler: Model,
    prompts: LabelerPrompts,
    causes: Taxonomy,
    state: TaskState,
    answer: str,
    retries: int,
) -> LabelSession:
    request = render_label_request(prompts, causes, graded_task_of(state.metadata), answer)
    session = LabelSession()

    def read(reply: str) -> str | None:
        try:
            session.label = parse_label(reply, causes)
        except UnreadableReply as exc:
            return str(exc)
        return None

    await converse(
        model_reply(labeler),
        prompts.system,
        request,
        read,
        lambda problem: render_label_retry(prompts, causes, problem),
        retries,
        session,
    )
    return session


def labelled_score(
    session: LabelSession,
    labeler: Model,
    prompts: LabelerPrompts,
    causes: Taxonomy,
    answer: str,
) -> Score:
    cause = session.label.cause if session.label else UNLABELLED
    metadata = {
        **label_metadata(causes, prompts, cause, session),
        "labeler_model": str(labeler),
        "labeler_config": labeler.config.model_dump(exclude_none=True),
    }
    if session.label is None:
        explanation = (
            f"Unlabelled: the labeller's reply named no valid cause after "
            f"{len(session.replies)} attempt(s) ({session.problems[-1]})."
        )
    else:
        explanation = f"{causes.name_of(cause)} ({causes.family_of(cause)}): " + (
            session.label.explanation
        )
    return Score(
        value=label_value(causes, cause), answer=answer, explanation=explanation, metadata=metadata
    )


def label_metadata(
    causes: Taxonomy, prompts: LabelerPrompts, cause: str, session: LabelSession
) -> dict[str, Any]:
    return {
        "cause": cause,
        "family": causes.family_of(cause) if cause != UNLABELLED else None,
        "labeler_attempts": len(session.replies),
        "labeler_replies": session.replies,
        "labeler_problems": session.problems,
        "labeler_prompt_sha256": prompts.sha256,
        "taxonomy_version": causes.version,
    }
