"""The attrition funnel of a build (paper Sec. 2.4, App. B.2, Fig. 8), as pure arithmetic over
each task's history.

Counts are net, as in Fig. 8: a task is placed by its latest submitted revision. One that
passed round r counts among the survivors of round r; one dropped at round r is a net drop
of round r; one returned for revision is back before round 1 (with the tasks awaiting round
1), so a task returned and re-admitted later counts once, at the round it finally passes.
For each round r: entered (the survivors of round r - 1; the tasks authored for round 1) =
survivors + net drops + waiting. Edits are counted gross, each Edit verdict where it was
given, beside the re-entries (revisions submitted again after an Edit).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from hss_inspect.construction.store import IMPORTED, ReviewSlot, TaskHistory

ADMITTED, DROPPED, WAITING, IN_REVISION = "admitted", "dropped", "waiting", "in revision"


@dataclass(frozen=True)
class Position:
    """Where a task stands by its latest submitted revision: rounds passed, and its outcome
    (admitted, dropped or waiting at `round`, or in revision)."""

    passed: int
    outcome: str
    round: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class RoundCounts:
    round: int
    entered: int
    survivors: int
    dropped: int
    waiting: int
    drop_reasons: dict[str, int]
    edits: int


# What is counted of each author and each reviewer, in the order the tables show it.
AUTHOR_COUNTS = ("drafts", "authored", "in review", "in revision", "admitted", "dropped",
                 "edits received")  # fmt: skip
REVIEWER_COUNTS = ("dealt", "decided", "pass", "edit", "drop")


@dataclass(frozen=True)
class PersonCounts:
    """One author's or reviewer's counts (by the names above), and their median minutes per
    revision authored or per review."""

    name: str
    counts: dict[str, int]
    median_minutes: float | None


@dataclass(frozen=True)
class Funnel:
    authored: int
    drafts: int
    rounds: tuple[RoundCounts, ...]
    admitted: int
    in_revision: int
    reentries: int
    authoring_minutes: float | None
    review_minutes: float | None
    authors: tuple[PersonCounts, ...] = field(default=())
    reviewers: tuple[PersonCounts, ...] = field(default=())

    @property
    def yield_share(self) -> float | None:
        return self.admitted / self.authored if self.authored else None


def position(history: TaskHistory, rounds: int) -> Position | None:
    """The task's place in the funnel (None: never submitted, so not in it)."""
    submitted = [r.revision for r in history.revisions if r.submitted_at is not None]
    if not submitted:
        return None
    latest = max(submitted)
    last = max((s for s in history.reviews if s.revision == latest), key=lambda s: s.round)
    if last.verdict is None:
        return Position(last.round - 1, WAITING, last.round)
    if last.verdict == "pass" and history.view.state == "returned":
        return Position(0, IN_REVISION, 1)  # admitted, then reopened for an erratum
    if last.verdict == "pass":
        if last.round < rounds:
            raise ValueError(
                f"task {history.view.task_id}: passed round {last.round}, none dealt next"
            )
        return Position(rounds, ADMITTED)
    if last.verdict == "drop":
        return Position(last.round - 1, DROPPED, last.round, last.reason)
    return Position(0, IN_REVISION, 1)


def funnel(
    histories: Sequence[TaskHistory],
    rounds: int,
    authors: Sequence[str] = (),
    reviewers: Sequence[str] = (),
) -> Funnel:
    """The funnel; `authors` and `reviewers` are listed even with nothing to count yet."""
    placed = {h.view.task_id: position(h, rounds) for h in histories}
    positions = [p for p in placed.values() if p is not None]
    reviews = [s for h in histories for s in h.reviews]
    per_round = []
    entered = len(positions)
    for r in range(1, rounds + 1):
        survivors = sum(p.passed >= r for p in positions)
        ended = [p for p in positions if p.outcome == DROPPED and p.round == r]
        waiting = sum(p.outcome in (WAITING, IN_REVISION) and p.round == r for p in positions)
        reasons = Counter(p.reason or "" for p in ended)
        edits = sum(s.verdict == "edit" and s.round == r for s in reviews)
        per_round.append(
            RoundCounts(r, entered, survivors, len(ended), waiting, dict(reasons), edits)
        )
        entered = survivors
    return Funnel(
        authored=len(positions),
        drafts=len(placed) - len(positions),
        rounds=tuple(per_round),
        admitted=sum(p.outcome == ADMITTED for p in positions),
        in_revision=sum(p.outcome == IN_REVISION for p in positions),
        reentries=sum(
            r.revision > 1 and r.submitted_at is not None for h in histories for r in h.revisions
        ),
        authoring_minutes=median([m for h in histories for m in authoring_minutes(h)]),
        review_minutes=median([m for s in reviews if (m := review_minutes(s)) is not None]),
        authors=tuple(author_counts(histories, placed, authors)),
        reviewers=tuple(reviewer_counts(reviews, reviewers)),
    )


def authoring_minutes(history: TaskHistory) -> list[float]:
    """Minutes from opening the form to submitting, per submitted revision (an imported
    task's first revision was authored elsewhere: no time)."""
    return [
        (r.submitted_at - r.started_at) / 60
        for r in history.revisions
        if r.submitted_at is not None and not (history.view.origin == IMPORTED and r.revision == 1)
    ]


def review_minutes(slot: ReviewSlot) -> float | None:
    """Minutes from the round shown to its verdict (from dealt, if never shown)."""
    if slot.decided_at is None:
        return None
    return (slot.decided_at - (slot.shown_at or slot.dealt_at)) / 60


def author_counts(
    histories: Sequence[TaskHistory], placed: dict[str, Position | None], listed: Sequence[str]
) -> list[PersonCounts]:
    counts = []
    for author in sorted({h.view.author for h in histories} | set(listed)):
        own = [h for h in histories if h.view.author == author]
        outcome = Counter(
            "drafts" if (p := placed[h.view.task_id]) is None else p.outcome for h in own
        )
        numbers = {
            "drafts": outcome["drafts"],
            "authored": len(own) - outcome["drafts"],
            "in review": outcome[WAITING],
            "in revision": outcome[IN_REVISION],
            "admitted": outcome[ADMITTED],
            "dropped": outcome[DROPPED],
            "edits received": sum(s.verdict == "edit" for h in own for s in h.reviews),
        }
        minutes = median([m for h in own for m in authoring_minutes(h)])
        counts.append(PersonCounts(author, numbers, minutes))
    return counts


def reviewer_counts(reviews: Sequence[ReviewSlot], listed: Sequence[str]) -> list[PersonCounts]:
    counts = []
    for reviewer in sorted({s.reviewer for s in reviews} | set(listed)):
        own = [s for s in reviews if s.reviewer == reviewer]
        verdicts = Counter(s.verdict for s in own)
        numbers = {"dealt": len(own), "decided": len(own) - verdicts[None]}
        numbers |= {verdict: verdicts[verdict] for verdict in ("pass", "edit", "drop")}
        minutes = median([m for s in own if (m := review_minutes(s)) is not None])
        counts.append(PersonCounts(reviewer, numbers, minutes))
    return counts


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None
