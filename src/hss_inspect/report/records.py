"""Inspect logs as plain per-attempt records (`AttemptRecord`), read through `logs`:
`read_logs` gives each current log's header (`log_header.LogInfo`) and its records.

A record is one attempt (sample x epoch) as graded by one rubric scorer. A log re-graded
with `inspect score --action append` holds several rubric scorers, each with its own
judge, so it yields one record per attempt and scorer. Everything downstream
(`hss_inspect.report.stats`, `.tables`, ...) is arithmetic over these records and never
touches Inspect.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.scorer import Score

from hss_inspect.core.settings import HUMAN_RECORD
from hss_inspect.core.values import finite_number, is_nan
from hss_inspect.report.log_header import LogInfo, is_rubric_score, log_info
from hss_inspect.report.logs import (
    DamagedLog,
    LogError,
    ScoredSample,
    current_logs,
    find_logs,
    read_header,
    read_scored_samples,
)
from hss_inspect.report.record_cache import records_kept

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CriterionVerdict:
    id: str
    met: bool


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt of one task as graded by one rubric scorer.

    `pass_` and `rubric` are None when the attempt is left out of the means: a grading
    failure (the judge's reply stayed unreadable) or a model/provider error.
    `reasoning_tokens` is None when the provider reported none (never 0 for "unknown").
    """

    log: str
    model: str
    condition: str
    reasoning_effort: str | None
    max_frames: int | None
    judge: str
    scorer: str
    task_id: str
    epoch: int
    attempt_id: str  # the same answer keeps its id in a copy of the log re-scored
    media_type: str
    domain: str
    subdomain: str
    pass_: float | None
    rubric: float | None
    no_answer: bool = False
    grading_failure: bool = False
    model_error: bool = False
    refusal: bool = False  # a policy refusal: also a no-answer zero
    verdicts: tuple[CriterionVerdict, ...] = ()
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    # The failure-cause labeller's label of this attempt (None: not labelled), and the
    # number of model calls of an agentic conversation (None: a single call).
    cause: str | None = None
    agent_steps: int | None = None
    # Frames the model received for a clip (None: not a clip sent as frames), and whether
    # they were thinned or shrunk to fit its context window (`frames_received` in metadata).
    frames_received: int | None = None
    frames_fitted: bool = False
    # A person's answer (hss_human): who wrote it, how sure they were, the seconds it took.
    annotator: str | None = None
    confidence: str | None = None
    seconds: float | None = None

    @property
    def graded(self) -> bool:
        return self.pass_ is not None

    @property
    def answer_tokens(self) -> int | None:
        """Output tokens minus reasoning tokens (Inspect counts reasoning inside output)."""
        if self.output_tokens is None:
            return None
        return self.output_tokens - (self.reasoning_tokens or 0)


def read_logs(
    paths: Sequence[str | Path], skipped: list[DamagedLog] | None = None
) -> tuple[list[LogInfo], list[AttemptRecord]]:
    """Every current log under `paths`: their headers and all their attempt records.

    A log superseded by `inspect eval-retry` (same task id, an earlier eval) is skipped,
    with a warning, so a folder holding both counts each task once. A file Inspect cannot
    read (cut short, empty, not a log) stops the reading with its DamagedLog, unless
    `skipped` is given: then it is left out and added there, and only when no log is left
    does its error stop the reading.
    """
    headers = readable_headers(find_logs(paths), skipped)
    current = current_logs(
        {p: (h.eval.task_id, h.eval.eval_id, h.eval.created) for p, h in headers.items()}
    )
    superseded = [p for p in headers if p not in current]
    if superseded:
        logger.warning(
            "left out %d log(s) superseded by a later retry of the same task: %s",
            len(superseded),
            ", ".join(superseded),
        )
    infos: list[LogInfo] = []
    records: list[AttemptRecord] = []
    for path in current:
        try:
            info, found = read_log(path)
        except DamagedLog as damaged:
            _leave_out(damaged, skipped)
            continue
        infos.append(info)
        records += found
    if not infos and skipped:
        raise _nothing_readable(skipped)
    return infos, records


def readable_headers(
    paths: Sequence[str], skipped: list[DamagedLog] | None = None
) -> dict[str, EvalLog]:
    """The header of each log Inspect can read; the others stop the reading, or, given
    `skipped`, are added there (and stop it only when none is left)."""
    headers: dict[str, EvalLog] = {}
    for path in paths:
        try:
            headers[path] = read_header(path)
        except DamagedLog as damaged:
            _leave_out(damaged, skipped)
    if not headers and skipped:
        raise _nothing_readable(skipped)
    return headers


def _leave_out(damaged: DamagedLog, skipped: list[DamagedLog] | None) -> None:
    if skipped is None:
        raise damaged
    skipped.append(damaged)


def _nothing_readable(skipped: list[DamagedLog]) -> LogError:
    """The error when no log is left: the damaged one's own, or one naming each (taken
    out of `skipped`, which is said once, here)."""
    found = skipped[0] if len(skipped) == 1 else LogError("; ".join(str(d) for d in skipped))
    skipped.clear()
    return found


def read_log(path: str) -> tuple[LogInfo, list[AttemptRecord]]:
    """One log's header and its attempt records (read through Inspect once for each
    version of a local log: `record_cache`)."""
    return records_kept(path, lambda: _read_log(path))


def _read_log(path: str) -> tuple[LogInfo, list[AttemptRecord]]:
    # the header of the file as it is now (`read_header` reads each version once): one
    # read earlier may be of a version since rewritten, and the records are kept with it
    header = read_header(path)
    samples = read_scored_samples(path)
    info = log_info(header, path, samples)
    records = [r for sample in samples for r in records_of_sample(info, sample)]
    return info, records


def records_of_sample(info: LogInfo, sample: ScoredSample) -> list[AttemptRecord]:
    meta = sample.metadata or {}
    return [
        _record(info, sample, meta, name, score)
        for name, score in (sample.scores or {}).items()
        if is_rubric_score(score)
    ]


def _record(
    info: LogInfo, sample: ScoredSample, meta: dict[str, Any], scorer: str, score: Score
) -> AttemptRecord:
    value = score.value if isinstance(score.value, dict) else {}
    score_meta = score.metadata or {}
    pass_, rubric = finite_number(value.get("pass")), finite_number(value.get("rubric"))
    grading_failure = _flag(value, score_meta, "grading_failure")
    # Only a value with a model_error key says "left out for a provider error": before it, an
    # error was scored as a zero with the message in metadata, and the log's metric counted it.
    model_error = _flag(value, {}, "model_error") or sample.error is not None
    if grading_failure or model_error:
        pass_, rubric = None, None
    if pass_ is None or rubric is None:
        pass_, rubric = None, None
        grading_failure = grading_failure or not model_error
    output_tokens, reasoning_tokens = _usage(score_meta, sample, info)
    return AttemptRecord(
        log=info.log,
        model=info.model,
        condition=info.condition,
        reasoning_effort=info.reasoning_effort,
        max_frames=info.max_frames,
        judge=info.judges.get(scorer, "unknown judge"),
        scorer=scorer,
        task_id=str(meta.get("task_id", sample.id)),
        epoch=int(sample.epoch),
        attempt_id=sample.uuid or f"{info.log}#{sample.id}#{sample.epoch}",
        media_type=str(meta.get("media_type", "")),
        domain=str(meta.get("domain", "")),
        subdomain=str(meta.get("subdomain", "")),
        pass_=pass_,
        rubric=rubric,
        no_answer=_flag(value, score_meta, "no_answer"),
        grading_failure=grading_failure,
        model_error=model_error,
        refusal=_flag(value, score_meta, "refusal"),
        verdicts=_verdicts(score_meta),
        output_tokens=output_tokens,
        reasoning_tokens=reasoning_tokens,
        cause=cause_of(sample),
        agent_steps=_int_or_none((meta.get("agent") or {}).get("steps")),
        frames_received=_int_or_none(_frames(meta).get("frames")),
        frames_fitted=bool(
            _frames(meta).get("thinned_to_fit") or _frames(meta).get("shrunk_to_fit")
        ),
        **human_fields(meta),
    )


def human_fields(meta: dict[str, Any]) -> dict[str, Any]:
    """What a person's answer records (annotator, confidence, seconds), else nothing."""
    record = meta.get(HUMAN_RECORD)
    if not isinstance(record, dict):
        return {}
    seconds = record.get("seconds")
    return {
        "annotator": str(record.get("annotator")),
        "confidence": record.get("confidence"),
        "seconds": None if seconds is None else float(seconds),
    }


def _frames(meta: dict[str, Any]) -> dict[str, Any]:
    received = meta.get("frames_received")
    return received if isinstance(received, dict) else {}


def cause_of(sample: ScoredSample) -> str | None:
    """The failure-cause label of the attempt."""
    score = label_score(sample)
    return None if score is None else str((score.metadata or {})["cause"])


def label_score(sample: ScoredSample) -> Score | None:
    """The failure-cause labeller's score of the attempt: the one carrying a taxonomy
    version and a cause (None: not labelled)."""
    for score in (sample.scores or {}).values():
        metadata = score.metadata or {}
        if "taxonomy_version" in metadata and isinstance(metadata.get("cause"), str):
            return score
    return None


def _flag(value: dict[str, Any], metadata: dict[str, Any], key: str) -> bool:
    """A 0/1 flag of the score value, or (older logs) a truthy entry of its metadata."""
    if key in value:
        flag = value[key]
        return bool(flag) and not is_nan(flag)
    return bool(metadata.get(key))


def _verdicts(metadata: dict[str, Any]) -> tuple[CriterionVerdict, ...]:
    return tuple(
        CriterionVerdict(str(v["id"]), bool(v["met"]))
        for v in metadata.get("verdicts") or []
        if isinstance(v, dict) and "id" in v and isinstance(v.get("met"), bool)
    )


def _usage(
    metadata: dict[str, Any], sample: ScoredSample, info: LogInfo
) -> tuple[int | None, int | None]:
    """Tokens of the model under test: the scorer's `answer_usage`, else the sample's
    usage of that model, unless it also judged (then its usage mixes in the judge's)."""
    usage = metadata.get("answer_usage")
    if isinstance(usage, dict):
        return _int_or_none(usage.get("output_tokens")), _int_or_none(usage.get("reasoning_tokens"))
    own = (sample.model_usage or {}).get(info.model)
    if own is None or info.model in info.judges.values():
        return None, None
    return own.output_tokens, own.reasoning_tokens


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
