"""Statistics the report needs beyond pass@1, as pure functions over plain numbers.

pass@1 itself and its bootstrap interval come from `hss_inspect.grading.metrics`, so the report
and Inspect's own results line are the same computation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb


def pass_at_k(attempts: int, correct: int, k: int) -> float:
    """Unbiased pass@k of one task (Chen et al. 2021): 1 - C(n-c, k) / C(n, k)."""
    if not 1 <= k <= attempts:
        raise ValueError(f"pass@{k} needs 1 <= k <= attempts ({attempts})")
    if attempts - correct < k:
        return 1.0
    return 1.0 - comb(attempts - correct, k) / comb(attempts, k)


def mean_pass_at_k(tasks: Sequence[tuple[int, int]], k: int) -> float:
    """pass@k averaged over tasks given as (graded attempts, correct attempts)."""
    if not tasks:
        return math.nan
    return sum(pass_at_k(n, c, k) for n, c in tasks) / len(tasks)


def agreement(pairs: Sequence[tuple[bool, bool]]) -> float:
    """Fraction of paired verdicts that are equal."""
    if not pairs:
        return math.nan
    return sum(a == b for a, b in pairs) / len(pairs)


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float:
    """Cohen's kappa of two raters' yes/no verdicts; NaN when chance agreement is total."""
    if not pairs:
        return math.nan
    n = len(pairs)
    observed = agreement(pairs)
    yes_a = sum(a for a, _ in pairs) / n
    yes_b = sum(b for _, b in pairs) / n
    expected = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    if expected == 1:
        return math.nan
    return (observed - expected) / (1 - expected)


def mcnemar_exact_p(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value: a binomial test of the discordant pairs at 1/2."""
    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    tail = sum(comb(discordant, i) for i in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * tail / float(2**discordant))


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            result[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return result


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson correlation; NaN with fewer than two points or a constant series."""
    if len(x) != len(y):
        raise ValueError("pearson needs two series of equal length")
    if len(x) < 2:
        return math.nan
    mean_x, mean_y = sum(x) / len(x), sum(y) / len(y)
    dx = [v - mean_x for v in x]
    dy = [v - mean_y for v in y]
    spread = math.sqrt(sum(d * d for d in dx) * sum(d * d for d in dy))
    if spread == 0:
        return math.nan
    return sum(a * b for a, b in zip(dx, dy, strict=True)) / spread


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation: Pearson's r of the (tie-averaged) ranks."""
    return pearson(ranks(x), ranks(y))


def mean_or_none(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
