"""The paper's failure analysis from labelled attempt records (Sec. 3.2-3.3, Fig. 3-4,
Tables 2, 6, 7, 8). Pure: no Inspect, no files.

Everything counts first attempts, as the paper does: each run's lowest-numbered epoch
of each task, when the judge could grade it. A *failure* is such an attempt with
pass 0; its cause is the `failure_cause` label (None when the log was never labelled,
`unlabelled` when the labeller's replies stayed unreadable). Shares are taken over
labelled failures; the counts of the other two are reported beside them.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from hss_inspect.core.taxonomy import domain_label, subdomain_label
from hss_inspect.grading.causes import Taxonomy
from hss_inspect.grading.labeler import UNLABELLED
from hss_inspect.report.compare import Pair, _grouped, _summary, first_attempts
from hss_inspect.report.records import AttemptRecord
from hss_inspect.report.tables import Run

AGENTIC = "agentic"
SINGLE_CALL = "standard"
CONSENSUS_MIN_MODELS = 5


def first_failures(runs: Sequence[Run]) -> list[AttemptRecord]:
    return [r for run in runs for r in first_attempts(run).values() if r.pass_ == 0]


def is_labelled(record: AttemptRecord) -> bool:
    return record.cause is not None and record.cause != UNLABELLED


def cause_shares(failures: Sequence[AttemptRecord], causes: Taxonomy) -> dict[str, Any]:
    """Counts and shares of each cause and family among the labelled failures."""
    labelled = [f.cause for f in failures if is_labelled(f)]
    by_cause = Counter(labelled)
    by_family = Counter(causes.family_of(c) for c in labelled if c in causes.ids)
    n = len(labelled)
    return {
        "failures": len(failures),
        "labelled": n,
        "unlabelled": sum(f.cause == UNLABELLED for f in failures),
        "not_labelled": sum(f.cause is None for f in failures),
        "causes": {c: _share(by_cause[c], n) for c in causes.ids if by_cause[c]},
        "families": {f: _share(k, n) for f, k in by_family.items()},
    }


def _share(count: int, total: int) -> dict[str, Any]:
    return {"count": count, "share": count / total if total else None}


def shares_by(
    failures: Sequence[AttemptRecord], causes: Taxonomy, key: Callable[[AttemptRecord], str]
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[AttemptRecord]] = {}
    for failure in failures:
        groups.setdefault(key(failure), []).append(failure)
    return {name: cause_shares(members, causes) for name, members in sorted(groups.items())}


def cause_consensus(failures: Sequence[AttemptRecord], causes: Taxonomy) -> dict[str, Any]:
    """On tasks that `CONSENSUS_MIN_MODELS` or more models fail (labelled), how much their
    causes agree.

    Per task: the share of its failing models whose cause is the task's most common
    cause (and family). Reported: the number of such tasks, the medians of those shares,
    and the share of tasks whose failures all share one cause (one family).
    """
    per_task: dict[str, dict[str, str]] = {}
    for failure in failures:
        if is_labelled(failure) and failure.cause is not None:
            per_task.setdefault(failure.task_id, {})[failure.model] = failure.cause
    cause_agreement, family_agreement = [], []
    for by_model in per_task.values():
        if len(by_model) < CONSENSUS_MIN_MODELS:
            continue
        labels = list(by_model.values())
        cause_agreement.append(_modal_share(labels))
        family_agreement.append(_modal_share([causes.family_of(c) for c in labels]))
    n = len(cause_agreement)
    return {
        "min_models": CONSENSUS_MIN_MODELS,
        "tasks": n,
        "median_same_cause": statistics.median(cause_agreement) if n else None,
        "median_same_family": statistics.median(family_agreement) if n else None,
        "all_same_cause": sum(s == 1 for s in cause_agreement) / n if n else None,
        "all_same_family": sum(s == 1 for s in family_agreement) / n if n else None,
    }


def _modal_share(labels: Sequence[str]) -> float:
    return Counter(labels).most_common(1)[0][1] / len(labels)


def agentic_pairs(runs: Sequence[Run]) -> list[tuple[Run, Run]]:
    """Each agentic run with the single-call run of the same model and judge."""
    singles = {(r.model, r.judge): r for r in runs if r.condition == SINGLE_CALL}
    return [
        (singles[(r.model, r.judge)], r)
        for r in runs
        if r.condition == AGENTIC and (r.model, r.judge) in singles
    ]


def agentic_shift(runs: Sequence[Run], causes: Taxonomy) -> dict[str, Any]:
    """Single-call against agentic, pooled over model pairs on their shared tasks.

    Table 7: failures per cause before and after, and the share of single-call failures
    of each cause that the agent repaired; Table 8: pass@1 by subdomain and its change
    with McNemar's exact p; Table 2: median steps and mean thinking tokens of passing
    and failing agentic attempts.
    """
    pairs = agentic_pairs(runs)
    matched: list[tuple[AttemptRecord, AttemptRecord]] = []
    for single, agent in pairs:
        firsts_single, firsts_agent = first_attempts(single), first_attempts(agent)
        matched += [
            (firsts_single[t], firsts_agent[t]) for t in sorted(firsts_single) if t in firsts_agent
        ]
    outcome_pairs = [_pair(a, b) for a, b in matched]
    return {
        "pairs": [{"model": s.model, "single_log": s.log, "agentic_log": a.log} for s, a in pairs],
        "paired_attempts": len(matched),
        "causes": _before_after(matched, causes),
        "pass": _summary(outcome_pairs) if outcome_pairs else None,
        "by_subdomain": _grouped(outcome_pairs, lambda p: p.subdomain),
        "agent_cost": _agent_cost([b for _, b in matched]),
    }


def _pair(single: AttemptRecord, agent: AttemptRecord) -> Pair:
    return Pair(
        single.task_id,
        domain_label(single.domain),
        subdomain_label(single.subdomain),
        single.pass_ == 1,
        agent.pass_ == 1,
    )


def _before_after(
    matched: Sequence[tuple[AttemptRecord, AttemptRecord]], causes: Taxonomy
) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for cause in (*causes.ids, UNLABELLED):
        before = [b for a, b in matched if a.pass_ == 0 and a.cause == cause]
        after = sum(1 for _, b in matched if b.pass_ == 0 and b.cause == cause)
        fixed = sum(b.pass_ == 1 for b in before)
        if before or after:
            rows[cause] = {
                "before": len(before),
                "after": after,
                "fixed": fixed,
                "fixed_share": fixed / len(before) if before else None,
            }
    total_before = sum(1 for a, _ in matched if a.pass_ == 0)
    total_after = sum(1 for _, b in matched if b.pass_ == 0)
    rows["all"] = {
        "before": total_before,
        "after": total_after,
        "fixed": sum(1 for a, b in matched if a.pass_ == 0 and b.pass_ == 1),
        "fixed_share": None,
    }
    if total_before:
        rows["all"]["fixed_share"] = rows["all"]["fixed"] / total_before
    return rows


def _agent_cost(agentic: Sequence[AttemptRecord]) -> dict[str, dict[str, Any]]:
    cost = {}
    for name, group in (
        ("pass", [r for r in agentic if r.pass_ == 1]),
        ("fail", [r for r in agentic if r.pass_ == 0]),
    ):
        steps = [r.agent_steps for r in group if r.agent_steps is not None]
        thinking = [r.reasoning_tokens for r in group if r.reasoning_tokens is not None]
        cost[name] = {
            "attempts": len(group),
            "median_steps": statistics.median(steps) if steps else None,
            "mean_thinking_tokens": statistics.mean(thinking) if thinking else None,
        }
    return cost


def failure_analysis(runs: Sequence[Run], causes: Taxonomy) -> dict[str, Any]:
    """Every failure table: shares (all, by subdomain, by media), consensus, agentic shift."""
    single_call = [r for r in runs if r.condition == SINGLE_CALL]
    failures = first_failures(single_call)
    return {
        "overall": cause_shares(failures, causes),
        "by_subdomain": shares_by(failures, causes, lambda f: subdomain_label(f.subdomain)),
        "by_media": shares_by(failures, causes, lambda f: f.media_type),
        "consensus": cause_consensus(failures, causes),
        "agentic": agentic_shift(runs, causes),
    }
