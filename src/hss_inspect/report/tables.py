"""The leaderboard (the paper's Table 1 layout), subdomain table and item difficulty,
computed from attempt records. Pure: no Inspect, no files.

A *run* is one log as graded by one rubric scorer; a log re-graded with
`inspect score --action append` gives one run per judge.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hss_inspect.core.taxonomy import DOMAINS, MEDIA_TYPES, subdomain_label
from hss_inspect.grading.metrics import TaskOutcome, summarize
from hss_inspect.report.records import AttemptRecord
from hss_inspect.report.stats import mean_or_none, mean_pass_at_k

GROUP_COLUMNS: tuple[str, ...] = (*MEDIA_TYPES, *(d.label for d in DOMAINS))
SUBDOMAIN_LABELS: tuple[str, ...] = tuple(s.label for d in DOMAINS for s in d.subdomains)


@dataclass(frozen=True)
class Run:
    """The records of one log graded by one scorer, with the settings they share."""

    log: str
    scorer: str
    judge: str
    model: str
    condition: str
    reasoning_effort: str | None
    max_frames: int | None
    records: tuple[AttemptRecord, ...]

    @property
    def label(self) -> str:
        effort = f" ({self.reasoning_effort})" if self.reasoning_effort else ""
        blind = f" [{self.condition}]" if self.condition != "standard" else ""
        return f"{self.model}{effort}{blind}"


def runs_of(records: Iterable[AttemptRecord]) -> list[Run]:
    """Records grouped by (log, scorer), in the order they first appear."""
    grouped: dict[tuple[str, str], list[AttemptRecord]] = {}
    for record in records:
        grouped.setdefault((record.log, record.scorer), []).append(record)
    return [
        Run(
            log=first.log,
            scorer=first.scorer,
            judge=first.judge,
            model=first.model,
            condition=first.condition,
            reasoning_effort=first.reasoning_effort,
            max_frames=first.max_frames,
            records=tuple(group),
        )
        for (first, group) in ((group[0], group) for group in grouped.values())
    ]


def primary_runs(runs: Sequence[Run]) -> list[Run]:
    """The first rubric scorer of each log (the one the eval itself ran)."""
    seen: set[str] = set()
    chosen = []
    for run in runs:
        if run.log not in seen:
            seen.add(run.log)
            chosen.append(run)
    return chosen


def by_task(records: Iterable[AttemptRecord]) -> dict[str, list[AttemptRecord]]:
    tasks: dict[str, list[AttemptRecord]] = {}
    for record in records:
        tasks.setdefault(record.task_id, []).append(record)
    return tasks


def task_outcome(attempts: Sequence[AttemptRecord]) -> TaskOutcome:
    """A task's attempts reduced as Inspect's `mean` reducer does (graded attempts only)."""
    graded = [a for a in attempts if a.pass_ is not None and a.rubric is not None]
    first = attempts[0]
    return TaskOutcome(
        pass_=mean_or_none([a.pass_ or 0.0 for a in graded]),
        rubric=mean_or_none([a.rubric or 0.0 for a in graded]),
        no_answer=sum(a.no_answer for a in attempts) / len(attempts),
        grading_failure=sum(a.grading_failure for a in attempts) / len(attempts),
        model_error=sum(a.model_error for a in attempts) / len(attempts),
        media_type=first.media_type,
        domain=first.domain,
        subdomain=first.subdomain,
    )


def leaderboard_row(run: Run) -> dict[str, Any]:
    """One row of the report: the JSON shape documented in the README."""
    tasks = by_task(run.records)
    summary = summarize([task_outcome(attempts) for attempts in tasks.values()])
    graded = [[a for a in attempts if a.graded] for attempts in tasks.values()]
    counts = [(len(g), sum(a.pass_ == 1 for a in g)) for g in graded if g]
    k_max = min((n for n, _ in counts), default=0)
    return {
        "log": run.log,
        "model": run.model,
        "condition": run.condition,
        "reasoning_effort": run.reasoning_effort,
        "max_frames": run.max_frames,
        "judge": run.judge,
        "scorer": run.scorer,
        "n_tasks": len(tasks),
        "attempts": len(run.records),
        "pass_at_1": _finite(summary["pass_at_1"]),
        "ci95": _finite(summary["pass_at_1_ci95"]),
        "rubric": _finite(summary["rubric"]),
        "pass_at_k": {str(k): mean_pass_at_k(counts, k) for k in range(1, k_max + 1)},
        **{group: summary.get(group) for group in GROUP_COLUMNS},
        "subdomains": subdomain_values(summary, run.records),
        "think_tokens": _mean_tokens(r.reasoning_tokens for r in run.records),
        "answer_tokens": _mean_tokens(r.answer_tokens for r in run.records),
        "no_answer": sum(r.no_answer for r in run.records),
        "grading_failures": sum(r.grading_failure for r in run.records),
        "model_errors": sum(r.model_error for r in run.records),
        "refusals": sum(r.refusal for r in run.records),
        "ungraded_tasks": int(summary["ungraded_tasks"]),
        "frames_received": frames_received(run.records),
    }


def subdomain_values(
    summary: dict[str, float], records: Sequence[AttemptRecord]
) -> dict[str, float]:
    """pass@1 per subdomain: the paper's eleven in its order, then any other a release
    names (the loader warns of each), under its own name, as the task's metrics have it."""
    others = sorted({subdomain_label(r.subdomain) for r in records} - set(SUBDOMAIN_LABELS))
    return {s: summary[s] for s in (*SUBDOMAIN_LABELS, *others) if s in summary}


def frames_received(records: Sequence[AttemptRecord]) -> dict[str, Any] | None:
    """Frames the model received per clip (the count changes its score, so the report
    shows it): over its attempts at clips sent as frames; None when it had none."""
    counts = sorted(r.frames_received for r in records if r.frames_received is not None)
    if not counts:
        return None
    return {
        "attempts": len(counts),
        "median": statistics.median(counts),
        "min": counts[0],
        "max": counts[-1],
        "fitted_to_window": sum(r.frames_fitted for r in records),
    }


def _mean_tokens(values: Iterable[int | None]) -> float | None:
    """Mean over the attempts whose provider reported the count; None when none did."""
    return mean_or_none([float(v) for v in values if v is not None])


def _finite(value: float) -> float | None:
    return None if value != value else value  # NaN (nothing graded) reads as null


# ---- item difficulty across runs ------------------------------------------------------


@dataclass(frozen=True)
class Difficulty:
    """Tasks no run solves in any attempt, tasks every run solves in every attempt, and
    tasks whose attempts disagree within at least one run."""

    runs: int
    never_solved: tuple[str, ...]
    always_solved: tuple[str, ...]
    attempts_disagree: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def item_difficulty(runs: Sequence[Run]) -> Difficulty:
    passes: dict[str, list[list[float]]] = {}
    for run in runs:
        for task_id, attempts in by_task(run.records).items():
            graded = [a.pass_ for a in attempts if a.pass_ is not None]
            if graded:
                passes.setdefault(task_id, []).append(graded)
    complete = {t: p for t, p in passes.items() if len(p) == len(runs)}
    return Difficulty(
        runs=len(runs),
        never_solved=tuple(sorted(t for t, p in complete.items() if _all(p, 0.0))),
        always_solved=tuple(sorted(t for t, p in complete.items() if _all(p, 1.0))),
        attempts_disagree=tuple(
            sorted(t for t, p in passes.items() if any(len(set(a)) > 1 for a in p))
        ),
    )


def _all(per_run: list[list[float]], value: float) -> bool:
    return all(v == value for attempts in per_run for v in attempts)
