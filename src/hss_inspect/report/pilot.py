"""A pilot run, read for `hss-inspect estimate`: what a short run of the same model
(`inspect eval ... --limit N`) measured per attempt, which a full run's bill scales up:
output and reasoning tokens by media type, the judge's tokens, and the run's pace (how long
a sample-epoch took, and how many ran at once).

The log is read through `logs`: its header and its sample summaries, never the samples'
messages, events or images."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from inspect_ai.log import EvalLog, EvalSampleSummary

from hss_inspect.core.errors import InputError, one_line
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.report.bill import Tokens, less_roles
from hss_inspect.report.logs import DamagedLog, read_header, read_summaries, single_model_roles


@dataclass(frozen=True)
class Pilot:
    """Per-attempt means of a pilot log; None where the log has no figure."""

    source: str
    model: str
    attempts: int
    output: dict[str, float]  # media type -> output tokens (thinking included)
    reasoning: dict[str, float | None]
    judge_output: float | None
    durations: tuple[float, ...]  # seconds per sample-epoch
    concurrency: float  # sample-epochs running at once, on average

    def output_for(self, media_type: str) -> float:
        """The media type's mean, else the mean over all the pilot's attempts."""
        if media_type in self.output:
            return self.output[media_type]
        return statistics.fmean(self.output.values())


def read_pilot(path: str, model: str) -> Pilot:
    """The pilot log at `path`, of `model` (a log of another model is refused)."""
    if not Path(path).exists():
        raise InputError(f"--pilot {path}: no such log")
    try:
        return _pilot(path, model)
    except DamagedLog as damaged:
        raise InputError(f"--pilot {damaged}") from None


def _pilot(path: str, model: str) -> Pilot:
    header = read_header(path)
    ran = str(header.eval.model)
    if ran != model:
        raise InputError(
            f"--pilot {path}: a run of {ran}, not of {model}; give a pilot of the same model"
        )
    samples = _finished(path, model)
    if not samples:
        raise InputError(
            f"--pilot {path}: no finished sample of {model} to measure{_why_none(path, header)}"
        )
    roles = {role: config.model for role, config in single_model_roles(header).items()}
    output, reasoning = _output_by_media(samples, model, roles)
    judged = [s.role_usage[GRADER_ROLE] for s in samples if GRADER_ROLE in (s.role_usage or {})]
    return Pilot(
        source=path,
        model=model,
        attempts=len(samples),
        output={media: statistics.fmean(values) for media, values in output.items()},
        reasoning={media: _mean_or_none(values) for media, values in reasoning.items()},
        judge_output=_mean_or_none([float(u.output_tokens) for u in judged]),
        durations=tuple(float(s.total_time) for s in samples if s.total_time),
        concurrency=_concurrency(samples),
    )


def _why_none(path: str, header: EvalLog) -> str:
    """Why a pilot finished no sample, as Inspect recorded it: the run's error, else the
    first sample's ('' if neither holds one)."""
    if header.error is not None:
        return f"; the run ended in an error: {one_line(header.error.message)}"
    errors = [s.error for s in read_summaries(path) if s.error]
    if errors:
        return f"; {len(errors)} sample(s) ended in an error, the first: {one_line(errors[0])}"
    return ""


def _finished(path: str, model: str) -> list[EvalSampleSummary]:
    """The samples that called `model` without an error."""
    summaries = [s for s in read_summaries(path) if s.error is None and model in s.model_usage]
    return sorted(summaries, key=_whole_log_order)


def _whole_log_order(sample: EvalSampleSummary) -> tuple[int, str]:
    """By epoch, then id, as Inspect orders a whole log's samples (summaries come in the
    order the samples finished): the pilot's sums and durations stay as they were."""
    return sample.epoch, sample.id if isinstance(sample.id, str) else str(sample.id).zfill(20)


def _output_by_media(
    samples: Sequence[EvalSampleSummary], model: str, roles: dict[str, str]
) -> tuple[dict[str, list[float]], dict[str, list[float | None]]]:
    """Each attempt's output and reasoning tokens of `model` under evaluation, by media
    type: its usage less that of the roles bound to it (`roles`: role -> model), as the
    report counts the model's own calls."""
    output: dict[str, list[float]] = defaultdict(list)
    reasoning: dict[str, list[float | None]] = defaultdict(list)
    for sample in samples:
        media = str((sample.metadata or {}).get("media_type", "all"))
        own = own_tokens(sample, model, roles)
        output[media].append(float(own.output))
        reasoning[media].append(None if own.reasoning is None else float(own.reasoning))
    return output, reasoning


def own_tokens(sample: EvalSampleSummary, model: str, roles: dict[str, str]) -> Tokens:
    """The tokens of `model`'s own calls in one sample, without its roles' calls."""
    usage = dict(less_roles(sample.model_usage, sample.role_usage or {}, roles))
    return usage[model][0]


def _mean_or_none(values: list[float | None] | list[float]) -> float | None:
    """A mean only when every attempt reported the figure ("not reported" is never 0)."""
    if not values or any(v is None for v in values):
        return None
    return statistics.fmean(v for v in values if v is not None)


def _concurrency(samples: Sequence[EvalSampleSummary]) -> float:
    """Sample-epochs in flight on average: their summed time over the time they spanned."""
    starts = [s.started_at for s in samples if s.started_at and s.completed_at]
    ends = [s.completed_at for s in samples if s.started_at and s.completed_at]
    if not starts:
        return 1.0
    span = (
        datetime.fromisoformat(str(max(ends))) - datetime.fromisoformat(str(min(starts)))
    ).total_seconds()
    busy = sum(float(s.total_time or 0.0) for s in samples)
    return max(1.0, busy / span) if span > 0 else 1.0
