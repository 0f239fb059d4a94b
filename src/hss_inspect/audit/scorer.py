"""The audit's scorer: the production judge (`scorer.run_judge`: same prompt, reading and
re-asks) grades the known answer, and each verdict is checked against construction.

`Score.value` holds counts (see `tally.Tally`), so they add up across epochs and groups;
the metric turns them into false-pass and false-fail rates with intervals.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import get_model
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    metric,
    score_reducer,
    scorer,
)
from inspect_ai.solver import TaskState

from hss_inspect.audit.kinds import KIND_NAMES
from hss_inspect.audit.tally import (
    GRADING_FAILURE,
    SKIPPED,
    Labelled,
    Tally,
    summary_metrics,
    tally_of,
    total,
)
from hss_inspect.core.markdown import table
from hss_inspect.core.roles import GRADER_ROLE, require_grader
from hss_inspect.core.settings import DEFAULT_JUDGE_RETRIES
from hss_inspect.data.rows import Criterion
from hss_inspect.grading.judge import Verdict, criteria_of, criterion_outcomes, judge_prompts
from hss_inspect.grading.scorer import judge_metadata, run_judge


@metric(name="audit")
def audit_metrics() -> Metric:
    """False-pass and false-fail rates with 95% Wilson intervals, overall and per group."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return summary_metrics([labelled(s) for s in scores], KIND_NAMES)

    return compute


def labelled(sample_score: SampleScore) -> Labelled:
    meta = sample_score.sample_metadata or {}
    value = sample_score.score.value
    if not isinstance(value, dict):
        raise ValueError(f"judge_audit: sample {sample_score.sample_id} has no audit counts")
    return Labelled(
        kind=str(meta.get("audit_kind", "")),
        media_type=str(meta.get("media_type", "")),
        subdomain=str(meta.get("subdomain", "")),
        tally=Tally.from_value(value),
    )


@score_reducer(name="audit_sum")
def audit_sum() -> ScoreReducer:
    """Adds the counts of every epoch: each epoch is one more judging of the same answer."""

    def reduce(scores: list[Score]) -> Score:
        summed = total(Tally.from_value(s.value) for s in scores if isinstance(s.value, dict))
        return Score(value=summed.as_value())

    return reduce


@scorer(metrics=[audit_metrics()])
def judge_audit(retries: int = DEFAULT_JUDGE_RETRIES, prompts_file: str = "judge.yaml") -> Scorer:
    """Grades the submitted known answer with the production judge and checks each verdict."""
    prompts = judge_prompts(prompts_file)

    async def score(state: TaskState, target: Target) -> Score:
        require_grader()
        audit = state.metadata["audit"]
        if audit["skipped"]:
            return skipped_score(audit)
        grader = get_model(role=GRADER_ROLE, required=True)
        criteria = criteria_of(state.metadata)
        answer = str(audit["text"])
        session = await run_judge(grader, prompts, state, criteria, answer, retries)
        meta = {**judge_metadata(session, grader, prompts, state), "audit": audit}
        if session.reading is None:
            return Score(
                value=GRADING_FAILURE.as_value(),
                answer=answer,
                explanation=f"Grading failure: the judge's reply was unreadable after "
                f"{len(session.replies)} attempt(s); this variant is counted as a grading "
                "failure, not as an error of either sign.",
                metadata={**meta, "grading_failure": True},
            )
        outcomes = criterion_outcomes(criteria, session.reading.verdicts)
        judged = {v.id: v.met for v in outcomes}
        expected: dict[str, bool] = audit["expected"]
        return Score(
            value=tally_of(expected, judged).as_value(),
            answer=answer,
            explanation=audit_table(criteria, expected, outcomes),
            metadata={
                **meta,
                "verdicts": [
                    {"id": v.id, "met": v.met, "justification": v.justification} for v in outcomes
                ],
            },
        )

    return score


def skipped_score(audit: dict[str, Any]) -> Score:
    perturber = audit.get("perturber", {})
    problems = perturber.get("problems") or ["no reply"]
    return Score(
        value=SKIPPED.as_value(),
        answer="",
        explanation=(
            f"Skipped: the perturber gave no usable {perturber.get('source_kind')} variant "
            f"in {len(perturber.get('replies', []))} attempt(s) (last problem: {problems[-1]}). "
            "The judge was not asked; the variant is counted as skipped."
        ),
        metadata={"audit": audit},
    )


def audit_table(
    criteria: list[Criterion], expected: dict[str, bool], outcomes: list[Verdict]
) -> str:
    """Markdown: each criterion's known verdict beside the judge's, errors named."""
    rows = []
    for criterion, verdict in zip(criteria, outcomes, strict=True):
        known = expected[criterion.id]
        error = (
            "" if known == verdict.met else ("**false pass**" if verdict.met else "**false fail**")
        )
        verdicts = [_met(known), _met(verdict.met), error]
        rows.append([criterion.id, criterion.title, *verdicts, verdict.justification])
    return table(["id", "criterion", "known", "judge", "error", "justification"], rows)


def _met(value: bool) -> str:
    return "met" if value else "not met"
