"""Attempts graded and reduced to a task's outcome, and the run's metrics over the tasks.

An attempt is scored as `rubric_judge` scores it: no text is a zero counted as no answer;
a request lmms-eval gave up on is a provider error, left out and counted; otherwise the
judge grades it, and an unreadable judge is a grading failure, left out and counted. The
attempts of a task reduce as Inspect's `mean` reducer does (`merged`), and the metrics are
`grading/metrics.summarize`: pass@1 with its interval, rubric, the breakdowns, the counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from hss_inspect.core.taxonomy import DOMAINS, MEDIA_TYPES
from hss_inspect.grading.judge import criteria_of
from hss_inspect.grading.metrics import (
    TaskOutcome,
    attempt_value,
    merged,
    outcome_of_value,
    summarize,
)
from hss_inspect.grading.scorer import JudgeSession, session_value

# What lmms-eval's API models answer in place of a reply they could not get.
REQUEST_FAILED_MARKS = ("[LMMS_EVAL_REQUEST_FAILED", "[LMMS_EVAL_BUDGET_EXCEEDED]")

# The metrics a run reports: `summarize`'s keys, breakdown labels in the paper's order.
METRIC_KEYS: tuple[str, ...] = (
    "pass_at_1",
    "pass_at_1_ci95",
    "rubric",
    *MEDIA_TYPES,
    *(d.label for d in DOMAINS),
    *(s.label for d in DOMAINS for s in d.subdomains),
    "tasks",
    "ungraded_tasks",
    "no_answer_rate",
    "grading_failure_rate",
    "model_error_rate",
    "refusal_rate",
)

Grader = Callable[[str], JudgeSession]
TASK_ID = "task_id"


def attempt_of(answer: str, doc: Mapping[str, Any], grader: Grader) -> dict[str, float]:
    """One attempt's values, as `attempt_value` writes an Inspect score's."""
    if answer.startswith(REQUEST_FAILED_MARKS):
        return attempt_value(model_error=True)
    if not answer.strip():
        return attempt_value(passed=0, rubric=0.0, no_answer=True)
    value, _ = session_value(grader(answer.strip()), criteria_of(dict(doc)))
    return value


def task_outcome(doc: Mapping[str, Any], answers: Sequence[str], grader: Grader) -> dict[str, Any]:
    """The task's outcome over its attempts, as a plain record lmms-eval can log."""
    attempts = [outcome_of_value(attempt_of(a, doc, grader), doc) for a in answers]
    return {TASK_ID: doc[TASK_ID], **asdict(merged(attempts))}


def metric(key: str) -> Callable[[Sequence[Mapping[str, Any]]], float]:
    """lmms-eval's aggregation for one metric: `summarize` over the tasks' outcomes."""

    def aggregate(records: Sequence[Mapping[str, Any]]) -> float:
        outcomes = [TaskOutcome(**{k: v for k, v in r.items() if k != TASK_ID}) for r in records]
        summary = summarize(outcomes)
        return summary.get(key, math.nan)

    aggregate.__name__ = key
    return aggregate


def answers_of(results: Sequence[Any]) -> list[str]:
    """The attempts' texts from what lmms-eval hands `process_results`: one list of the
    repeats (the YAML's filter keeps them all), or the texts themselves."""
    flat: list[Any] = []
    for item in results:
        flat.extend(item if isinstance(item, list | tuple) else [item])
    return [str(getattr(item, "text", item) or "") for item in flat]
