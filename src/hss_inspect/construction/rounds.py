"""Review rounds in the build: a revision entering a round dealt at once to a reviewer
(`deal`), the reviewer's next round, their verdict moving the task on (the first verdict
holds), and the checks' flags a round's reviewers weigh."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hss_inspect.construction.build_file import connect, reading
from hss_inspect.construction.deal import pick_reviewer
from hss_inspect.construction.task_views import (
    SLOT_COLUMNS,
    ReviewSlot,
    TaskView,
    edit_marks,
    task_view,
)
from hss_inspect.web import store


def enter_round(
    db: sqlite3.Connection, task_id: str, revision: int, round_: int, now: float
) -> None:
    """The revision enters review round `round_`, dealt to a reviewer at once."""
    (author,) = db.execute("SELECT author FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
    earlier = {
        name
        for (name,) in db.execute(
            "SELECT reviewer FROM reviews WHERE task_id = ? AND revision = ?", (task_id, revision)
        )
    }
    reviewers = [
        n for (n,) in db.execute("SELECT name FROM people WHERE role = 'reviewer' ORDER BY name")
    ]
    load = dict(db.execute("SELECT reviewer, COUNT(*) FROM reviews GROUP BY reviewer").fetchall())
    (seed,) = db.execute("SELECT value FROM build WHERE key = 'seed'").fetchone()
    chosen = pick_reviewer(
        reviewers, author, earlier, load, int(json.loads(seed)), (task_id, revision, round_)
    )
    db.execute(
        "INSERT INTO reviews (task_id, revision, round, reviewer, dealt_at) VALUES (?, ?, ?, ?, ?)",
        (task_id, revision, round_, chosen, now),
    )
    db.execute("UPDATE tasks SET state = 'review', round = ? WHERE task_id = ?", (round_, task_id))


def next_review(
    path: Path, reviewer: str, now: float | None = None
) -> tuple[ReviewSlot | None, TaskView | None, int, int]:
    """The reviewer's first undecided round (marked shown now, if not yet), its task, and
    how many of the rounds dealt to them are decided and dealt."""
    with reading(path) as db:  # a page is a read: it waits on no verdict being written
        dealt, decided = db.execute(
            "SELECT COUNT(*), COUNT(verdict) FROM reviews WHERE reviewer = ?", (reviewer,)
        ).fetchone()
        row = db.execute(
            f"SELECT {SLOT_COLUMNS} FROM reviews WHERE reviewer = ? AND verdict IS NULL "
            "ORDER BY dealt_at, task_id LIMIT 1",
            (reviewer,),
        ).fetchone()
        if row is None:
            return None, None, decided, dealt
        slot, task = ReviewSlot(*row), task_view(db, row[0])
    if slot.shown_at is None:
        mark_shown(path, slot, time.time() if now is None else now)
    return slot, task, decided, dealt


def mark_shown(path: Path, slot: ReviewSlot, now: float) -> None:
    """When the round was first shown (the first showing holds)."""
    with connect(path) as db:
        db.execute(
            "UPDATE reviews SET shown_at = ? WHERE task_id = ? AND revision = ? AND round = ? "
            "AND shown_at IS NULL",
            (now, slot.task_id, slot.revision, slot.round),
        )


def decide(
    path: Path,
    reviewer: str,
    slot: tuple[str, int, int],
    verdict: str,
    reason: str | None,
    feedback: str | None,
    rounds: int,
    now: float | None = None,
    about: Sequence[str] = (),
) -> bool:
    """Store the verdict of a round dealt to `reviewer` (an Edit with the criteria it is
    `about`) and move the task on; False when there is nothing to store (not theirs, or
    decided already: the first verdict holds)."""
    now = time.time() if now is None else now
    task_id, revision, round_ = slot
    with connect(path) as db:
        stored = db.execute(
            "UPDATE reviews SET verdict = ?, reason = ?, feedback = ?, decided_at = ? "
            "WHERE task_id = ? AND revision = ? AND round = ? AND reviewer = ? "
            "AND verdict IS NULL",
            (verdict, reason, feedback, now, task_id, revision, round_, reviewer),
        )
        if stored.rowcount != 1:
            return False
        db.executemany(
            "INSERT OR IGNORE INTO edit_marks VALUES (?, ?, ?, ?)",
            [(task_id, revision, round_, c) for c in (about if verdict == "edit" else ())],
        )
        if verdict == "pass" and round_ < rounds:
            enter_round(db, task_id, revision, round_ + 1, now)
        else:
            state = {"pass": "admitted", "edit": "returned", "drop": "dropped"}[verdict]
            db.execute(
                "UPDATE tasks SET state = ?, round = NULL WHERE task_id = ?", (state, task_id)
            )
        return True


def verdicts_given(path: Path, reviewer: str) -> list[tuple[ReviewSlot, tuple[str, ...]]]:
    """The verdicts `reviewer` gave, the first first, each with the criteria it marked."""
    with connect(path) as db:
        slots = [
            ReviewSlot(*row)
            for row in db.execute(
                f"SELECT {SLOT_COLUMNS} FROM reviews WHERE reviewer = ? AND verdict IS NOT NULL "
                "ORDER BY decided_at, task_id",
                (reviewer,),
            )
        ]
        return [(slot, edit_marks(db, slot)) for slot in slots]


def dealt_to(path: Path) -> dict[tuple[str, str], str]:
    """Each (reviewer, task id) dealt, with the task's item: what a reviewer may see."""
    rows = store.rows(
        path,
        "SELECT DISTINCT r.reviewer, r.task_id, t.item_id FROM reviews r "
        "JOIN tasks t USING (task_id)",
    )
    return {(reviewer, task_id): item_id for reviewer, task_id, item_id in rows}


# ---- checks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """What a check found on one revision, for its reviewers to weigh (never a verdict)."""

    kind: str
    model: str
    flagged: bool
    detail: str


def checked(path: Path) -> set[tuple[str, int, str, str]]:
    """(task id, revision, kind, model) of every check stored."""
    return set(store.rows(path, "SELECT task_id, revision, kind, model FROM checks"))


def store_flags(
    path: Path, found: Sequence[tuple[str, int, Flag]], log: str, now: float | None = None
) -> None:
    now = time.time() if now is None else now
    with connect(path) as db:
        db.executemany(
            "INSERT OR REPLACE INTO checks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (task_id, revision, f.kind, f.model, int(f.flagged), f.detail, log, now)
                for task_id, revision, f in found
            ],
        )


def flags_of(path: Path, task_id: str, revision: int) -> list[Flag]:
    rows = store.rows(
        path,
        "SELECT kind, model, flagged, detail FROM checks WHERE task_id = ? AND revision = ? "
        "ORDER BY kind, model",
        (task_id, revision),
    )
    return [Flag(kind, model, bool(flagged), detail) for kind, model, flagged, detail in rows]
