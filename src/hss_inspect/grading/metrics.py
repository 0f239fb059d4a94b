"""pass@1, rubric score, bootstrap intervals and breakdowns (paper Appendix C.4).

The arithmetic is pure (`summarize`, `bootstrap_halfwidth`); the metric at the bottom
only moves values in and out. Epochs are reduced by Inspect's own reducers (`mean` by
default, which is the paper's per-task pass@1), so the metric reads only Score.value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, metric

from hss_inspect.core.taxonomy import DOMAINS, MEDIA_TYPES, domain_label, subdomain_label
from hss_inspect.core.values import finite_number

BOOTSTRAP_SEED = 2610_08966
BOOTSTRAP_RESAMPLES = 10_000
CONFIDENCE = 0.95


# What one attempt's Score.value holds. Everything a metric counts is a number here, so
# that any epoch reducer (mean, median, mode, max, pass_at_k, at_least_k) carries it.
PASS, RUBRIC = "pass", "rubric"
NO_ANSWER, GRADING_FAILURE, MODEL_ERROR = "no_answer", "grading_failure", "model_error"
REFUSAL = "refusal"
VALUE_KEYS = (PASS, RUBRIC, NO_ANSWER, GRADING_FAILURE, MODEL_ERROR, REFUSAL)


def attempt_value(
    passed: float | None = None,
    rubric: float | None = None,
    no_answer: bool = False,
    grading_failure: bool = False,
    model_error: bool = False,
    refusal: bool = False,
) -> dict[str, float]:
    """One attempt's Score.value. pass and rubric are NaN when the attempt was not graded
    (a grading failure, or a provider error that left it out), so reducers skip them. A
    refusal (the provider's policy filter) is also a no-answer zero."""
    graded = passed is not None and rubric is not None
    return {
        PASS: float(passed) if graded else math.nan,  # type: ignore[arg-type]
        RUBRIC: float(rubric) if graded else math.nan,  # type: ignore[arg-type]
        NO_ANSWER: float(no_answer),
        GRADING_FAILURE: float(grading_failure),
        MODEL_ERROR: float(model_error),
        REFUSAL: float(refusal),
    }


@dataclass(frozen=True)
class TaskOutcome:
    """A task's attempts as the epoch reducer left them; pass/rubric None when ungraded.

    Under the default `mean` reducer pass is the task's pass@1 (Eq. 3) and the four
    bookkeeping values are the fractions of its attempts with no answer, a grading
    failure, a provider error, or a policy refusal.
    """

    pass_: float | None
    rubric: float | None
    no_answer: float = 0.0
    grading_failure: float = 0.0
    model_error: float = 0.0
    media_type: str = ""
    domain: str = ""
    subdomain: str = ""
    refusal: float = 0.0


def bootstrap_halfwidth(
    values: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> float:
    """Half-width of the percentile bootstrap interval of the mean, resampling tasks."""
    if not values:
        return math.nan
    if len(values) == 1:
        return 0.0  # one task: nothing to resample, the interval has no width
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    means = data[picks].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(high - low) / 2


def summarize(outcomes: Sequence[TaskOutcome]) -> dict[str, float]:
    """The results line: pass@1 with its interval, rubric, breakdowns and bookkeeping.

    Tasks the judge could not grade in any attempt are left out of every mean and
    counted in `ungraded_tasks`; the bookkeeping rates are means over all tasks.
    """
    graded = [o for o in outcomes if o.pass_ is not None]
    passes = [o.pass_ or 0.0 for o in graded]
    summary: dict[str, float] = {
        "pass_at_1": _mean(passes),
        "pass_at_1_ci95": bootstrap_halfwidth(passes),
        "rubric": _mean([o.rubric or 0.0 for o in graded]),
    }
    summary.update(_breakdown(graded))
    summary["tasks"] = float(len(outcomes))
    summary["ungraded_tasks"] = float(len(outcomes) - len(graded))
    summary["no_answer_rate"] = _mean([o.no_answer for o in outcomes])
    summary["grading_failure_rate"] = _mean([o.grading_failure for o in outcomes])
    summary["model_error_rate"] = _mean([o.model_error for o in outcomes])
    summary["refusal_rate"] = _mean([o.refusal for o in outcomes])
    return summary


def _breakdown(graded: Sequence[TaskOutcome]) -> dict[str, float]:
    """pass@1 per media type, domain label and subdomain label, in the paper's order."""
    groups: dict[str, list[float]] = {}
    order = list(MEDIA_TYPES) + [d.label for d in DOMAINS]
    order += [s.label for d in DOMAINS for s in d.subdomains]
    for outcome in graded:
        for key in (
            outcome.media_type,
            domain_label(outcome.domain),
            subdomain_label(outcome.subdomain),
        ):
            groups.setdefault(key, []).append(outcome.pass_ or 0.0)
    ordered = [k for k in order if k in groups] + sorted(k for k in groups if k not in order)
    return {key: _mean(groups[key]) for key in ordered}


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


# ---- Inspect adapters -------------------------------------------------------------


def outcome_of(sample_score: SampleScore) -> TaskOutcome:
    """A sample's reduced score as a TaskOutcome, whatever reducer produced it."""
    value = sample_score.score.value
    values = value if isinstance(value, dict) else {}
    return outcome_of_value(values, sample_score.sample_metadata or {})


def outcome_of_value(values: Mapping[str, Any], sample_meta: Mapping[str, Any]) -> TaskOutcome:
    """A task's (or one attempt's) values as `attempt_value` writes them, with its labels."""
    pass_, rubric = finite_number(values.get(PASS)), finite_number(values.get(RUBRIC))
    graded = pass_ is not None and rubric is not None
    return TaskOutcome(
        pass_=pass_ if graded else None,
        rubric=rubric if graded else None,
        no_answer=finite_number(values.get(NO_ANSWER)) or 0.0,
        grading_failure=finite_number(values.get(GRADING_FAILURE)) or 0.0,
        model_error=finite_number(values.get(MODEL_ERROR)) or 0.0,
        refusal=finite_number(values.get(REFUSAL)) or 0.0,
        media_type=str(sample_meta.get("media_type", "")),
        domain=str(sample_meta.get("domain", "")),
        subdomain=str(sample_meta.get("subdomain", "")),
    )


def by_task(scores: list[SampleScore]) -> list[TaskOutcome]:
    """One outcome per task: a task is one sample of a model's run, but several of a human
    study's (one per answer), whose means make the task's pass@1 (Eq. 3)."""
    groups: dict[str, list[TaskOutcome]] = {}
    for score in scores:
        task_id = str((score.sample_metadata or {}).get("task_id", score.sample_id))
        groups.setdefault(task_id, []).append(outcome_of(score))
    return [merged(outcomes) for outcomes in groups.values()]


def merged(outcomes: Sequence[TaskOutcome]) -> TaskOutcome:
    """A task's outcomes as one: pass and rubric the means over its graded ones, the
    bookkeeping rates the means over all."""
    if len(outcomes) == 1:
        return outcomes[0]
    graded = [o for o in outcomes if o.pass_ is not None]
    first = outcomes[0]
    return TaskOutcome(
        pass_=_mean([o.pass_ or 0.0 for o in graded]) if graded else None,
        rubric=_mean([o.rubric or 0.0 for o in graded]) if graded else None,
        no_answer=_mean([o.no_answer for o in outcomes]),
        grading_failure=_mean([o.grading_failure for o in outcomes]),
        model_error=_mean([o.model_error for o in outcomes]),
        media_type=first.media_type,
        domain=first.domain,
        subdomain=first.subdomain,
        refusal=_mean([o.refusal for o in outcomes]),
    )


@metric(name="hss")
def hss_metrics() -> Metric:
    """pass@1 ± 95% bootstrap half-width, rubric, breakdowns and grading bookkeeping."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return summarize(by_task(scores))

    return compute
