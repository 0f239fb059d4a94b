"""Principle 3 (Sec. 2.3) measured rather than voted: how many of the reviewers' blind
answers met the rubric, per task and overall; the admitted tasks where one did not; and the
split's own human baseline, pass@1 of the blind answers on the admitted tasks with its 95%
bootstrap interval (as Sec. 3.1 measured the release's human baseline). Pure arithmetic:
pass@1 and its interval are `grading.metrics.summarize`, the computation of every run's
results line and of the report, each task's answers reduced to their mean as a task's
attempts are."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ADMITTED = "admitted"


@dataclass(frozen=True)
class TaskAnswers:
    """One task's blind answers at its latest submitted revision: how many were given, how
    many the judge graded, and how many of those met the rubric."""

    task_id: str
    state: str
    answers: int
    graded: int
    met: int


@dataclass(frozen=True)
class Grade:
    """One graded blind answer: whether it met the rubric, its rubric score, the judge."""

    task_id: str
    passed: bool
    rubric: float
    judge: str


@dataclass(frozen=True)
class Baseline:
    """The split's human baseline: pass@1 and the half-width of its 95% interval (as
    fractions), the admitted tasks it covers, the answers graded and their judges."""

    pass_at_1: float
    ci95: float
    task_ids: tuple[str, ...]
    answers: int
    judges: tuple[str, ...]

    @property
    def tasks(self) -> int:
        return len(self.task_ids)


@dataclass(frozen=True)
class BlindMeasure:
    """What a build that asks for blind answers measured: each task's answers, and the
    split's human baseline (None: no answer to an admitted task is graded yet)."""

    tasks: tuple[TaskAnswers, ...]
    baseline: Baseline | None


def totals(tasks: Sequence[TaskAnswers]) -> TaskAnswers:
    """The overall counts, as one row named `all`."""
    return TaskAnswers(
        "all", "",
        sum(t.answers for t in tasks), sum(t.graded for t in tasks), sum(t.met for t in tasks),
    )  # fmt: skip


def without_consensus(tasks: Sequence[TaskAnswers]) -> list[TaskAnswers]:
    """The admitted tasks where a graded blind answer did not meet the rubric."""
    return [t for t in tasks if t.state == ADMITTED and t.graded > t.met]


def ungraded_admitted(tasks: Sequence[TaskAnswers]) -> list[TaskAnswers]:
    return [t for t in tasks if t.state == ADMITTED and t.graded < t.answers]


def human_baseline(grades: Sequence[Grade]) -> Baseline | None:
    """pass@1 of the graded answers over their tasks (None: none graded), each task the mean
    of its answers, the interval resampling tasks."""
    by_task: dict[str, list[Grade]] = {}
    for grade in grades:
        by_task.setdefault(grade.task_id, []).append(grade)
    if not by_task:
        return None
    # Here, not at the top: grading.metrics loads Inspect (1.3 s), and `build status` and
    # `build funnel` import this module without needing a baseline.
    from hss_inspect.grading.metrics import TaskOutcome, summarize

    outcomes = [
        TaskOutcome(
            pass_=sum(g.passed for g in mine) / len(mine),
            rubric=sum(g.rubric for g in mine) / len(mine),
        )
        for mine in by_task.values()
    ]
    summary = summarize(outcomes)
    return Baseline(
        summary["pass_at_1"], summary["pass_at_1_ci95"], tuple(by_task), len(grades),
        tuple(sorted({g.judge for g in grades})),
    )  # fmt: skip


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def overall_line(tasks: Sequence[TaskAnswers]) -> str:
    every = totals(tasks)
    return (
        f"Blind answers: {every.answers} given at the tasks' latest revisions, "
        f"{every.graded} graded, {every.met} met the rubric ({percent(every.met, every.graded)})"
        + (
            f"; {every.answers - every.graded} not yet graded (`hss-inspect build check`)"
            if every.graded < every.answers
            else ""
        )
    )


TASK_HEADER = ["task", "state", "blind answers", "graded", "met the rubric"]


def task_rows(tasks: Sequence[TaskAnswers]) -> list[list[str]]:
    return [[t.task_id, t.state, str(t.answers), str(t.graded), str(t.met)] for t in tasks]


def consensus_lines(tasks: Sequence[TaskAnswers]) -> list[str]:
    """The admitted tasks where a blind answer failed, and those not yet fully graded."""
    lines = []
    failed = without_consensus(tasks)
    if failed:
        listed = ", ".join(f"{t.task_id} ({t.met} of {t.graded} met)" for t in failed)
        lines.append(f"Admitted without measured consensus: {listed}")
    pending = ungraded_admitted(tasks)
    if pending:
        listed = ", ".join(f"{t.task_id} ({t.answers - t.graded})" for t in pending)
        lines.append(f"Admitted with blind answers not yet graded: {listed}")
    return lines


def baseline_line(baseline: Baseline | None) -> str:
    if baseline is None:
        return (
            "Human baseline: not measured yet: no blind answer on an admitted task is graded "
            "(`hss-inspect build check` grades them)."
        )
    return (
        f"Human baseline: pass@1 {100 * baseline.pass_at_1:.1f}% ± {100 * baseline.ci95:.1f} "
        f"(95% bootstrap interval) over {baseline.tasks} admitted task(s), "
        f"{baseline.answers} blind answer(s) graded by {', '.join(baseline.judges)}."
    )


def card_lines(measure: BlindMeasure) -> list[str]:
    """The human baseline and the admitted tasks without measured consensus, as the
    release's card, `build export` and the funnel say them."""
    return [baseline_line(measure.baseline), *consensus_lines(measure.tasks)]


def baseline_record(baseline: Baseline | None) -> dict[str, object] | None:
    """The baseline as the funnel's JSON gives it (fractions, as `report --format json`)."""
    if baseline is None:
        return None
    return {
        "pass_at_1": baseline.pass_at_1, "ci95": baseline.ci95, "tasks": baseline.tasks,
        "task_ids": list(baseline.task_ids), "answers": baseline.answers,
        "judges": list(baseline.judges),
    }  # fmt: skip
