"""pass@1, rubric score, bootstrap intervals and breakdowns (paper Appendix C.4).

The arithmetic is pure (`reduce_attempts`, `summarize`, `bootstrap_halfwidth`); the
Inspect reducer and metric at the bottom only move values in and out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from inspect_ai.scorer import Metric, SampleScore, Score, ScoreReducer, metric, score_reducer

from hss_inspect.taxonomy import DOMAINS, MEDIA_TYPES, domain_label, subdomain_label

BOOTSTRAP_SEED = 2610_08966
BOOTSTRAP_RESAMPLES = 10_000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Attempt:
    """One attempt; pass_ and rubric are None for a grading failure or a model error."""

    pass_: float | None
    rubric: float | None
    no_answer: bool = False
    model_error: bool = False


@dataclass(frozen=True)
class TaskOutcome:
    """A task's attempts reduced: pass/rubric are None when no attempt could be graded."""

    pass_: float | None
    rubric: float | None
    attempts: int
    grading_failures: int
    no_answer: int
    media_type: str = ""
    domain: str = ""
    subdomain: str = ""
    model_errors: int = 0


def reduce_attempts(attempts: Sequence[Attempt]) -> TaskOutcome:
    """Per-task pass@1: the mean over the attempts the judge could grade."""
    graded = [a for a in attempts if a.pass_ is not None and a.rubric is not None]
    model_errors = sum(a.model_error for a in attempts)
    failures = len(attempts) - len(graded) - model_errors
    no_answer = sum(a.no_answer for a in attempts)
    if not graded:
        return TaskOutcome(
            None, None, len(attempts), failures, no_answer, model_errors=model_errors
        )
    pass_rate = sum(a.pass_ or 0.0 for a in graded) / len(graded)
    rubric = sum(a.rubric or 0.0 for a in graded) / len(graded)
    return TaskOutcome(
        pass_rate, rubric, len(attempts), failures, no_answer, model_errors=model_errors
    )


def bootstrap_halfwidth(
    values: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> float:
    """Half-width of the percentile bootstrap interval of the mean, resampling tasks."""
    if len(values) < 2:
        return math.nan
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
    counted in `ungraded_tasks`.
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
    summary["attempts"] = float(sum(o.attempts for o in outcomes))
    summary["grading_failures"] = float(sum(o.grading_failures for o in outcomes))
    summary["no_answer"] = float(sum(o.no_answer for o in outcomes))
    summary["model_errors"] = float(sum(o.model_errors for o in outcomes))
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


def attempt_of(score: Score) -> Attempt:
    value = score.value
    if not isinstance(value, dict):
        return Attempt(None, None)
    pass_, rubric = value.get("pass"), value.get("rubric")
    if not _is_number(pass_) or not _is_number(rubric):
        return Attempt(None, None, model_error=value.get("model_error") == 1)
    no_answer = bool((score.metadata or {}).get("no_answer", False))
    return Attempt(float(pass_), float(rubric), no_answer)  # type: ignore[arg-type]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)


@score_reducer(name="hss_mean")
def hss_mean() -> ScoreReducer:
    """Mean of pass and rubric over the graded attempts, keeping the attempt bookkeeping."""

    def reduce(scores: list[Score]) -> Score:
        outcome = reduce_attempts([attempt_of(s) for s in scores])
        value = {
            "pass": math.nan if outcome.pass_ is None else outcome.pass_,
            "rubric": math.nan if outcome.rubric is None else outcome.rubric,
        }
        return Score(
            value=value,
            metadata={
                "attempts": outcome.attempts,
                "grading_failures": outcome.grading_failures,
                "no_answer": outcome.no_answer,
                "model_errors": outcome.model_errors,
                "attempt_passes": [
                    s.value.get("pass") if isinstance(s.value, dict) else None for s in scores
                ],
            },
        )

    return reduce


def outcome_of(sample_score: SampleScore) -> TaskOutcome:
    """A reduced sample score as a TaskOutcome (also after a reducer other than hss_mean)."""
    score = sample_score.score
    attempt = attempt_of(score)
    meta = score.metadata or {}
    sample_meta = sample_score.sample_metadata or {}
    failed = attempt.pass_ is None and not attempt.model_error
    return TaskOutcome(
        pass_=attempt.pass_,
        rubric=attempt.rubric,
        attempts=int(meta.get("attempts", 1)),
        grading_failures=int(meta.get("grading_failures", 1 if failed else 0)),
        no_answer=int(meta.get("no_answer", 1 if attempt.no_answer else 0)),
        model_errors=int(meta.get("model_errors", 1 if attempt.model_error else 0)),
        media_type=str(sample_meta.get("media_type", "")),
        domain=str(sample_meta.get("domain", "")),
        subdomain=str(sample_meta.get("subdomain", "")),
    )


@metric(name="hss")
def hss_metrics() -> Metric:
    """pass@1 ± 95% bootstrap half-width, rubric, breakdowns and grading bookkeeping."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        return summarize([outcome_of(s) for s in scores])

    return compute
