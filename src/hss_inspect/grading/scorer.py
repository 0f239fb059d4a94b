"""The rubric judge as an Inspect scorer: the model bound to the `grader` role grades all
criteria of one attempt in one call (paper Sec. 3.1 and App. C.3).

An answer the provider's policy filter refused (Inspect's `content_filter` stop, whose
text is the provider's message) is not graded: it is a no-answer zero counted as a
refusal, as the reference harness scores a failed generation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from inspect_ai.model import (
    Model,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from hss_inspect.core.roles import GRADER_ROLE, require_grader
from hss_inspect.core.settings import DEFAULT_JUDGE_RETRIES, POLICY_STOP
from hss_inspect.data.rows import Criterion, GradedTask
from hss_inspect.grading.asking import Exchange, Message, converse, model_reply
from hss_inspect.grading.judge import (
    JudgePrompts,
    JudgeReply,
    UnreadableReply,
    Verdict,
    criteria_of,
    criterion_outcomes,
    graded_task_of,
    judge_prompts,
    parse_judge_reply,
    pass_and_rubric,
    render_judge_request,
    render_retry,
    verdict_table,
)
from hss_inspect.grading.metrics import attempt_value, hss_metrics


@dataclass
class JudgeSession(Exchange):
    """The replies of one grading conversation and the best reading of them so far."""

    reading: JudgeReply | None = None


@scorer(metrics=[hss_metrics()])
def rubric_judge(retries: int = DEFAULT_JUDGE_RETRIES, prompts_file: str = "judge.yaml") -> Scorer:
    """All rubric criteria of an attempt graded in one call by the `grader` role."""
    prompts = judge_prompts(prompts_file)

    async def score(state: TaskState, target: Target) -> Score:
        require_grader()
        if state.metadata.get("model_error"):
            return model_error_score(state)
        if state.output and state.output.stop_reason == POLICY_STOP:
            return refusal_score(state)
        answer = state.output.completion.strip() if state.output else ""
        if not answer:
            return no_answer_score(state)
        grader = get_model(role=GRADER_ROLE, required=True)
        criteria = criteria_of(state.metadata)
        session = await run_judge(grader, prompts, state, criteria, answer, retries)
        return graded_score(session, grader, prompts, criteria, answer, state)

    return score


async def run_judge(
    grader: Model,
    prompts: JudgePrompts,
    state: TaskState,
    criteria: list[Criterion],
    answer: str,
    retries: int,
) -> JudgeSession:
    task = replace(graded_task_of(state.metadata), criteria=tuple(criteria))
    return await judge_answer(model_reply(grader), prompts, task, answer, retries)


async def judge_answer(
    reply: Callable[[list[Message]], Awaitable[str]],
    prompts: JudgePrompts,
    task: GradedTask,
    answer: str,
    retries: int,
) -> JudgeSession:
    """One grading conversation about `answer` with the judge `reply` stands for (an
    Inspect model, or lmms-eval's judge server): the request, then the re-asks."""
    request = render_judge_request(prompts, task, answer)
    session = JudgeSession()
    expected = [c.id for c in task.criteria]
    await converse(
        reply,
        prompts.system,
        request,
        lambda text: _read_reply(session, text, expected),
        lambda problem: render_retry(prompts, problem, task.criteria),
        retries,
        session,
    )
    return session


def _read_reply(session: JudgeSession, text: str, expected: list[str]) -> str | None:
    """Record a readable reply; the problem to re-ask about, or None when complete."""
    try:
        reading = parse_judge_reply(text, expected)
    except UnreadableReply as exc:
        return str(exc)
    session.reading = reading
    if reading.missing:
        return "it gave no verdict for criterion id(s) " + ", ".join(reading.missing)
    return None


def session_value(
    session: JudgeSession, criteria: Sequence[Criterion]
) -> tuple[dict[str, float], list[Verdict] | None]:
    """An attempt's Score.value from its grading conversation, with the verdicts; an
    unreadable conversation is a grading failure, left out of pass@1 (never a zero)."""
    if session.reading is None:
        return attempt_value(grading_failure=True), None
    outcomes = criterion_outcomes(criteria, session.reading.verdicts)
    passed, rubric = pass_and_rubric(criteria, outcomes)
    return attempt_value(passed=passed, rubric=rubric), outcomes


def graded_score(
    session: JudgeSession,
    grader: Model,
    prompts: JudgePrompts,
    criteria: list[Criterion],
    answer: str,
    state: TaskState,
) -> Score:
    judge_meta = {
        **judge_metadata(session, grader, prompts, state),
        "answer_usage": answer_usage(state),
    }
    value, outcomes = session_value(session, criteria)
    if session.reading is None or outcomes is None:
        return Score(
            value=value,
            answer=answer,
            explanation=(
                f"Grading failure: the judge's reply was unreadable after "
                f"{len(session.replies)} attempt(s) ({session.problems[-1]}). "
                "This attempt is left out of pass@1, not counted as a zero."
            ),
            metadata=judge_meta,
        )
    return Score(
        value=value,
        answer=answer,
        explanation=verdict_table(criteria, outcomes),
        metadata={
            **judge_meta,
            "verdicts": [
                {"id": v.id, "met": v.met, "justification": v.justification} for v in outcomes
            ],
            "missing_verdicts": list(session.reading.missing),
            "unexpected_verdicts": list(session.reading.unexpected),
            "overall_comment": session.reading.comment,
        },
    )


def judge_metadata(
    session: JudgeSession, grader: Model, prompts: JudgePrompts, state: TaskState
) -> dict[str, Any]:
    """What a score records about its grading: the judge, its prompt and every reply."""
    return {
        "judge_model": str(grader),
        "judge_config": grader.config.model_dump(exclude_none=True),
        "judge_prompt_sha256": prompts.sha256,
        "judge_attempts": len(session.replies),
        "judge_replies": session.replies,
        "judge_problems": session.problems,
        "rubric_sha256": state.metadata.get("rubric_sha256"),
    }


def no_answer_score(state: TaskState) -> Score:
    error = state.output.error if state.output else None
    return Score(
        value=attempt_value(passed=0, rubric=0.0, no_answer=True),
        answer="",
        explanation="No answer: the model returned no text"
        + (f" ({error})." if error else ".")
        + " Counted as a zero and as 'no answer'.",
        metadata={"output_error": error, "answer_usage": answer_usage(state)},
    )


def refusal_score(state: TaskState) -> Score:
    """The provider refused to answer on policy: a zero and a no-answer, counted as a
    refusal; its message is kept, never shown to the judge."""
    message = (state.output.error or state.output.completion).strip()
    return Score(
        value=attempt_value(passed=0, rubric=0.0, no_answer=True, refusal=True),
        answer="",
        explanation=(
            f"Refused: the provider's policy filter stopped the answer ({message[:300]}). "
            "Counted as a zero, as 'no answer' and as a refusal; the judge was not asked."
        ),
        metadata={
            "refusal": {"stop_reason": state.output.stop_reason, "message": message[-1000:]},
            "answer_usage": answer_usage(state),
        },
    )


def model_error_score(state: TaskState) -> Score:
    """A provider error that survived Inspect's retries under -T model_errors=omit: the
    attempt is left out for good, counted."""
    error = state.metadata["model_error"]
    return Score(
        value=attempt_value(model_error=True),
        answer="",
        explanation=(
            f"Model error: the provider failed after Inspect's retries ({error['type']}: "
            f"{error['message'][:300]}). With -T model_errors=omit this attempt is left out "
            "of pass@1 for good, not counted as a zero."
        ),
        metadata={"model_error": error, "answer_usage": None},
    )


def answer_usage(state: TaskState) -> dict[str, int | None] | None:
    """Output and reasoning tokens of the answer; reasoning is None when not reported."""
    usage = state.output.usage if state.output else None
    if usage is None:
        return None
    return {
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }
