"""What a task page shows, read from the logs: the task (question, reference, rubric) and,
for every run, every attempt with its answer, each scorer's verdicts with the judge's
justifications, the failure-cause label, the errors, and the record of the media sent.

Only the samples of the tasks shown are read (`logs.read_chosen_samples`); each attempt's
outcome is the report's own reading of it (`records.records_of_sample`), so a page says
what the leaderboard counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hss_inspect.data.rows import GradedTask
from hss_inspect.grading.judge import Verdict, graded_task_of
from hss_inspect.report.bill import run_names
from hss_inspect.report.log_header import LogInfo, is_rubric_score, run_label
from hss_inspect.report.logs import ScoredSample, read_chosen_samples, read_header
from hss_inspect.report.records import AttemptRecord, label_score, records_of_sample

# An attempt's outcome under one scorer, as the report counts it.
PASS, FAIL = "pass", "fail"
NO_ANSWER, REFUSED = "no answer", "refused"
GRADING_FAILURE, PROVIDER_ERROR = "grading failure", "provider error"


@dataclass(frozen=True)
class Grading:
    """One rubric scorer's grading of one attempt: the record the report counts, the
    judge's verdicts with their justifications, and the scorer's explanation."""

    record: AttemptRecord
    verdicts: tuple[Verdict, ...]
    explanation: str
    comment: str
    replies: tuple[str, ...] = ()  # the judge's replies as written (kept in the score)

    @property
    def outcome(self) -> str:
        return outcome_of(self.record)


@dataclass(frozen=True)
class Label:
    """The failure-cause labeller's label of an attempt."""

    cause: str
    family: str | None
    explanation: str


@dataclass(frozen=True)
class Attempt:
    log: str
    sample_id: str
    epoch: int
    answer: str
    gradings: tuple[Grading, ...]
    label: Label | None
    error: str | None  # the sample's error, as Inspect recorded it
    sample: ScoredSample  # as read (without messages, events or images)

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(self.sample.metadata or {})

    @property
    def key(self) -> tuple[str, str, int]:
        """The attempt among all the logs' attempts: its log, sample and epoch."""
        return self.log, self.sample_id, self.epoch

    @property
    def sent(self) -> dict[str, Any]:
        """The `sent_media` record ({} when the log holds none)."""
        record = self.metadata.get("sent_media")
        return record if isinstance(record, dict) else {}


@dataclass(frozen=True)
class RunAttempts:
    """One log's attempts at the task."""

    info: LogInfo
    name: str  # its label, numbered where runs share one (as the bill names them)
    eval_metadata: dict[str, Any]
    attempts: tuple[Attempt, ...]


@dataclass(frozen=True)
class TaskView:
    """A task as its first sample records it, and every run's attempts at it."""

    task_id: str
    task: GradedTask  # the question, the reference answer and the rubric
    runs: tuple[RunAttempts, ...]
    # runs whose question, reference or rubric differ from the ones shown
    asked_otherwise: tuple[str, ...] = ()

    @property
    def domain(self) -> str:
        return str(self.runs[0].attempts[0].metadata.get("domain", ""))

    @property
    def subdomain(self) -> str:
        return str(self.runs[0].attempts[0].metadata.get("subdomain", ""))


def outcome_of(record: AttemptRecord) -> str:
    """An attempt as the leaderboard counts it: left out (provider error, grading failure),
    a zero without an answer (refused, no answer), or passed or failed by the judge."""
    if record.model_error:
        return PROVIDER_ERROR
    if record.grading_failure:
        return GRADING_FAILURE
    if record.refusal:
        return REFUSED
    if record.no_answer:
        return NO_ANSWER
    return PASS if record.pass_ == 1 else FAIL


def task_views(
    infos: Sequence[LogInfo], records: Iterable[AttemptRecord], task_ids: Sequence[str]
) -> dict[str, TaskView]:
    """The view of each task of `task_ids` across the logs of `infos`, reading only the
    samples of those tasks (every epoch each log holds of them)."""
    wanted = set(task_ids)
    epochs: dict[str, set[tuple[str, int]]] = {}
    for record in records:
        if record.task_id in wanted:  # a sample is named by its task id (row_to_sample)
            epochs.setdefault(record.log, set()).add((record.task_id, record.epoch))
    names = run_names([(i.log, run_label(i.model, i.reasoning_effort, i.condition)) for i in infos])
    per_task: dict[str, list[RunAttempts]] = {}
    for info in infos:
        chosen = epochs.get(info.log)
        if not chosen:
            continue
        metadata = dict(read_header(info.log).eval.metadata or {})
        samples = read_chosen_samples(info.log, sorted(chosen))
        for task_id, found in _by_task(samples).items():
            attempts = tuple(_attempt(info, sample) for sample in found)
            run = RunAttempts(info, names[info.log], metadata, attempts)
            per_task.setdefault(task_id, []).append(run)
    return {
        task_id: _view(task_id, per_task[task_id]) for task_id in task_ids if task_id in per_task
    }


def _by_task(samples: Iterable[ScoredSample]) -> dict[str, list[ScoredSample]]:
    found: dict[str, list[ScoredSample]] = {}
    for sample in sorted(samples, key=lambda s: s.epoch):
        found.setdefault(task_id_of(sample), []).append(sample)
    return found


def task_id_of(sample: ScoredSample) -> str:
    return str((sample.metadata or {}).get("task_id", sample.id))


def _view(task_id: str, runs: list[RunAttempts]) -> TaskView:
    first = runs[0].attempts[0].metadata
    shown = _asked(first)
    return TaskView(
        task_id=task_id,
        task=graded_task_of(first),
        runs=tuple(runs),
        asked_otherwise=tuple(
            run.name for run in runs if any(_asked(a.metadata) != shown for a in run.attempts)
        ),
    )


def _asked(metadata: Mapping[str, Any]) -> tuple[Any, ...]:
    return (metadata.get("prompt"), metadata.get("golden_response"), metadata.get("criteria"))


def _attempt(info: LogInfo, sample: ScoredSample) -> Attempt:
    gradings = tuple(_grading(record, sample) for record in records_of_sample(info, sample))
    return Attempt(
        log=info.log,
        sample_id=str(sample.id),
        epoch=int(sample.epoch),
        answer=answer_of(sample),
        gradings=gradings,
        label=label_of(sample),
        error=error_of(sample),
        sample=sample,
    )


def error_of(sample: ScoredSample) -> str | None:
    """The sample's error as Inspect recorded it (a summary holds its message alone)."""
    error = sample.error
    if error is None:
        return None
    return error if isinstance(error, str) else error.message


def _grading(record: AttemptRecord, sample: ScoredSample) -> Grading:
    score = (sample.scores or {})[record.scorer]
    metadata = score.metadata or {}
    verdicts = tuple(
        Verdict(str(v["id"]), bool(v["met"]), str(v.get("justification") or ""))
        for v in metadata.get("verdicts") or []
        if isinstance(v, dict) and "id" in v and isinstance(v.get("met"), bool)
    )
    return Grading(
        record=record,
        verdicts=verdicts,
        explanation=str(score.explanation or ""),
        comment=str(metadata.get("overall_comment") or ""),
        replies=tuple(str(r) for r in metadata.get("judge_replies") or [] if isinstance(r, str)),
    )


def answer_of(sample: ScoredSample) -> str:
    """The answer graded (a rubric score's `answer`), else the model's last words (an
    answer never graded: empty, refused, or cut short by an error)."""
    for score in (sample.scores or {}).values():
        if is_rubric_score(score) and score.answer:
            return str(score.answer)
    output = getattr(sample, "output", None)
    return str(output.completion) if output is not None and output.completion else ""


def label_of(sample: ScoredSample) -> Label | None:
    """The failure-cause label with its family and the labeller's explanation."""
    score = label_score(sample)
    if score is None:
        return None
    metadata = score.metadata or {}
    family = metadata.get("family")
    return Label(
        str(metadata["cause"]),
        None if family is None else str(family),
        str(score.explanation or ""),
    )
