"""pass@1, rubric, breakdowns and the bootstrap interval, against direct computation,
and the `hss` metric through Inspect's real epoch reducers (pytest_inspect_evals runs
an actual eval whose scorer replays the per-epoch values given here)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from pytest_inspect_evals.metrics import assert_agreeing_epochs_change_nothing, run_metrics

from hss_inspect.grading.metrics import (
    TaskOutcome,
    attempt_value,
    bootstrap_halfwidth,
    hss_metrics,
    summarize,
)

NAN = math.nan
pytestmark = pytest.mark.usefixtures("offline_token_counts")


def test_all_attempts_failed_to_grade_leaves_the_task_out() -> None:
    outcomes = [
        TaskOutcome(1.0, 1.0, 0, 0, 0, "image", "Social Understanding", "Theory of Mind"),
        TaskOutcome(None, None, 0, 1.0, 0, "video", "Social Understanding", "Theory of Mind"),
    ]
    summary = summarize(outcomes)
    assert summary["pass_at_1"] == 1.0
    assert summary["ungraded_tasks"] == 1
    assert summary["grading_failure_rate"] == 0.5
    assert "video" not in summary


def test_summary_breakdowns_match_hand_computation() -> None:
    rows = [
        (1.0, "image", "Temporal & Causal Dynamics", "Retrodiction"),
        (1 / 3, "video", "Temporal & Causal Dynamics", "Extrapolation"),
        (0.0, "image", "Physical & Spatial Logic", 'Spatial "Alien Viewpoint"'),
        (2 / 3, "video", "Social Understanding", "Theory of Mind"),
        (0.5, "video", "Made Up Domain", "Made Up Subdomain"),
    ]
    outcomes = [TaskOutcome(p, p, 0, 0, 0, m, d, s) for p, m, d, s in rows]
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


def test_a_single_graded_task_has_an_interval_of_zero_width_not_nan() -> None:
    assert bootstrap_halfwidth([1.0]) == 0.0
    summary = summarize([TaskOutcome(1.0, 1.0)])
    assert summary["pass_at_1_ci95"] == 0.0


# ---- through Inspect's epoch reducers ------------------------------------------------

PASSED = attempt_value(passed=1, rubric=1.0)
HALF = attempt_value(passed=0, rubric=0.5)
FAILED = attempt_value(passed=0, rubric=0.0)
EMPTY = attempt_value(passed=0, rubric=0.0, no_answer=True)
UNGRADED = attempt_value(grading_failure=True)
PROVIDER = attempt_value(model_error=True)

# Three tasks, three attempts each, with every kind of attempt.
EPOCHS: list[list[dict[str, float]]] = [
    [PASSED, HALF, UNGRADED],  # graded attempts: pass 1, 0; a grading failure
    [EMPTY, PASSED, PASSED],  # a no-answer zero, then two passes
    [UNGRADED, PROVIDER, UNGRADED],  # nothing graded: left out of every mean
]
METADATA = [
    {"media_type": "image", "domain": "Social Understanding", "subdomain": "Theory of Mind"},
    {
        "media_type": "video",
        "domain": "Physical & Spatial Logic",
        "subdomain": "Hidden & Invisible",
    },
    {"media_type": "video", "domain": "Social Understanding", "subdomain": "Theory of Mind"},
]


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _mode(values: list[float]) -> float:
    return statistics.mode(values)


def _unbiased_pass_at(k: int) -> Callable[[list[float]], float]:
    def estimate(values: list[float]) -> float:
        n, c = len(values), sum(1 for v in values if v >= 1.0)
        if n < k:
            return NAN
        return 1.0 - math.comb(n - c, k) / math.comb(n, k)

    return estimate


def _at_least(k: int) -> Callable[[list[float]], float]:
    return lambda values: float(sum(1 for v in values if v >= 1.0) >= k)


REDUCERS: dict[str, Callable[[list[float]], float]] = {
    "mean": statistics.mean,
    "median": _median,
    "mode": _mode,
    "max": max,
    "pass_at_2": _unbiased_pass_at(2),
    "at_least_2": _at_least(2),
}


def _reduce_task(
    attempts: Sequence[dict[str, float]], statistic: Callable[[list[float]], float]
) -> dict[str, float]:
    """What a reducer leaves for one task: the statistic per key over its non-NaN values."""
    reduced = {}
    for key in attempts[0]:
        values = [a[key] for a in attempts if not math.isnan(a[key])]
        reduced[key] = statistic(values) if values else NAN
    return reduced


def _expected(statistic: Callable[[list[float]], float]) -> dict[str, float]:
    tasks = [_reduce_task(attempts, statistic) for attempts in EPOCHS]
    graded = [(t, m) for t, m in zip(tasks, METADATA, strict=True) if not math.isnan(t["pass"])]
    video = [t["pass"] for t, m in graded if m["media_type"] == "video"]
    return {
        "pass_at_1": statistics.mean(t["pass"] for t, _ in graded),
        "rubric": statistics.mean(t["rubric"] for t, _ in graded),
        "video": statistics.mean(video),
        "tasks": 3.0,
        "ungraded_tasks": float(sum(math.isnan(t["pass"]) for t in tasks)),
        "no_answer_rate": statistics.mean(t["no_answer"] for t in tasks),
        "grading_failure_rate": statistics.mean(t["grading_failure"] for t in tasks),
        "model_error_rate": statistics.mean(t["model_error"] for t in tasks),
    }


def _metrics_under(reducer: Any) -> dict[str, Any]:
    return run_metrics([hss_metrics()], EPOCHS, reducer=reducer, metadata=METADATA)


def _named(results: dict[str, Any], key: str) -> float:
    (match,) = [v for name, v in results.items() if name == key or name.endswith(f"/{key}")]
    return float(match)


@pytest.mark.parametrize("name", list(REDUCERS))
def test_hss_metric_is_right_under_every_builtin_reducer(name: str) -> None:
    from inspect_ai.scorer import at_least, pass_at

    reducer: Any = {"pass_at_2": pass_at(2), "at_least_2": at_least(2)}.get(name, name)
    results = _metrics_under(reducer)
    for key, value in _expected(REDUCERS[name]).items():
        assert _named(results, key) == pytest.approx(value), (name, key)


def test_the_default_mean_gives_the_papers_pass_at_1_and_attempt_rates() -> None:
    results = _metrics_under("mean")
    # Task 1: graded attempts pass 1 and 0 -> 0.5; task 2: 0, 1, 1 -> 2/3; task 3 ungraded.
    assert _named(results, "pass_at_1") == pytest.approx((0.5 + 2 / 3) / 2)
    # One no-answer attempt of three in task 2, none elsewhere: (0 + 1/3 + 0) / 3.
    assert _named(results, "no_answer_rate") == pytest.approx(1 / 9)
    # Grading failures: 1/3 of task 1's attempts, 2/3 of task 3's.
    assert _named(results, "grading_failure_rate") == pytest.approx((1 / 3 + 2 / 3) / 3)
    assert _named(results, "ungraded_tasks") == 1.0


def test_agreeing_epochs_change_nothing() -> None:
    assert_agreeing_epochs_change_nothing(
        [hss_metrics()], [PASSED, FAILED, EMPTY, UNGRADED], metadata=METADATA + METADATA[:1]
    )
