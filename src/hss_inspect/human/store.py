"""A human study in one SQLite file: its settings, the tasks as annotators see them (the
question and the media's place, never the reference answer or the rubric), the
annotators with their private tokens, who answers what in which order, and the answers.

Every write is one transaction, committed (WAL, synchronous FULL) before the server
answers, so a server killed at any moment keeps every answer it acknowledged; an answer
is keyed by annotator and task, so a second submit of the same task stores nothing.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hss_inspect.core.errors import InputError
from hss_inspect.human.answers import ANSWERS_GIVEN, is_study, jsonl_answers
from hss_inspect.web import store
from hss_inspect.web.answers import HumanAnswer
from hss_inspect.web.tokens import new_token

SCHEMA = """
CREATE TABLE study (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tasks (
    task_id TEXT PRIMARY KEY, media_type TEXT NOT NULL, domain TEXT NOT NULL,
    subdomain TEXT NOT NULL, media_path TEXT NOT NULL, prompt TEXT NOT NULL
);
CREATE TABLE annotators (name TEXT PRIMARY KEY, token TEXT UNIQUE NOT NULL);
CREATE TABLE assignments (
    annotator TEXT NOT NULL REFERENCES annotators(name),
    task_id TEXT NOT NULL REFERENCES tasks(task_id),
    position INTEGER NOT NULL, shown_at REAL,
    PRIMARY KEY (annotator, task_id)
);
CREATE TABLE answers (
    annotator TEXT NOT NULL, task_id TEXT NOT NULL, answer TEXT NOT NULL,
    confidence TEXT NOT NULL, seconds REAL, view TEXT NOT NULL, submitted_at TEXT NOT NULL,
    PRIMARY KEY (annotator, task_id),
    FOREIGN KEY (annotator, task_id) REFERENCES assignments(annotator, task_id)
);
"""
STUDY_TABLES = ("study", "tasks", "annotators", "assignments", "answers")
STUDY = store.StoreKind("study", SCHEMA, STUDY_TABLES, "hss-inspect human new")
# A connection in one transaction; the file checked to be a study first (an InputError
# saying what it is and what to do); the study's settings.
connect, check_study, settings_of = STUDY.connect, STUDY.check, STUDY.settings


@dataclass(frozen=True)
class StudyTask:
    """A task as the study shows it."""

    task_id: str
    media_type: str
    domain: str
    subdomain: str
    media_path: str
    prompt: str


@dataclass(frozen=True)
class Progress:
    annotator: str
    answered: int
    assigned: int
    median_seconds: float | None


def create_study(
    path: Path,
    settings: Mapping[str, Any],
    tasks: Sequence[StudyTask],
    given: Mapping[str, Sequence[str]],
) -> dict[str, str]:
    """Write a new study; each annotator's token."""
    STUDY.create(path, settings)
    tokens = {name: new_token() for name in given}
    with connect(path) as db:
        db.executemany(
            "INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?)",
            [
                (t.task_id, t.media_type, t.domain, t.subdomain, t.media_path, t.prompt)
                for t in tasks
            ],
        )
        db.executemany("INSERT INTO annotators VALUES (?, ?)", list(tokens.items()))
        db.executemany(
            "INSERT INTO assignments VALUES (?, ?, ?, NULL)",
            [(name, task, n) for name, ids in given.items() for n, task in enumerate(ids)],
        )
    return tokens


def tokens_of(path: Path) -> dict[str, str]:
    with connect(path) as db:
        return dict(db.execute("SELECT name, token FROM annotators ORDER BY name"))


def next_task(path: Path, annotator: str) -> tuple[StudyTask | None, int, int]:
    """The annotator's first unanswered task (marked shown now, if it was not yet), and how
    many of their tasks are answered and assigned."""
    with connect(path) as db:
        assigned, answered = db.execute(
            "SELECT COUNT(*), COUNT(a.task_id) FROM assignments s LEFT JOIN answers a "
            "USING (annotator, task_id) WHERE s.annotator = ?",
            (annotator,),
        ).fetchone()
        row = db.execute(
            "SELECT t.* FROM assignments s JOIN tasks t USING (task_id) WHERE s.annotator = ? "
            "AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.annotator = s.annotator "
            "AND a.task_id = s.task_id) ORDER BY s.position LIMIT 1",
            (annotator,),
        ).fetchone()
        if row is None:
            return None, answered, assigned
        db.execute(
            "UPDATE assignments SET shown_at = ? WHERE annotator = ? AND task_id = ? "
            "AND shown_at IS NULL",
            (time.time(), annotator, row[0]),
        )
        return StudyTask(*row), answered, assigned


def assigned_tasks(path: Path) -> dict[tuple[str, str], StudyTask]:
    """Every (annotator, task id) assigned, with its task: fixed once the study is made."""
    with connect(path) as db:
        rows = db.execute(
            "SELECT s.annotator, t.* FROM assignments s JOIN tasks t USING (task_id)"
        ).fetchall()
    return {(row[0], row[1]): StudyTask(*row[1:]) for row in rows}


def submit(
    path: Path, annotator: str, task_id: str, answer: str, confidence: str, view: str
) -> bool:
    """Store the answer, committed before returning; False when there is nothing to store
    (not the annotator's task, or answered already: the first answer is final)."""
    with connect(path) as db:
        shown = db.execute(
            "SELECT shown_at FROM assignments WHERE annotator = ? AND task_id = ?",
            (annotator, task_id),
        ).fetchone()
        if shown is None:
            return False
        now = time.time()
        seconds = None if shown[0] is None else round(now - shown[0], 3)
        stored = db.execute(
            "INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?)",
            (annotator, task_id, answer, confidence, seconds, view, _iso(now)),
        )
        return stored.rowcount == 1


def read_answers(path: Path) -> list[HumanAnswer]:
    """The answers of a study's SQLite file or of a JSONL file (another platform's)."""
    if not path.is_file():
        raise InputError(f"-T answers={path}: no such file; give {ANSWERS_GIVEN}")
    if not is_study(path):
        return jsonl_answers(path)
    try:
        return answers_of(path)
    except InputError as exc:
        raise InputError(f"-T answers={exc}") from None


def answers_of(path: Path) -> list[HumanAnswer]:
    query = (
        "SELECT task_id, annotator, answer, confidence, seconds, view, submitted_at "
        "FROM answers ORDER BY task_id, annotator"
    )
    return [HumanAnswer(*row) for row in _rows(path, query)]


def progress_of(path: Path) -> list[Progress]:
    """Answered and assigned tasks per annotator, with their median seconds per task."""
    counts = _rows(
        path,
        "SELECT s.annotator, COUNT(a.task_id), COUNT(*) FROM assignments s LEFT JOIN "
        "answers a USING (annotator, task_id) GROUP BY s.annotator ORDER BY s.annotator",
    )
    seconds: dict[str, list[float]] = {}
    for name, value in _rows(path, "SELECT annotator, seconds FROM answers"):
        if value is not None:
            seconds.setdefault(name, []).append(float(value))
    return [
        Progress(n, done, total, statistics.median(seconds[n]) if seconds.get(n) else None)
        for n, done, total in counts
    ]


def _rows(path: Path, query: str) -> list[Any]:
    check_study(path)
    try:
        return store.rows(path, query)
    except sqlite3.OperationalError:  # locked, or out of disk: not the file's fault
        raise
    except sqlite3.DatabaseError as exc:  # "database disk image is malformed"
        raise store.damaged(path, exc) from None


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=timezone.utc).isoformat(timespec="seconds")
