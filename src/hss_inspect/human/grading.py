"""People's answers as the samples of `hss_human`: one sample per answer (the task's id and
the annotator's name), the task's row as its metadata, and what the answer records
(annotator, confidence, seconds, view) beside it, for the same judge to grade."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from inspect_ai.dataset import MemoryDataset, Sample

from hss_inspect.core.errors import InputError
from hss_inspect.core.names import unknown_text
from hss_inspect.core.settings import HUMAN_ANSWER, HUMAN_RECORD
from hss_inspect.data.dataset import row_to_sample
from hss_inspect.data.release import Release
from hss_inspect.data.rows import TaskRow
from hss_inspect.web.answers import HumanAnswer

logger = logging.getLogger(__name__)


def human_dataset(
    release: Release, rows: Sequence[TaskRow], answers: Sequence[HumanAnswer], source: Path
) -> tuple[MemoryDataset, list[str]]:
    """The samples of the answers to the selected tasks, and the tasks nobody answered
    (left out of the run, and said so)."""
    known = {row.task_id for row in release.read_rows()}
    for answer in answers:
        if answer.task_id not in known:
            listed = f"{release.description} has {len(known)}"
            what = f"a task of the dataset (an answer in {source})"
            raise InputError(unknown_text(answer.task_id, what, known, listed))
    answered = {answer.task_id for answer in answers}
    by_task = {row.task_id: row for row in rows if row.task_id in answered}
    samples = [human_sample(by_task[a.task_id], a) for a in answers if a.task_id in by_task]
    unanswered = [row.task_id for row in rows if row.task_id not in by_task]
    if unanswered:
        logger.warning(
            "%d selected task(s) have no human answer and are left out: %s",
            len(unanswered),
            ", ".join(unanswered[:20]) + (", ..." if len(unanswered) > 20 else ""),
        )
    if not samples:
        raise InputError(f"-T answers={source}: no answer to any selected task; nothing to grade")
    return MemoryDataset(samples, name="HSS human study", location=str(source)), unanswered


def human_sample(row: TaskRow, answer: HumanAnswer) -> Sample:
    """The answer as a sample: its id the task's and the annotator's, its record beside the
    task's metadata."""
    sample = row_to_sample(row)
    record = {
        "annotator": answer.annotator,
        "confidence": answer.confidence,
        "seconds": answer.seconds,
        "view": answer.view,
        "submitted_at": answer.submitted_at,
    }
    metadata = {**(sample.metadata or {}), HUMAN_RECORD: record, HUMAN_ANSWER: answer.answer}
    return sample.model_copy(
        update={"id": f"{row.task_id}@{answer.annotator}", "metadata": metadata}
    )
