"""The build's SQLite file: its schema (tables added since task version 2-F made when an
older build is first opened), its connections and settings, the people with their roles and
private tokens, the canary, and the pool's items with the task that took each."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hss_inspect.construction.canary import SETTING as CANARY
from hss_inspect.construction.canary import new_canary
from hss_inspect.construction.pool import PoolItem
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
# Versions of the split (`versions`): admitted tasks reopened for an erratum (the revision
# reopened, and the note its author is shown), tasks retired, and each export as a version.
VERSIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS reopenings (
    task_id TEXT NOT NULL REFERENCES tasks(task_id), revision INTEGER NOT NULL,
    note TEXT NOT NULL, reopened_at REAL NOT NULL, PRIMARY KEY (task_id, revision)
);
CREATE TABLE IF NOT EXISTS retirements (
    task_id TEXT PRIMARY KEY REFERENCES tasks(task_id),
    reason TEXT NOT NULL CHECK (reason IN ('erratum', 'exposure', 'other')),
    note TEXT NOT NULL, retired_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS exports (
    version TEXT PRIMARY KEY, exported_at REAL NOT NULL, folder TEXT NOT NULL,
    prints TEXT NOT NULL, funnel TEXT NOT NULL
);
"""
# Near-duplicates as groups (`duplicates`, `groups`): each member of a group of more than one
# (a pool item, or a task of the reference release) and the group's number (1 the largest).
GROUPS_SCHEMA = """
CREATE TABLE IF NOT EXISTS duplicate_groups (
    against TEXT NOT NULL, member TEXT NOT NULL, grp INTEGER NOT NULL, path TEXT NOT NULL,
    PRIMARY KEY (against, member)
);
CREATE INDEX IF NOT EXISTS duplicate_groups_by_group ON duplicate_groups (grp);
"""
ADDED_SCHEMA = (
    DUPLICATES_SCHEMA + BLIND_SCHEMA + EDIT_MARKS_SCHEMA + VERSIONS_SCHEMA + GROUPS_SCHEMA
)
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
