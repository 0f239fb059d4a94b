"""The labeller's `failure_families` metric through Inspect's real epoch reducer
(pytest_inspect_evals runs an eval whose scorer replays the values given here)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pytest_inspect_evals.metrics import assert_agreeing_epochs_change_nothing, run_metrics

from hss_inspect.grading.causes import taxonomy
from hss_inspect.grading.labeler import UNLABELLED, failure_families, label_value

pytestmark = pytest.mark.usefixtures("offline_token_counts")


def first_cause_of(family: str) -> str:
    return next(c.id for c in taxonomy().causes if c.family == family)


def values() -> list[dict[str, float]]:
    causes = taxonomy()
    chosen = [first_cause_of("perception"), first_cause_of("perception")]
    chosen += [first_cause_of("latent"), causes.no_answer.id, UNLABELLED]
    return [label_value(causes, cause) for cause in chosen]


def named(results: dict[str, Any], key: str) -> float:
    (match,) = [v for name, v in results.items() if name == key or name.endswith(f"/{key}")]
    return float(match)


def test_family_shares_are_over_the_labelled_failures_only() -> None:
    results = run_metrics([failure_families()], [[v] for v in values()], reducer="mean")
    # Five failures: four labelled (two perception, one latent, one no answer), one not.
    assert named(results, "labelled") == 4 and named(results, "unlabelled") == 1
    assert named(results, "perception") == pytest.approx(2 / 4)
    assert named(results, "latent") == pytest.approx(1 / 4)
    assert named(results, "reasoning") == 0.0
    assert not math.isnan(named(results, "perception"))


def test_agreeing_epochs_change_nothing() -> None:
    assert_agreeing_epochs_change_nothing([failure_families()], values())
