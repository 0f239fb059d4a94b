"""A build in one SQLite file: its settings, the pool's items, the people with their roles
and private tokens, the tasks with every revision, each review round's reviewer and
verdict, and the checks' flags.

A task is a `draft` until its author submits it, then in `review` at round 1; a Pass deals
the next round (after the last, the task is `admitted`), an Edit returns it to its author
(`returned`; the revision they submit starts again at round 1, the earlier revisions and
verdicts kept), a Drop ends it (`dropped`). Every write is one transaction committed before
the server answers (`web.store`); a verdict is keyed by its task, revision and round, and a
submit by the revision's own state, so a second send of either stores nothing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from hss_inspect.construction.authoring import Draft
from hss_inspect.construction.canary import SETTING as CANARY
from hss_inspect.construction.canary import new_canary
from hss_inspect.construction.deal import pick_reviewer
from hss_inspect.construction.pool import PoolItem
from hss_inspect.core.errors import InputError
from hss_inspect.data.rows import Criterion, TaskRow, criterion_records
from hss_inspect.web import store
from hss_inspect.web.tokens import new_token

SCHEMA = """
CREATE TABLE build (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE people (
    name TEXT NOT NULL, role TEXT NOT NULL CHECK (role IN ('author', 'reviewer')),
    token TEXT UNIQUE NOT NULL, PRIMARY KEY (name, role)
);
CREATE TABLE items (
    item_id TEXT PRIMARY KEY, path TEXT UNIQUE NOT NULL, media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL
);
CREATE TABLE tasks (
    task_id TEXT PRIMARY KEY, item_id TEXT UNIQUE NOT NULL REFERENCES items(item_id),
    author TEXT NOT NULL, state TEXT NOT NULL
        CHECK (state IN ('draft', 'review', 'returned', 'admitted', 'dropped')),
    revision INTEGER NOT NULL, round INTEGER, origin TEXT NOT NULL, created_at REAL NOT NULL
);
CREATE TABLE revisions (
    task_id TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    revision INTEGER NOT NULL, subdomain TEXT NOT NULL, prompt TEXT NOT NULL,
    reference TEXT NOT NULL, criteria TEXT NOT NULL,
    started_at REAL NOT NULL, saved_at REAL NOT NULL, submitted_at REAL,
    PRIMARY KEY (task_id, revision)
);
CREATE TABLE reviews (
    task_id TEXT NOT NULL, revision INTEGER NOT NULL, round INTEGER NOT NULL,
    reviewer TEXT NOT NULL, dealt_at REAL NOT NULL, shown_at REAL,
    verdict TEXT CHECK (verdict IN ('pass', 'edit', 'drop')), reason TEXT, feedback TEXT,
    decided_at REAL,
    PRIMARY KEY (task_id, revision, round),
    FOREIGN KEY (task_id, revision) REFERENCES revisions(task_id, revision)
);
CREATE TABLE checks (
    task_id TEXT NOT NULL, revision INTEGER NOT NULL, kind TEXT NOT NULL, model TEXT NOT NULL,
    flagged INTEGER NOT NULL, detail TEXT NOT NULL, log TEXT NOT NULL, checked_at REAL NOT NULL,
    PRIMARY KEY (task_id, revision, kind, model),
    FOREIGN KEY (task_id, revision) REFERENCES revisions(task_id, revision)
);
"""
BUILD_TABLES = ("build", "people", "items", "tasks", "revisions", "reviews", "checks")
# Tables added since task version 2-F, each `CREATE TABLE IF NOT EXISTS`: made in a new
# build and, empty, in a build an earlier version wrote, the first time it is opened.
# Near-duplicates found when the build was made (`duplicates`): each pool item that nearly
# repeats another of the pool or a task of the reference release, and that release's texts.
DUPLICATES_SCHEMA = """
CREATE TABLE IF NOT EXISTS duplicates (
    item_id TEXT NOT NULL, against TEXT NOT NULL, other TEXT NOT NULL,
    other_path TEXT NOT NULL, distance REAL NOT NULL, how TEXT NOT NULL,
    PRIMARY KEY (item_id, against, other)
);
CREATE TABLE IF NOT EXISTS reference_texts (
    task_id TEXT NOT NULL, field TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (task_id, field)
);
"""
# Reviewers' blind answers (`blind`), stored once before the reveal, and their grades.
BLIND_SCHEMA = """
CREATE TABLE IF NOT EXISTS blind_answers (
    task_id TEXT NOT NULL, revision INTEGER NOT NULL, round INTEGER NOT NULL,
    reviewer TEXT NOT NULL, answer TEXT NOT NULL, confidence TEXT NOT NULL, seconds REAL,
    submitted_at REAL NOT NULL,
    PRIMARY KEY (task_id, revision, round),
    FOREIGN KEY (task_id, revision, round) REFERENCES reviews(task_id, revision, round)
);
CREATE TABLE IF NOT EXISTS blind_grades (
    task_id TEXT NOT NULL, revision INTEGER NOT NULL, round INTEGER NOT NULL,
    passed INTEGER, rubric REAL, judge TEXT NOT NULL, log TEXT NOT NULL, graded_at REAL NOT NULL,
    PRIMARY KEY (task_id, revision, round),
    FOREIGN KEY (task_id, revision, round) REFERENCES blind_answers(task_id, revision, round)
);
"""
# edit_marks: the criteria an Edit is about, as its reviewer marked them (none: the whole task).
EDIT_MARKS_SCHEMA = """
CREATE TABLE IF NOT EXISTS edit_marks (
    task_id TEXT NOT NULL, revision INTEGER NOT NULL, round INTEGER NOT NULL,
    criterion TEXT NOT NULL, PRIMARY KEY (task_id, revision, round, criterion),
    FOREIGN KEY (task_id, revision, round) REFERENCES reviews(task_id, revision, round)
);
"""
ADDED_SCHEMA = DUPLICATES_SCHEMA + BLIND_SCHEMA + EDIT_MARKS_SCHEMA
# The indexes of the lookups a page makes at every request (a reviewer's rounds, an
# author's tasks, the Edits' feedback), made in a build of any version when first opened.
INDEXES = """
CREATE INDEX IF NOT EXISTS reviews_by_reviewer ON reviews (reviewer, verdict);
CREATE INDEX IF NOT EXISTS tasks_by_author ON tasks (author);
CREATE INDEX IF NOT EXISTS edit_reviews ON reviews (task_id) WHERE verdict = 'edit';
"""
BUILD = store.StoreKind(
    "build", SCHEMA, BUILD_TABLES, "hss-inspect build new", ADDED_SCHEMA + INDEXES
)
# A connection in one transaction; the file checked to be a build first (an InputError
# saying what it is and what to do); the build's settings.
connect, check_build, settings_of = BUILD.connect, BUILD.check, BUILD.settings
# A connection in one read-only transaction: it waits for no writer.
reading = BUILD.reading
ROLES = ("author", "reviewer")
# Where an imported task came from, beside tasks authored on the build's pages.
AUTHORED, IMPORTED = "authored", "imported"


# ---- the file --------------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    name: str
    role: str


def create_build(
    path: Path,
    settings: Mapping[str, Any],
    items: Sequence[PoolItem],
    authors: Sequence[str],
    reviewers: Sequence[str],
) -> dict[Person, str]:
    """Write a new build; each person's token for each of their roles."""
    BUILD.create(path, {**settings, "next_task": 1})
    tokens = {Person(n, "author"): new_token() for n in authors}
    tokens.update({Person(n, "reviewer"): new_token() for n in reviewers})
    with connect(path) as db:
        db.executemany(
            "INSERT INTO items VALUES (?, ?, ?, ?)",
            [(i.item_id, i.path, i.media_type, i.bytes) for i in items],
        )
        db.executemany(
            "INSERT INTO people VALUES (?, ?, ?)",
            [(p.name, p.role, token) for p, token in tokens.items()],
        )
    return tokens


def canary_of(path: Path) -> str:
    """The build's canary GUID: set at `build new`; a build made before builds had one
    gains one here, kept for every later export."""
    with connect(path) as db:
        row = db.execute("SELECT value FROM build WHERE key = ?", (CANARY,)).fetchone()
        if row is not None:
            return str(json.loads(row[0]))
        guid = new_canary()
        db.execute("INSERT INTO build VALUES (?, ?)", (CANARY, json.dumps(guid)))
        return guid


def tokens_of(path: Path) -> dict[Person, str]:
    with reading(path) as db:
        rows = db.execute("SELECT name, role, token FROM people ORDER BY role, name").fetchall()
    return {Person(name, role): token for name, role, token in rows}


def names_of(path: Path, role: str) -> list[str]:
    return [p.name for p in tokens_of(path) if p.role == role]


# ---- the pool --------------------------------------------------------------------------


def pool_items(path: Path) -> list[tuple[PoolItem, str | None, str | None]]:
    """Every item, with the task that took it and that task's author (None: free)."""
    with reading(path) as db:
        rows = db.execute(f"{POOL_QUERY} ORDER BY i.rowid").fetchall()
    return [(PoolItem(*row[:4]), row[4], row[5]) for row in rows]


POOL_QUERY = (
    "SELECT i.item_id, i.path, i.media_type, i.bytes, t.task_id, t.author "
    "FROM items i LEFT JOIN tasks t USING (item_id)"
)
# What an author's home lists of the pool: the free items, or all of them, free first.
POOL_SHOWN = ("free", "all")


@dataclass(frozen=True)
class PoolPage:
    """One page of the pool as an author's home lists it, and the pool's counts."""

    rows: list[tuple[PoolItem, str | None, str | None]]
    first: int  # the place of the page's first row among those listed (0: the first)
    listed: int  # the items the choice lists, on every page
    items: int
    free: int


def pool_page(path: Path, shown: str, first: int, size: int) -> PoolPage:
    """`size` items from the `first`, of the free items (`shown` "free") or of all the
    pool's, free first ("all"), each in the pool's order."""
    where = "WHERE t.task_id IS NULL " if shown == "free" else ""
    # The free items alone are read in the pool's order and the read stops at the page's
    # end; all of them, free first, are sorted whole.
    order = "i.rowid" if shown == "free" else "t.task_id IS NOT NULL, i.rowid"
    with reading(path) as db:
        (items,) = db.execute("SELECT COUNT(*) FROM items").fetchone()
        (taken,) = db.execute("SELECT COUNT(*) FROM tasks").fetchone()
        rows = db.execute(
            f"{POOL_QUERY} {where}ORDER BY {order} LIMIT ? OFFSET ?",
            (size, first),
        ).fetchall()
    listed = items - taken if shown == "free" else items
    found = [(PoolItem(*row[:4]), row[4], row[5]) for row in rows]
    return PoolPage(found, first, listed, items, items - taken)


def item_owner(path: Path, item_id: str) -> tuple[str | None, str | None]:
    """The task that took the item and its author ((None, None): free)."""
    found = store.rows(path, "SELECT task_id, author FROM tasks WHERE item_id = ?", (item_id,))
    return (found[0][0], found[0][1]) if found else (None, None)


def items_by_id(path: Path) -> dict[str, PoolItem]:
    return {item.item_id: item for item, _, _ in pool_items(path)}


# ---- authoring -------------------------------------------------------------------------


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


def save_draft(
    path: Path,
    author: str,
    item_id: str,
    task_id: str | None,
    draft: Draft,
    opened_at: float,
    now: float | None = None,
) -> str:
    """Store the author's text as the task's latest unsubmitted revision (a new task when
    `task_id` is None, a new revision when the latest was submitted); its id."""
    now = time.time() if now is None else now
    with connect(path) as db:
        if task_id is None:
            task_id = new_task(db, author, item_id, AUTHORED, now)
        view = task_view(db, task_id) if task_id else None
        if view is None or view.author != author or view.item.item_id != item_id:
            raise InputError(f"task {task_id}: not a task of {author} on item {item_id}")
        if view.state not in ("draft", "returned"):
            raise InputError(
                f"task {task_id} is {view.state}: only a draft or a task "
                "returned for revision can be edited"
            )
        write_revision(db, view, draft, opened_at, now)
        return task_id


def new_task(db: sqlite3.Connection, author: str, item_id: str, origin: str, now: float) -> str:
    taken = db.execute("SELECT task_id FROM tasks WHERE item_id = ?", (item_id,)).fetchone()
    if taken is not None:
        raise InputError(f"item {item_id} is taken by task {taken[0]}: choose a free item")
    (number,) = db.execute("SELECT value FROM build WHERE key = 'next_task'").fetchone()
    (prefix,) = db.execute("SELECT value FROM build WHERE key = 'prefix'").fetchone()
    task_id = f"{json.loads(prefix)}-{int(number):04d}"
    db.execute("UPDATE build SET value = ? WHERE key = 'next_task'", (str(int(number) + 1),))
    db.execute(
        "INSERT INTO tasks VALUES (?, ?, ?, 'draft', 0, NULL, ?, ?)",
        (task_id, item_id, author, origin, now),
    )
    return task_id


def write_revision(
    db: sqlite3.Connection, view: TaskView, draft: Draft, opened_at: float, now: float
) -> None:
    values = (draft.subdomain, draft.prompt, draft.reference, criteria_json(draft.criteria))
    if view.revision > 0 and not view.submitted:
        db.execute(
            "UPDATE revisions SET subdomain = ?, prompt = ?, reference = ?, criteria = ?, "
            "saved_at = ? WHERE task_id = ? AND revision = ?",
            (*values, now, view.task_id, view.revision),
        )
        return
    revision = view.revision + 1
    # the time authoring began: when the form was opened, never later than now
    started = min(max(opened_at, now - 86_400.0), now)
    db.execute(
        "INSERT INTO revisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        (view.task_id, revision, *values, started, now),
    )
    db.execute("UPDATE tasks SET revision = ? WHERE task_id = ?", (revision, view.task_id))


def submit_task(path: Path, author: str, task_id: str, now: float | None = None) -> bool:
    """Send the latest revision to review round 1 (a reviewer dealt at once); False when
    there is nothing to send (submitted already: a second send stores nothing)."""
    now = time.time() if now is None else now
    with connect(path) as db:
        view = task_view(db, task_id)
        if view is None or view.author != author:
            raise InputError(f"task {task_id}: not a task of {author}")
        if view.submitted or view.state not in ("draft", "returned"):
            return False
        db.execute(
            "UPDATE revisions SET submitted_at = ? WHERE task_id = ? AND revision = ?",
            (now, task_id, view.revision),
        )
        enter_round(db, task_id, view.revision, 1, now)
        return True


def release_item(path: Path, author: str, task_id: str) -> bool:
    """Give up a draft never submitted: the task goes and its item is free again."""
    with connect(path) as db:
        view = task_view(db, task_id)
        if view is None or view.author != author or view.state != "draft" or view.submitted:
            return False
        db.execute("DELETE FROM revisions WHERE task_id = ?", (task_id,))
        db.execute("DELETE FROM tasks WHERE task_id = ?", (task_id,))
        return True


def import_rows(
    path: Path, rows: Sequence[TaskRow], item_ids: Sequence[str], author: str, now: float
) -> list[str]:
    """Tasks authored elsewhere, each on its pool item, submitted as authored (round 1
    dealt); their ids in the build."""
    created = []
    with connect(path) as db:
        for row, item_id in zip(rows, item_ids, strict=True):
            task_id = new_task(db, author, item_id, IMPORTED, now)
            draft = Draft(row.subdomain, row.prompt, row.golden_response, row.criteria)
            values = (draft.subdomain, draft.prompt, draft.reference)
            db.execute(
                "INSERT INTO revisions VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)",
                (task_id, *values, criteria_json(draft.criteria), now, now, now),
            )
            db.execute("UPDATE tasks SET revision = 1 WHERE task_id = ?", (task_id,))
            enter_round(db, task_id, 1, 1, now)
            created.append(task_id)
    return created


# ---- review ----------------------------------------------------------------------------


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


def awaiting_review(path: Path) -> list[TaskView]:
    """The tasks in review, at their revision under review."""
    with reading(path) as db:
        return task_views(db, "t.state = 'review'")


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
    """The admitted tasks at their admitted revision, with their items, in task order."""
    with reading(path) as db:
        views = task_views(db, "t.state = 'admitted'")
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
