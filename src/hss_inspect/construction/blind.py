"""Reviewers' blind answers in the build's file (a build made with `--blind-answers`): each
review round opens with the media and the question alone, and the reviewer's own answer and
confidence are stored, once, before the reference and the rubric are shown. `build check`
grades them as `hss_human` grades a study's answers (`human_answers` is what it reads), and
their grades are stored beside them for the status, the funnel and the release's card.

Only the answers to a task's latest submitted revision count: an Edit's new revision is a
new question for the rounds that follow.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hss_inspect.construction import store
from hss_inspect.construction.consensus import (
    TASK_HEADER,
    BlindMeasure,
    Grade,
    TaskAnswers,
    card_lines,
    consensus_lines,
    human_baseline,
    overall_line,
    task_rows,
)
from hss_inspect.construction.store import TaskView
from hss_inspect.core.errors import InputError
from hss_inspect.core.markdown import aligned
from hss_inspect.web.answers import HumanAnswer
from hss_inspect.web.store import is_sqlite, table_names

if TYPE_CHECKING:  # report.records loads Inspect's log types (1.3 s); status needs none of it
    from hss_inspect.report.records import AttemptRecord

# The build setting `build new --blind-answers` stores.
SETTING = "blind_answers"
# The latest submitted revision of the task of the row `b` of blind_answers.
LATEST = (
    "(SELECT MAX(v.revision) FROM revisions v WHERE v.task_id = b.task_id "
    "AND v.submitted_at IS NOT NULL)"
)
GRADE_JOIN = (
    "LEFT JOIN blind_grades g ON g.task_id = b.task_id AND g.revision = b.revision "
    "AND g.round = b.round"
)


def is_build(path: Path) -> bool:
    """Whether `path` is a build's SQLite file (not a study's, not a JSONL file)."""
    return path.is_file() and is_sqlite(path) and {"build", "reviews"} <= table_names(path)


def rows_of(path: Path, query: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
    with store.connect(path) as db:
        return db.execute(query, parameters).fetchall()


def latest_answers(path: Path, columns: str, rest: str) -> list[Any]:
    """`columns` of the blind answers (`b`) to each task's latest submitted revision, with
    their task (`t`) and grade (`g`, when graded); `rest` narrows, groups and orders."""
    return rows_of(
        path,
        f"SELECT {columns} FROM blind_answers b JOIN tasks t ON t.task_id = b.task_id "
        f"{GRADE_JOIN} WHERE b.revision = {LATEST} {rest}",
    )


def asks_blind_answers(path: Path) -> bool:
    return bool(store.settings_of(path).get(SETTING, False))


# ---- the answer, once --------------------------------------------------------------------


def answer_of(path: Path, slot: tuple[str, int, int], reviewer: str) -> tuple[str, str] | None:
    """The answer and confidence the reviewer stored for one round (None: not answered yet,
    or not their round)."""
    found = rows_of(
        path,
        "SELECT answer, confidence FROM blind_answers WHERE task_id = ? AND revision = ? "
        "AND round = ? AND reviewer = ?",
        (*slot, reviewer),
    )
    return (found[0][0], found[0][1]) if found else None


def store_answer(
    path: Path,
    reviewer: str,
    slot: tuple[str, int, int],
    answer: str,
    confidence: str,
    now: float | None = None,
) -> bool:
    """Store the reviewer's answer to a round dealt to them and not yet decided; False when
    nothing is stored (an answer is there already: the first one stays)."""
    now = time.time() if now is None else now
    with store.connect(path) as db:
        dealt = db.execute(
            "SELECT shown_at FROM reviews WHERE task_id = ? AND revision = ? AND round = ? "
            "AND reviewer = ? AND verdict IS NULL",
            (*slot, reviewer),
        ).fetchone()
        if dealt is None:
            return False
        seconds = None if dealt[0] is None else round(now - dealt[0], 3)
        stored = db.execute(
            "INSERT OR IGNORE INTO blind_answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*slot, reviewer, answer, confidence, seconds, now),
        )
        return stored.rowcount == 1


# ---- grading: what hss_human reads, and the grades stored back -----------------------------


def human_answers(path: Path, tasks: Collection[str]) -> list[HumanAnswer]:
    """The blind answers to the latest submitted revision of each of `tasks` (those of the
    dataset they are graded on), as `hss_human` grades people's answers (the reviewer as
    the annotator)."""
    view = str(store.settings_of(path)["view"])
    columns = "b.task_id, b.reviewer, b.answer, b.confidence, b.seconds, b.submitted_at"
    found = latest_answers(path, columns, "ORDER BY b.task_id, b.round")
    rows = [row for row in found if row[0] in tasks]
    if not rows:
        raise InputError(
            f"-T answers={path}: the build holds no blind answer to the latest revision of "
            "a task of the dataset (a build made with `hss-inspect build new --blind-answers` "
            "stores them in review; give -T dataset= its export)"
        )
    return [
        HumanAnswer(task_id, reviewer, answer, confidence, seconds, view, iso(submitted))
        for task_id, reviewer, answer, confidence, seconds, submitted in rows
    ]


def iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=timezone.utc).isoformat(timespec="seconds")


def to_grade(path: Path, again: bool = False) -> list[TaskView]:
    """The tasks with a blind answer to their latest submitted revision that is not graded
    (any, with `again`), each at that revision."""
    with store.connect(path) as db:
        rows = db.execute(
            "SELECT b.task_id, b.revision, COUNT(*), COUNT(g.passed) FROM blind_answers b "
            f"{GRADE_JOIN} WHERE b.revision = {LATEST} GROUP BY b.task_id ORDER BY b.task_id"
        ).fetchall()
        return [
            revision_view(db, task_id, revision)
            for task_id, revision, answers, graded in rows
            if again or graded < answers
        ]


def revision_view(db: sqlite3.Connection, task_id: str, revision: int) -> TaskView:
    """The task with the text of one of its revisions."""
    view = store.task_view(db, task_id)
    assert view is not None  # a blind answer's task is never deleted (it was submitted)
    subdomain, prompt, reference, criteria = db.execute(
        "SELECT subdomain, prompt, reference, criteria FROM revisions WHERE task_id = ? "
        "AND revision = ?",
        (task_id, revision),
    ).fetchone()
    draft = replace(
        view.draft, subdomain=subdomain, prompt=prompt, reference=reference,
        criteria=store.criteria_of(criteria),
    )  # fmt: skip
    return replace(view, revision=revision, draft=draft, submitted=True)


def store_grades(
    path: Path, records: Sequence[AttemptRecord], graded: Sequence[TaskView], log: str
) -> tuple[int, int]:
    """The judge's grade of each answer (a record of the `hss_human` log: its task and the
    reviewer as its annotator), on the revision it was written for; how many answers were
    graded, and how many met the rubric."""
    revisions = {view.task_id: view.revision for view in graded}
    now = time.time()
    counts = [0, 0]
    with store.connect(path) as db:
        for record in records:
            if record.task_id not in revisions or record.pass_ is None:
                continue
            found = db.execute(
                "SELECT round FROM blind_answers WHERE task_id = ? AND revision = ? "
                "AND reviewer = ?",
                (record.task_id, revisions[record.task_id], record.annotator),
            ).fetchone()
            if found is None:
                continue
            db.execute(
                "INSERT OR REPLACE INTO blind_grades VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (record.task_id, revisions[record.task_id], found[0], int(record.pass_ == 1),
                 record.rubric, record.judge, log, now),
            )  # fmt: skip
            counts[0] += 1
            counts[1] += record.pass_ == 1
    return counts[0], counts[1]


# ---- what the status, the funnel and the card read -----------------------------------------


def task_answers(path: Path) -> list[TaskAnswers]:
    """Per task with a blind answer to its latest submitted revision: answers, graded, met."""
    columns = "b.task_id, t.state, COUNT(*), COUNT(g.passed), COALESCE(SUM(g.passed), 0)"
    rows = latest_answers(path, columns, "GROUP BY b.task_id ORDER BY b.task_id")
    return [TaskAnswers(*row) for row in rows]


def admitted_grades(path: Path) -> list[Grade]:
    """Every graded blind answer to an admitted task's admitted revision."""
    rest = "AND t.state = 'admitted' AND g.passed IS NOT NULL ORDER BY b.task_id, b.round"
    rows = latest_answers(path, "b.task_id, g.passed, g.rubric, g.judge", rest)
    return [
        Grade(task_id, bool(passed), float(rubric or 0.0), judge)
        for task_id, passed, rubric, judge in rows
    ]


def answers_if_asked(path: Path) -> list[TaskAnswers] | None:
    """Each task's blind answers, in a build that asks for them (None: it does not)."""
    return task_answers(path) if asks_blind_answers(path) else None


def status_lines(path: Path) -> list[str]:
    """What `build status` adds in a build that asks for blind answers: the overall count,
    a row a task, the admitted tasks without measured consensus."""
    tasks = answers_if_asked(path)
    if tasks is None:
        return []
    rows = aligned([TASK_HEADER, *task_rows(tasks)]) if tasks else []
    return [overall_line(tasks), *rows, *consensus_lines(tasks)]


def measured(path: Path) -> BlindMeasure | None:
    """Each task's blind answers and the split's human baseline, in a build that asks for
    blind answers (None: it does not); what the funnel and the release's card report."""
    tasks = answers_if_asked(path)
    if tasks is None:
        return None
    return BlindMeasure(tuple(tasks), human_baseline(admitted_grades(path)))


def baseline_lines(path: Path) -> list[str]:
    """The split's human baseline and the admitted tasks without measured consensus, as
    the release's card and `build export` say them ([]: the build asks no blind answers)."""
    found = measured(path)
    return [] if found is None else card_lines(found)
