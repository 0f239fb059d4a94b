"""The appendix's failure examples, chosen by rule (paper App. E, Figs. 9-24). Pure: no
Inspect, no files.

The paper chose its figures by hand; here, for each subdomain, the task that the most
runs failed for the same cause: the systematic failures of Sec. 3.2. A run fails a task
when its first graded attempt fails, as the failure tables count (`failures`). Ties go
to the task more runs fail, then to the task more runs attempted, then by task id. The
figure shows one of the failing answers of that cause: the one of the run with the best
pass@1, so a reader sees that even the strongest run failed there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hss_inspect.core.errors import InputError
from hss_inspect.core.names import unknown_text
from hss_inspect.core.taxonomy import SUBDOMAIN_BY_NAME
from hss_inspect.report.compare import first_attempts
from hss_inspect.report.failures import is_labelled
from hss_inspect.report.records import AttemptRecord
from hss_inspect.report.stats import mean_or_none
from hss_inspect.report.tables import Run, by_task, primary_runs, task_outcome


@dataclass(frozen=True)
class Example:
    """A task shown as a failure example, with the counts that chose it."""

    task_id: str
    subdomain: str
    runs: int  # runs whose first attempt at the task was graded
    failing: int  # of those, runs whose first attempt failed
    cause: str | None  # the cause most of the failing runs were labelled with
    same_cause: int  # runs failing for that cause
    shown: AttemptRecord | None  # the answer the figure shows (a failing one, if any)
    named: bool = False  # named by the user rather than chosen

    @property
    def how_chosen(self) -> str:
        """How the figure came to be shown, e.g. "9 of 11 runs fail; 7 of them for
        missed_cue"."""
        counts = f"{self.failing} of {self.runs} run{'' if self.runs == 1 else 's'} fail"
        if self.failing == 0:
            reason = counts
        elif self.cause is None:
            reason = f"{counts}; none of the failures is labelled with a cause"
        else:
            reason = f"{counts}; {self.same_cause} of them for {self.cause}"
        return f"named on the command line; {reason}" if self.named else reason


@dataclass(frozen=True)
class _Counts:
    """A task's first attempts across the runs."""

    firsts: tuple[AttemptRecord, ...]  # graded first attempts, in run order

    @property
    def failures(self) -> list[AttemptRecord]:
        return [r for r in self.firsts if r.pass_ == 0]

    @property
    def cause(self) -> tuple[str | None, int]:
        labelled = Counter(r.cause for r in self.failures if is_labelled(r) and r.cause)
        if not labelled:
            return None, 0
        cause, count = min(labelled.items(), key=lambda item: (-item[1], item[0]))
        return cause, count

    def rank(self, task_id: str) -> tuple[int, int, int, str]:
        """Smaller first: most runs failing for one cause, most failing, most runs."""
        return (-self.cause[1], -len(self.failures), -len(self.firsts), task_id)


def choose_examples(runs: Sequence[Run], per_subdomain: int = 1) -> list[Example]:
    """For each subdomain (the paper's order, then any other), the `per_subdomain` tasks
    the most runs failed for the same cause; a task no run fails is never chosen."""
    counts = _first_attempts(runs)
    order = _pass_order(runs)
    by_subdomain: dict[str, list[str]] = {}
    for task_id, found in counts.items():
        if found.failures:
            by_subdomain.setdefault(found.firsts[0].subdomain, []).append(task_id)
    chosen = []
    for subdomain in _subdomain_order(by_subdomain):
        ranked = sorted(by_subdomain[subdomain], key=lambda t: counts[t].rank(t))
        chosen += [_example(t, counts[t], order) for t in ranked[:per_subdomain]]
    return chosen


def named_examples(runs: Sequence[Run], task_ids: Sequence[str]) -> list[Example]:
    """The examples of the tasks named, in the order named (an unknown id is refused)."""
    check_task_ids(runs, task_ids)
    counts = _first_attempts(runs)
    order = _pass_order(runs)
    empty = _Counts(())
    return [
        _example(task_id, counts.get(task_id, empty), order, named=True, runs=runs)
        for task_id in dict.fromkeys(task_ids)
    ]


def check_task_ids(runs: Sequence[Run], task_ids: Sequence[str]) -> None:
    """Refuse a task id no run holds, naming the closest and the first ids held."""
    known = list(dict.fromkeys(r.task_id for run in runs for r in run.records))
    for task_id in task_ids:
        if task_id not in known:
            shown = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
            raise InputError(
                unknown_text(task_id, "a task of these logs", known, f"they hold {shown}")
            )


def _first_attempts(runs: Sequence[Run]) -> dict[str, _Counts]:
    firsts: dict[str, list[AttemptRecord]] = {}
    for run in primary_runs(runs):
        for task_id, record in first_attempts(run).items():
            firsts.setdefault(task_id, []).append(record)
    return {task_id: _Counts(tuple(found)) for task_id, found in firsts.items()}


def _example(
    task_id: str,
    counts: _Counts,
    order: dict[str, int],
    named: bool = False,
    runs: Sequence[Run] = (),
) -> Example:
    cause, same = counts.cause
    failures = counts.failures
    candidates = [r for r in failures if r.cause == cause] if cause else failures
    if not candidates:  # a named task no run fails: the best run's answer
        candidates = list(counts.firsts) or [
            r for run in primary_runs(runs) for r in run.records if r.task_id == task_id
        ]
    shown = min(candidates, key=lambda r: order.get(r.log, len(order)), default=None)
    return Example(
        task_id=task_id,
        subdomain=shown.subdomain if shown else "",
        runs=len(counts.firsts),
        failing=len(failures),
        cause=cause,
        same_cause=same,
        shown=shown,
        named=named,
    )


def _pass_order(runs: Sequence[Run]) -> dict[str, int]:
    """Each log's place among the runs by pass@1, best first (ties: the order given)."""
    primary = primary_runs(runs)
    scores = [_pass_at_1(run) for run in primary]
    ranked = sorted(range(len(primary)), key=lambda i: (-(scores[i] or 0.0), i))
    return {primary[i].log: place for place, i in enumerate(ranked)}


def _pass_at_1(run: Run) -> float | None:
    outcomes = [task_outcome(attempts) for attempts in by_task(run.records).values()]
    return mean_or_none([o.pass_ for o in outcomes if o.pass_ is not None])


def _subdomain_order(found: dict[str, list[str]]) -> list[str]:
    known = [name for name in SUBDOMAIN_BY_NAME if name in found]
    return known + sorted(name for name in found if name not in SUBDOMAIN_BY_NAME)
