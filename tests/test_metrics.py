"""pass@1, rubric, breakdowns and the bootstrap interval, against direct computation."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from hss_inspect.metrics import (
    Attempt,
    TaskOutcome,
    bootstrap_halfwidth,
    reduce_attempts,
    summarize,
)


def test_attempts_reduce_to_the_mean_over_graded_attempts() -> None:
    outcome = reduce_attempts([Attempt(1, 1.0), Attempt(0, 0.5), Attempt(None, None)])
    assert outcome.pass_ == pytest.approx(0.5)
    assert outcome.rubric == pytest.approx(0.75)
    assert outcome.grading_failures == 1
    assert outcome.attempts == 3


def test_no_answer_is_a_zero_and_counted() -> None:
    outcome = reduce_attempts([Attempt(0, 0.0, no_answer=True), Attempt(1, 1.0)])
    assert outcome.pass_ == pytest.approx(0.5)
    assert outcome.no_answer == 1


def test_all_attempts_failed_to_grade_leaves_the_task_out() -> None:
    outcomes = [
        TaskOutcome(1.0, 1.0, 3, 0, 0, "image", "Social Understanding", "Theory of Mind"),
        TaskOutcome(None, None, 3, 3, 0, "video", "Social Understanding", "Theory of Mind"),
    ]
    summary = summarize(outcomes)
    assert summary["pass_at_1"] == 1.0
    assert summary["ungraded_tasks"] == 1
    assert summary["grading_failures"] == 3
    assert "video" not in summary


def test_summary_breakdowns_match_hand_computation() -> None:
    rows = [
        (1.0, "image", "Temporal & Causal Dynamics", "Retrodiction"),
        (1 / 3, "video", "Temporal & Causal Dynamics", "Extrapolation"),
        (0.0, "image", "Physical & Spatial Logic", 'Spatial "Alien Viewpoint"'),
        (2 / 3, "video", "Social Understanding", "Theory of Mind"),
        (0.5, "video", "Made Up Domain", "Made Up Subdomain"),
    ]
    outcomes = [TaskOutcome(p, p, 3, 0, 0, m, d, s) for p, m, d, s in rows]
    summary = summarize(outcomes)
    assert summary["pass_at_1"] == pytest.approx(statistics.mean(p for p, *_ in rows))
    assert summary["image"] == pytest.approx(0.5)
    assert summary["video"] == pytest.approx((1 / 3 + 2 / 3 + 0.5) / 3)
    assert summary["temporal"] == pytest.approx((1 + 1 / 3) / 2)
    assert summary["alien_viewpoint"] == 0.0
    # An unknown taxonomy string is reported under its own name, not folded into another.
    assert summary["Made Up Domain"] == 0.5 and summary["Made Up Subdomain"] == 0.5
    assert summary["tasks"] == 5


def test_bootstrap_is_seeded_and_near_the_normal_approximation() -> None:
    rng = np.random.default_rng(0)
    values = list(rng.integers(0, 2, size=522).astype(float))
    first, second = bootstrap_halfwidth(values), bootstrap_halfwidth(values)
    assert first == second
    normal = 1.96 * statistics.pstdev(values) / math.sqrt(len(values))
    assert first == pytest.approx(normal, rel=0.08)


def test_bootstrap_of_a_single_task_is_undefined() -> None:
    assert math.isnan(bootstrap_halfwidth([1.0]))


def test_model_errors_are_left_out_and_counted_apart_from_grading_failures() -> None:
    from inspect_ai.scorer import Score

    from hss_inspect.metrics import attempt_of

    error = Score(value={"pass": math.nan, "rubric": math.nan, "model_error": 1})
    passed = Score(value={"pass": 1, "rubric": 1.0, "model_error": 0})
    outcome = reduce_attempts([attempt_of(error), attempt_of(passed), attempt_of(passed)])
    assert (outcome.pass_, outcome.model_errors, outcome.grading_failures) == (1.0, 1, 0)
    only_errors = reduce_attempts([attempt_of(error)])
    assert only_errors.pass_ is None and only_errors.model_errors == 1
    summary = summarize([outcome, only_errors])
    assert summary["model_errors"] == 2 and summary["ungraded_tasks"] == 1
    assert summary["pass_at_1"] == 1.0
