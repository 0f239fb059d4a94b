"""Paired comparison of two runs on the tasks they share, first attempts only (as the
paper's Tables 7-9 pair agentic and single-call runs). Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hss_inspect.core.taxonomy import DOMAINS, domain_label, subdomain_label
from hss_inspect.report.records import AttemptRecord
from hss_inspect.report.stats import mcnemar_exact_p
from hss_inspect.report.tables import SUBDOMAIN_LABELS, Run, by_task

DOMAIN_LABELS = tuple(d.label for d in DOMAINS)


@dataclass(frozen=True)
class Pair:
    task_id: str
    domain: str
    subdomain: str
    a: bool
    b: bool


def first_attempts(run: Run) -> dict[str, AttemptRecord]:
    """Each task's lowest-numbered attempt, when the judge could grade it."""
    chosen = {}
    for task_id, attempts in by_task(run.records).items():
        first = min(attempts, key=lambda r: r.epoch)
        if first.graded:
            chosen[task_id] = first
    return chosen


def paired_first_attempts(a: Run, b: Run, changed: Collection[str] = ()) -> list[Pair]:
    """The first attempts of the tasks both runs graded, less the `changed` tasks (the
    two releases differ there: the runs did not measure the same thing)."""
    firsts_a, firsts_b = first_attempts(a), first_attempts(b)
    return [
        Pair(
            task_id,
            domain_label(record.domain),
            subdomain_label(record.subdomain),
            record.pass_ == 1,
            firsts_b[task_id].pass_ == 1,
        )
        for task_id, record in sorted(firsts_a.items())
        if task_id in firsts_b and task_id not in changed
    ]


def _summary(pairs: Sequence[Pair]) -> dict[str, Any]:
    n = len(pairs)
    a_only = sum(p.a and not p.b for p in pairs)
    b_only = sum(p.b and not p.a for p in pairs)
    a_pass = sum(p.a for p in pairs) / n if n else None
    b_pass = sum(p.b for p in pairs) / n if n else None
    return {
        "n_tasks": n,
        "a_pass": a_pass,
        "b_pass": b_pass,
        "delta": None if a_pass is None or b_pass is None else b_pass - a_pass,
        "a_only": a_only,
        "b_only": b_only,
        "mcnemar_p": mcnemar_exact_p(a_only, b_only),
    }


def compare_runs(a: Run, b: Run, changed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """pass@1 of each, the discordant tasks, McNemar's exact p, and the change by group.

    `delta` is B minus A. The shared tasks that differ between the releases the two ran on
    (`changed`: task id -> what the change costs) are left out and counted by kind in
    `changed_tasks`; those whose first attempt could not be graded in either run are left
    out and counted in `unpaired_tasks`.
    """
    changed = dict(changed or {})
    shared = (set(by_task(a.records)) & set(by_task(b.records))) - set(changed)
    pairs = paired_first_attempts(a, b, changed)
    result = {"a": a.label, "b": b.label, "a_log": a.log, "b_log": b.log, **_summary(pairs)}
    result["unpaired_tasks"] = len(shared) - len(pairs)
    result["changed_tasks"] = dict(Counter(changed[t] for t in sorted(changed)))
    result["by_domain"] = _grouped(pairs, lambda p: p.domain, DOMAIN_LABELS)
    result["by_subdomain"] = _grouped(pairs, lambda p: p.subdomain, SUBDOMAIN_LABELS)
    return result


def _grouped(
    pairs: Sequence[Pair], key: Any, order: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """Summaries per group, in the taxonomy's order (names outside it last, sorted)."""
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(key(pair), []).append(pair)
    names = [n for n in order if n in groups] + sorted(n for n in groups if n not in order)
    return {name: _summary(groups[name]) for name in names}
