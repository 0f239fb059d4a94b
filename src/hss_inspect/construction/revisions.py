"""An author's work in the build: a draft saved as the task's latest revision (a new task on a
free item, a new revision after an Edit), submitted to round 1, given up, or imported as
authored elsewhere."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from hss_inspect.construction.authoring import Draft
from hss_inspect.construction.build_file import AUTHORED, IMPORTED, connect
from hss_inspect.construction.rounds import enter_round
from hss_inspect.construction.task_views import TaskView, criteria_json, task_view
from hss_inspect.core.errors import InputError
from hss_inspect.data.rows import TaskRow


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
