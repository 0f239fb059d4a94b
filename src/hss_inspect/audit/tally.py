"""The audit's arithmetic, pure: counting a judge's errors against known verdicts, rates
with 95% Wilson score intervals, and the groups they are reported for.

A *false pass* is a criterion (or an item) the judge marked met where construction says
unmet; a *false fail* the reverse. Criterion level counts every criterion verdict; item
level counts each graded answer once, passing when every criterion is met (paper Eq. 2).

Intervals are Wilson score intervals on the counted verdicts. They treat verdicts as
independent trials; criteria of one task are not quite independent, so read the
criterion-level intervals as slightly optimistic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from statistics import NormalDist

from hss_inspect.core.taxonomy import DOMAINS, MEDIA_TYPES, subdomain_label
from hss_inspect.grading.metrics import CONFIDENCE


@dataclass(frozen=True)
class Tally:
    """Counts of one or more graded variants; every field adds up across variants."""

    variants: int = 0
    graded: int = 0
    skipped: int = 0
    grading_failures: int = 0
    crit_unmet: int = 0
    crit_false_pass: int = 0
    crit_met: int = 0
    crit_false_fail: int = 0
    item_unmet: int = 0
    item_false_pass: int = 0
    item_met: int = 0
    item_false_fail: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def as_value(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_value(cls, value: Mapping[str, object]) -> Tally:
        return cls(**{f.name: _count(value.get(f.name, 0)) for f in fields(cls)})


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise ValueError(f"an audit count must be a number, not {value!r}")
    return round(value)


def total(tallies: Iterable[Tally]) -> Tally:
    return sum(tallies, Tally())


def tally_of(expected: Mapping[str, bool], judged: Mapping[str, bool]) -> Tally:
    """One graded variant: each criterion's verdict against the known one, and the item's."""
    crit = [(expected[cid], judged[cid]) for cid in expected]
    item_expected = all(e for e, _ in crit)
    item_judged = all(j for _, j in crit)
    return Tally(
        variants=1,
        graded=1,
        crit_unmet=sum(not e for e, _ in crit),
        crit_false_pass=sum(not e and j for e, j in crit),
        crit_met=sum(e for e, _ in crit),
        crit_false_fail=sum(e and not j for e, j in crit),
        item_unmet=int(not item_expected),
        item_false_pass=int(not item_expected and item_judged),
        item_met=int(item_expected),
        item_false_fail=int(item_expected and not item_judged),
    )


SKIPPED = Tally(variants=1, skipped=1)
GRADING_FAILURE = Tally(variants=1, grading_failures=1)


@dataclass(frozen=True)
class Rate:
    errors: int
    trials: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.errors / self.trials if self.trials else math.nan


def wilson_interval(
    errors: int, trials: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The Wilson score interval of a proportion (NaN, NaN without trials)."""
    if trials == 0:
        return math.nan, math.nan
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = errors / trials
    scale = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / scale
    spread = z / scale * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    # At 0 (or all) errors the bound is exactly 0 (or 1); rounding would leave a crumb.
    low = 0.0 if errors == 0 else max(0.0, centre - spread)
    high = 1.0 if errors == trials else min(1.0, centre + spread)
    return low, high


# Rate name -> (errors field, trials field) of Tally.
RATES: dict[str, tuple[str, str]] = {
    "fp_crit": ("crit_false_pass", "crit_unmet"),
    "ff_crit": ("crit_false_fail", "crit_met"),
    "fp_item": ("item_false_pass", "item_unmet"),
    "ff_item": ("item_false_fail", "item_met"),
}
RATE_TITLES = {
    "fp_crit": "false pass, criteria",
    "ff_crit": "false fail, criteria",
    "fp_item": "false pass, items",
    "ff_item": "false fail, items",
}


def rates_of(tally: Tally) -> dict[str, Rate]:
    """Every rate that has at least one trial."""
    found = {}
    for name, (errors_field, trials_field) in RATES.items():
        errors, trials = getattr(tally, errors_field), getattr(tally, trials_field)
        if trials:
            found[name] = Rate(errors, trials, *wilson_interval(errors, trials))
    return found


@dataclass(frozen=True)
class Labelled:
    """A tally with the groups it belongs to."""

    kind: str
    media_type: str
    subdomain: str
    tally: Tally


def grouped(items: Sequence[Labelled], kind_order: Sequence[str]) -> dict[str, dict[str, Tally]]:
    """Totals by kind, by media type and by subdomain label, each in the paper's order."""
    media_order = list(MEDIA_TYPES)
    sub_order = [s.label for d in DOMAINS for s in d.subdomains]
    return {
        "kind": _totals(items, lambda i: i.kind, kind_order),
        "media": _totals(items, lambda i: i.media_type, media_order),
        "subdomain": _totals(items, lambda i: subdomain_label(i.subdomain), sub_order),
    }


def _totals(
    items: Sequence[Labelled], key: Callable[[Labelled], str], order: Sequence[str]
) -> dict[str, Tally]:
    sums: dict[str, Tally] = {}
    for item in items:
        label = key(item)
        sums[label] = sums.get(label, Tally()) + item.tally
    known = [k for k in order if k in sums]
    return {k: sums[k] for k in known + sorted(set(sums) - set(known))}


def summary_metrics(items: Sequence[Labelled], kind_order: Sequence[str]) -> dict[str, float]:
    """The log's metrics: counts, then each rate with its interval, overall and per group.

    Keys are `fp_crit`, `fp_crit_lo`, `fp_crit_hi`, ... overall and `<group>_fp_crit`, ...
    for each kind, media type and subdomain label; a rate without trials is left out.
    """
    overall = total(i.tally for i in items)
    summary: dict[str, float] = {
        "variants": float(overall.variants),
        "graded": float(overall.graded),
        "skipped": float(overall.skipped),
        "grading_failures": float(overall.grading_failures),
    }
    summary.update(_rate_keys("", overall))
    for groups in grouped(items, kind_order).values():
        for label, tally in groups.items():
            summary.update(_rate_keys(f"{label}_", tally))
    return summary


def _rate_keys(prefix: str, tally: Tally) -> dict[str, float]:
    keys: dict[str, float] = {}
    for name, rate in rates_of(tally).items():
        keys[f"{prefix}{name}"] = rate.value
        keys[f"{prefix}{name}_lo"] = rate.low
        keys[f"{prefix}{name}_hi"] = rate.high
    return keys
