"""What the build's pages, checks, funnel and release read of its tasks: a task's view (its
item, where it stands, its latest revision, the Edits and the Drop it got), a review round's
slot, and the histories the funnel counts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from hss_inspect.construction.authoring import Draft
from hss_inspect.construction.build_file import AUTHORED, names_of, reading, settings_of
from hss_inspect.construction.pool import PoolItem
from hss_inspect.data.rows import Criterion, criterion_records


@dataclass(frozen=True)
class ReviewSlot:
    """One round of one revision, dealt to one reviewer when it reached the round, shown to
    them (None: not yet), and its verdict once given."""

    task_id: str
    revision: int
    round: int
    shown_at: float | None
    reviewer: str
    dealt_at: float
    verdict: str | None = None
    reason: str | None = None
    feedback: str | None = None
    decided_at: float | None = None


# The columns of `reviews` in the order of ReviewSlot's fields.
SLOT_COLUMNS = (
    "task_id, revision, round, shown_at, reviewer, dealt_at, verdict, reason, feedback, decided_at"
)


# ---- a task as its pages show it ---------------------------------------------------------


@dataclass(frozen=True)
class TaskView:
    """A task as its pages show it: its item, where it stands, its latest revision."""

    task_id: str
    item: PoolItem
    author: str
    round: int | None  # the round it awaits (in review)
    state: str
    revision: int
    draft: Draft
    submitted: bool  # whether the latest revision has been submitted
    feedback: tuple[str, ...] = ()  # the Edit feedback the latest submitted revision got
    origin: str = AUTHORED
    about: tuple[str, ...] = ()  # the criteria that Edit marked (ids)
    drop: ReviewSlot | None = None  # the verdict that dropped it, with its reason


# A task's view: the task, its item, its latest revision (none yet: empty texts).
VIEW_QUERY = (
    "SELECT t.task_id, i.item_id, i.path, i.media_type, i.bytes, t.author, t.round, "
    "t.state, t.revision, t.origin, COALESCE(r.subdomain, ''), COALESCE(r.prompt, ''), "
    "COALESCE(r.reference, ''), COALESCE(r.criteria, '[]'), r.submitted_at "
    "FROM tasks t JOIN items i USING (item_id) "
    "LEFT JOIN revisions r ON r.task_id = t.task_id AND r.revision = t.revision"
)
# The Edits of each task's latest submitted revision (`v`, of the tasks `t`).
EDITS_OF_LATEST = (
    "FROM reviews v JOIN tasks t ON t.task_id = v.task_id WHERE v.verdict = 'edit' AND "
    "v.revision = (SELECT MAX(r.revision) FROM revisions r WHERE r.task_id = v.task_id "
    "AND r.submitted_at IS NOT NULL)"
)


def task_views(
    db: sqlite3.Connection, where: str = "1", parameters: tuple[Any, ...] = ()
) -> list[TaskView]:
    """The views of the tasks `t` meeting `where`, in task order, in four queries whatever
    their number (a page, `status` and `funnel` read thousands)."""
    slots = f"SELECT {qualified_slot()}"
    edits: dict[str, list[ReviewSlot]] = {}
    for row in db.execute(f"{slots} {EDITS_OF_LATEST} AND {where} ORDER BY v.round", parameters):
        edits.setdefault(row[0], []).append(ReviewSlot(*row))
    marks: dict[str, list[str]] = {}
    for task_id, criterion in db.execute(
        "SELECT v.task_id, m.criterion FROM edit_marks m JOIN (SELECT v.* "
        f"{EDITS_OF_LATEST} AND {where}) v ON m.task_id = v.task_id AND "
        "m.revision = v.revision AND m.round = v.round ORDER BY v.round, m.rowid",
        parameters,
    ):
        marks.setdefault(task_id, []).append(criterion)
    drops: dict[str, ReviewSlot] = {}
    for row in db.execute(
        f"{slots} FROM reviews v JOIN tasks t ON t.task_id = v.task_id WHERE v.verdict = "
        f"'drop' AND t.state = 'dropped' AND {where} ORDER BY v.revision, v.round",
        parameters,
    ):
        drops[row[0]] = ReviewSlot(*row)  # the latest holds
    # an admitted task reopened for an erratum: the note its author is shown, as an Edit's
    for task_id, note in db.execute(
        "SELECT o.task_id, o.note FROM reopenings o JOIN tasks t ON t.task_id = o.task_id "
        f"WHERE o.revision = t.revision AND t.state = 'returned' AND {where}",
        parameters,
    ):
        edits.setdefault(task_id, []).append(
            ReviewSlot(task_id, 0, 0, None, "", 0.0, "edit", None, f"Erratum: {note}")
        )
    rows = db.execute(f"{VIEW_QUERY} WHERE {where} ORDER BY t.task_id", parameters)
    return [
        TaskView(
            row[0],
            PoolItem(*row[1:5]),
            author=row[5],
            round=row[6],
            state=row[7],
            revision=row[8],
            origin=row[9],
            submitted=row[14] is not None,
            draft=Draft(row[10], row[11], row[12], criteria_of(row[13])),
            feedback=tuple(e.feedback or "" for e in edits.get(row[0], ())),
            about=tuple(marks.get(row[0], ())),
            drop=drops.get(row[0]),
        )
        for row in rows
    ]


def qualified_slot() -> str:
    """The columns of a ReviewSlot, of the reviews `v` (joined with the tasks `t`)."""
    return ", ".join(f"v.{column.strip()}" for column in SLOT_COLUMNS.split(","))


def task_view(db: sqlite3.Connection, task_id: str) -> TaskView | None:
    found = task_views(db, "t.task_id = ?", (task_id,))
    return found[0] if found else None


def edit_marks(db: sqlite3.Connection, slot: ReviewSlot) -> tuple[str, ...]:
    """The criteria (ids) an Edit marked, in the rubric's order of their marking."""
    rows = db.execute(
        "SELECT criterion FROM edit_marks WHERE task_id = ? AND revision = ? AND round = ? "
        "ORDER BY rowid",
        (slot.task_id, slot.revision, slot.round),
    )
    return tuple(c for (c,) in rows)


def dropped_by(db: sqlite3.Connection, task_id: str) -> ReviewSlot | None:
    row = db.execute(
        f"SELECT {SLOT_COLUMNS} FROM reviews WHERE task_id = ? AND verdict = 'drop' "
        "ORDER BY revision DESC, round DESC LIMIT 1",
        (task_id,),
    ).fetchone()
    return None if row is None else ReviewSlot(*row)


def view_of(path: Path, task_id: str) -> TaskView | None:
    with reading(path) as db:
        return task_view(db, task_id)


def tasks_of_author(path: Path, author: str) -> list[TaskView]:
    with reading(path) as db:
        return task_views(db, "t.author = ?", (author,))


def awaiting_review(path: Path) -> list[TaskView]:
    """The tasks in review, at their revision under review."""
    with reading(path) as db:
        return task_views(db, "t.state = 'review'")


# ---- what the funnel and the release read ------------------------------------------------


class RevisionTimes(NamedTuple):
    revision: int
    started_at: float
    submitted_at: float | None


@dataclass(frozen=True)
class TaskHistory:
    """Everything the funnel counts of one task: the task, its revisions and its rounds."""

    view: TaskView
    revisions: tuple[RevisionTimes, ...]
    reviews: tuple[ReviewSlot, ...]


def histories(path: Path) -> list[TaskHistory]:
    with reading(path) as db:
        views = task_views(db)
        times: dict[str, list[RevisionTimes]] = {}
        for task_id, *rest in db.execute(
            "SELECT task_id, revision, started_at, submitted_at FROM revisions "
            "ORDER BY task_id, revision"
        ):
            times.setdefault(task_id, []).append(RevisionTimes(*rest))
        reviews: dict[str, list[ReviewSlot]] = {}
        for row in db.execute(
            f"SELECT {SLOT_COLUMNS} FROM reviews ORDER BY task_id, revision, round"
        ):
            reviews.setdefault(row[0], []).append(ReviewSlot(*row))
    return [
        TaskHistory(v, tuple(times.get(v.task_id, ())), tuple(reviews.get(v.task_id, ())))
        for v in views
    ]


def admitted(path: Path) -> list[tuple[TaskView, PoolItem]]:
    """The admitted tasks at their admitted revision, with their items, in task order; a
    retired task is left out (`versions.retire`)."""
    with reading(path) as db:
        views = task_views(
            db, "t.state = 'admitted' AND t.task_id NOT IN (SELECT task_id FROM retirements)"
        )
    return [(view, view.item) for view in views]


def criteria_json(criteria: Sequence[Criterion]) -> str:
    return json.dumps(criterion_records(criteria), ensure_ascii=False)


def criteria_of(text: str) -> tuple[Criterion, ...]:
    return tuple(
        Criterion(str(c["id"]), str(c["title"]), c.get("weight")) for c in json.loads(text)
    )


def build_funnel_inputs(path: Path) -> tuple[list[TaskHistory], int, list[str], list[str]]:
    """What `funnel.funnel` takes of a build: histories, rounds, authors and reviewers."""
    rounds = int(settings_of(path)["rounds"])
    return histories(path), rounds, names_of(path, "author"), names_of(path, "reviewer")
