"""People's answers to HSS tasks, as the study exports them and as `hss_human` grades them:
one JSON object a line (`task_id`, `annotator`, `answer`, `confidence`, `seconds`, `view`,
`submitted_at`), from a study's SQLite file or from any annotation platform."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from hss_inspect.core.errors import InputError
from hss_inspect.core.user_files import read_text
from hss_inspect.web.answers import CONFIDENCES, HumanAnswer
from hss_inspect.web.store import is_sqlite

VIEWS = ("media", "frames")
ANSWERS_GIVEN = "a study (.sqlite) or a JSONL file of answers, one a line"


def is_study(path: Path) -> bool:
    """Whether `path` is a study's SQLite file (rather than a JSONL file of answers)."""
    return is_sqlite(path)


def jsonl_answers(path: Path) -> list[HumanAnswer]:
    """The answers of a JSONL file, one object a line."""
    answers: list[HumanAnswer] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(
        read_text(path, f"-T answers={path}", ANSWERS_GIVEN).splitlines(), 1
    ):
        if not line.strip():
            continue
        answer = jsonl_answer(line, path, number)
        first = seen.setdefault((answer.task_id, answer.annotator), number)
        if first != number:
            raise InputError(
                f"-T answers={path}, line {number}: {answer.annotator} answered "
                f"{answer.task_id} on line {first} too; keep one answer a person and task"
            )
        answers.append(answer)
    if not answers:
        raise InputError(f"-T answers={path}: no answers in it; give {ANSWERS_GIVEN}")
    return answers


def jsonl_answer(line: str, path: Path, number: int) -> HumanAnswer:
    where = f"-T answers={path}, line {number}"
    try:
        found = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}, column {exc.colno}: not JSON ({exc.msg})") from None
    if not isinstance(found, dict) or not {"task_id", "annotator", "answer"} <= found.keys():
        raise InputError(f"{where}: give at least task_id, annotator and answer")
    confidence = found.get("confidence")
    if confidence is not None and confidence not in CONFIDENCES:
        raise InputError(
            f"{where}: confidence {confidence!r}: use sure or unsure (or leave it out)"
        )
    seconds = found.get("seconds")
    return HumanAnswer(
        task_id=str(found["task_id"]),
        annotator=str(found["annotator"]),
        answer=str(found["answer"] or ""),
        confidence=confidence,
        seconds=None if seconds is None else float(seconds),
        view=str(found.get("view") or "media"),
        submitted_at=found.get("submitted_at"),
    )


def write_jsonl(answers: Iterable[HumanAnswer], out: Path) -> int:
    """Write the answers one a line; how many."""
    lines = [json.dumps(a.as_dict(), ensure_ascii=False) + "\n" for a in answers]
    out.write_text("".join(lines), encoding="utf-8")
    return len(lines)
