"""Inspect logs as plain per-attempt records: the report's one reader of logs.

A record is one attempt (sample x epoch) as graded by one rubric scorer. A log re-graded
with `inspect score --action append` holds several rubric scorers, each with its own
judge, so it yields one record per attempt and scorer. Everything downstream
(`hss_inspect.report.stats`, `.tables`, ...) is arithmetic over these records and never
touches Inspect.

Rubric scorers are recognised by their value (a dict with a `pass` key), not by name,
so scorers added beside the judge (failure-cause labels, audits) are skipped here.

A log's header also gets who made its calls and what each used (`bill.Party`), for the
report of what each run cost.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalLog,
    EvalSample,
    EvalSampleSummary,
    list_eval_logs,
    read_eval_log,
    read_eval_log_sample,
    read_eval_log_sample_summaries,
    read_eval_log_samples,
)
from inspect_ai.model import ModelConfig, ModelUsage
from inspect_ai.scorer import Score

from hss_inspect.core.errors import InputError
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.core.settings import CACHE_PLAN_RECORD
from hss_inspect.core.values import finite_number
from hss_inspect.report.bill import (
    MODEL,
    OTHER,
    Party,
    Tokens,
    Ttl,
    write_ttl,
    written_at_1h,
)

logger = logging.getLogger(__name__)

LOG_SUFFIXES = (".eval", ".json")
# Parts of a sample the report never needs; skipping them keeps images out of memory.
_HEAVY_FIELDS = {"messages", "events", "attachments", "store", "events_data", "timelines"}


class LogError(InputError):
    """A path that is not an Inspect log, or a log with nothing to report."""


@dataclass(frozen=True)
class CriterionVerdict:
    id: str
    met: bool


@dataclass(frozen=True)
class Invocation:
    """How a log's eval was run, as far as the log records it: enough to give back the
    `inspect eval` command (Inspect logs no command line) and the versions and dates."""

    task: str  # the registry name, e.g. hss_inspect/hss
    task_version: str  # the eval's version as Inspect records it
    full_version: str | None  # hss_task_version (the fingerprint of every text and rule)
    task_args: dict[str, Any]  # the -T values passed
    model_args: dict[str, Any]  # the -M values passed
    generate: dict[str, Any]  # generate options set, by the task's config or the command
    roles: dict[str, dict[str, Any]]  # role -> {"model": ..., generate options}
    options: dict[str, Any]  # eval options set (epochs, limits) as the command line gives them
    created: str
    completed: str | None
    packages: dict[str, str]
    dataset: str | None  # the dataset asked for (-T dataset)
    tasks: int  # tasks selected
    total_tokens: int | None
    judge_prompt_sha256: str | None


@dataclass(frozen=True)
class LogInfo:
    """What a log says about how it was run (one row of the report's header columns)."""

    log: str
    model: str
    condition: str
    reasoning_effort: str | None
    max_frames: int | None
    task: str
    status: str
    created: str
    dataset_revision: str | None = None
    judges: dict[str, str] = field(default_factory=dict)  # scorer name -> judge model
    invocation: Invocation | None = None
    parties: tuple[Party, ...] = ()  # who made the run's calls, with their tokens


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

    @property
    def graded(self) -> bool:
        return self.pass_ is not None

    @property
    def answer_tokens(self) -> int | None:
        """Output tokens minus reasoning tokens (Inspect counts reasoning inside output)."""
        if self.output_tokens is None:
            return None
        return self.output_tokens - (self.reasoning_tokens or 0)


# ---- finding and reading logs ---------------------------------------------------------


def find_logs(paths: Sequence[str | Path]) -> list[str]:
    """Log files named directly or found (recursively) in the folders given, in order."""
    found: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            infos = list_eval_logs(str(path), recursive=True, descending=False)
            found += sorted(_local_path(info.name) for info in infos)
        elif path.is_file() and path.suffix in LOG_SUFFIXES:
            found.append(str(path))
        elif path.exists():
            raise LogError(f"{path}: not an Inspect log (.eval or .json) nor a folder of logs")
        else:
            raise LogError(f"{path}: no such file or folder; pass .eval/.json logs or folders")
    if not found:
        raise LogError("no Inspect logs found in " + ", ".join(str(p) for p in paths))
    return list(dict.fromkeys(found))


def _local_path(name: str) -> str:
    return name.removeprefix("file://")


def read_logs(paths: Sequence[str | Path]) -> tuple[list[LogInfo], list[AttemptRecord]]:
    """Every current log under `paths`: their headers and all their attempt records.

    A log superseded by `inspect eval-retry` (same task id, an earlier eval) is skipped,
    with a warning, so a folder holding both counts each task once.
    """
    headers = {path: read_eval_log(path, header_only=True) for path in find_logs(paths)}
    current = current_logs(
        {p: (h.eval.task_id, h.eval.eval_id, h.eval.created) for p, h in headers.items()}
    )
    skipped = [p for p in headers if p not in current]
    if skipped:
        logger.warning(
            "left out %d log(s) superseded by a later retry of the same task: %s",
            len(skipped),
            ", ".join(skipped),
        )
    infos: list[LogInfo] = []
    records: list[AttemptRecord] = []
    for path in current:
        info, found = read_log(path, headers[path])
        infos.append(info)
        records += found
    return infos, records


def current_logs(identity: dict[str, tuple[str, str, str]]) -> list[str]:
    """Paths whose (task id, eval id, created) is the latest eval of its task id.

    `inspect eval-retry` keeps the task id and starts a new eval; a copy of a log
    re-scored keeps both ids, so copies of the current eval all stay.
    """
    latest: dict[str, tuple[str, str]] = {}
    for task_id, eval_id, created in identity.values():
        if task_id not in latest or created > latest[task_id][0]:
            latest[task_id] = (created, eval_id)
    return [p for p, (task, eval_id, _) in identity.items() if latest[task][1] == eval_id]


def read_log(path: str, header: EvalLog | None = None) -> tuple[LogInfo, list[AttemptRecord]]:
    """One log's header and its attempt records."""
    header = header or read_eval_log(path, header_only=True)
    samples = read_scored_samples(path)
    info = log_info(header, path, samples)
    records = [r for sample in samples for r in records_of_sample(info, sample)]
    return info, records


# A sample as the report reads it: Inspect's summary of it (one read of the log's summary
# file), or the sample itself where the summary dropped something the report uses.
ScoredSample = EvalSample | EvalSampleSummary


def read_scored_samples(path: str) -> list[ScoredSample]:
    """Every sample's scores and metadata, from the log's sample summaries.

    Summaries hold the scores and metadata without messages, events or images, and are
    read in one go; Inspect drops metadata values over 1 kB from them, so a sample whose
    verdicts, token counts or agent record are missing there is read in full (without
    its messages, events and images).
    """
    return [
        read_eval_log_sample(path, id=s.id, epoch=s.epoch, exclude_fields=_HEAVY_FIELDS)
        if summary_lacks_details(s)
        else s
        for s in read_eval_log_sample_summaries(path)
    ]


def summary_lacks_details(summary: EvalSampleSummary) -> bool:
    metadata = summary.metadata or {}
    if not isinstance(metadata.get("agent", {}), dict):
        return True
    if not isinstance(metadata.get(CACHE_PLAN, {}), dict | None):
        return True
    for score in (summary.scores or {}).values():
        meta = score.metadata or {}
        if not isinstance(meta.get("verdicts", []), list):
            return True
        if not isinstance(meta.get("answer_usage", {}), dict | None):
            return True
    return False


def read_samples(path: str) -> Iterator[EvalSample]:
    """The samples of a log without messages, events or images (streamed)."""
    try:
        yield from read_eval_log_samples(
            path, all_samples_required=False, exclude_fields=_HEAVY_FIELDS
        )
    except RuntimeError:  # a header without sample ids (hand-written logs): read it whole
        yield from read_eval_log(path).samples or []


# ---- the log header -------------------------------------------------------------------


def log_info(log: EvalLog, path: str, samples: Sequence[ScoredSample] = ()) -> LogInfo:
    spec = log.eval
    metadata = spec.metadata or {}
    frames = (metadata.get("hss_media_settings") or {}).get("frames") or {}
    max_frames = frames.get("max_frames")
    condition = str(metadata.get("hss_condition", "standard"))
    effort = reasoning_effort_of(log)
    return LogInfo(
        log=path,
        model=spec.model,
        condition=condition,
        reasoning_effort=effort,
        max_frames=None if max_frames is None else int(max_frames),
        task=spec.task,
        status=log.status,
        created=spec.created,
        dataset_revision=metadata.get("hss_dataset_revision"),
        judges=judges_of(samples, default=_grader_of(log)),
        invocation=invocation_of(log),
        parties=parties_of(log, path, run_label(spec.model, effort, condition), samples),
    )


def run_label(model: str, effort: str | None, condition: str) -> str:
    """A run as the report names it: `model (effort) [condition]`."""
    shown = f"{model} ({effort})" if effort else model
    return shown if condition == "standard" else f"{shown} [{condition}]"


# Eval options the command line can set, beyond the generate options.
_EVAL_OPTIONS = (
    "epochs",
    "limit",
    "sample_id",
    "message_limit",
    "token_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
)


def invocation_of(log: EvalLog) -> Invocation:
    spec, metadata = log.eval, log.eval.metadata or {}
    plan = log.plan.config.model_dump(exclude_none=True) if log.plan else {}
    usage = list(log.stats.model_usage.values()) if log.stats else []
    return Invocation(
        task=spec.task_registry_name or spec.task,
        task_version=str(spec.task_version),
        full_version=metadata.get("hss_task_version"),
        task_args=dict(spec.task_args_passed or {}),
        model_args=dict(spec.model_args or {}),
        generate={**plan, **spec.model_generate_config.model_dump(exclude_none=True)},
        roles={name: _role(config) for name, config in (spec.model_roles or {}).items()},
        options=_eval_options(spec.config),
        created=spec.created,
        completed=(log.stats.completed_at or None) if log.stats else None,
        packages=dict(spec.packages or {}),
        dataset=(metadata.get("hss_dataset_requested") or {}).get("dataset"),
        tasks=spec.dataset.samples or 0,
        total_tokens=sum(u.total_tokens for u in usage) if usage else None,
        judge_prompt_sha256=metadata.get("hss_judge_prompt_sha256"),
    )


def _role(config: Any) -> dict[str, Any]:
    if isinstance(config, list):  # several models in one role: the first is named
        config = config[0]
    args = {"model_args": dict(config.args)} if config.args else {}
    return {"model": config.model, **config.config.model_dump(exclude_none=True), **args}


def _eval_options(config: Any) -> dict[str, Any]:
    """The eval options set, with their values as the command line writes them."""
    found = {name: getattr(config, name, None) for name in _EVAL_OPTIONS}
    limit = found["limit"]
    if isinstance(limit, list | tuple):  # a range, held from a zero-based start
        found["limit"] = f"{limit[0] + 1}-{limit[1]}"
    if isinstance(found["sample_id"], list | tuple):
        found["sample_id"] = ",".join(str(i) for i in found["sample_id"])
    return {name: value for name, value in found.items() if value is not None}


# ---- who made the calls, and what they used --------------------------------------------

# a sample's record of its cache plan (strategy, write_ttl: conditions/cache_plan.py)
CACHE_PLAN = CACHE_PLAN_RECORD
Usage = tuple[Tokens, float | None]  # tokens and Inspect's recorded cost


def parties_of(
    log: EvalLog, path: str, run: str, samples: Sequence[ScoredSample] = ()
) -> tuple[Party, ...]:
    """The model under evaluation and each role, with the tokens Inspect recorded for
    them (the log's usage by model and by role); the model's calls are its usage less that
    of the roles bound to the same model. A role bound to several models cannot be split
    from them: its calls stay with each model's, as OTHER where that is not the model under
    evaluation."""
    if log.stats is None:
        return ()
    by_role = log.stats.role_usage
    configs = {role: _configs(config) for role, config in (log.eval.model_roles or {}).items()}
    bound = {role: found[0] for role, found in configs.items() if len(found) == 1}
    models = {role: config.model for role, config in bound.items()}
    roles = [
        _role_party(path, run, role, bound[role], usage)
        for role, usage in by_role.items()
        if role in bound
    ]
    rest = _without_roles(log.stats.model_usage, by_role, models)
    own = [
        _model_party(log, path, run, usage, models, samples)
        for model, usage in rest
        if model == log.eval.model and not usage[0].empty  # the oracle calls no model
    ]
    others = [
        Party(path, run, OTHER, model, tokens, 0, cost)
        for model, (tokens, cost) in rest
        if model != log.eval.model and not tokens.empty
    ]
    return (*own, *roles, *others)


def _model_party(
    log: EvalLog,
    path: str,
    run: str,
    usage: Usage,
    models: dict[str, str],
    samples: Sequence[ScoredSample],
) -> Party:
    """The model under evaluation's calls; its cache writes at the TTL of each sample's
    record, else of its `-M cache_ttl`."""
    model, (tokens, cost) = log.eval.model, usage
    ttl = write_ttl(None, (log.eval.model_args or {}).get("cache_ttl"))
    writes = _sample_writes(model, ttl, models, samples)
    written_1h = written_at_1h(tokens.cache_write or 0, ttl, writes)
    return Party(path, run, MODEL, model, tokens, written_1h, cost, _batched(log))


def _role_party(path: str, run: str, role: str, config: ModelConfig, usage: ModelUsage) -> Party:
    """A role's calls; its cache writes at the TTL of its model's `cache_ttl`."""
    tokens, cost = _tokens_of(usage)
    ttl = write_ttl(None, (config.args or {}).get("cache_ttl"))
    written_1h = written_at_1h(tokens.cache_write or 0, ttl, ())
    batched = bool(config.config.batch)  # a role's calls batch by its own options only
    return Party(path, run, role, config.model, tokens, written_1h, cost, batched)


def _configs(config: ModelConfig | list[ModelConfig]) -> list[ModelConfig]:
    """A role's model configs, one each distinct model."""
    found = config if isinstance(config, list) else [config]
    return list({c.model: c for c in found}.values())


def _tokens_of(usage: ModelUsage) -> Usage:
    tokens = Tokens(
        fresh_input=usage.input_tokens,
        cache_write=usage.input_tokens_cache_write,
        cache_read=usage.input_tokens_cache_read,
        output=usage.output_tokens,
        reasoning=usage.reasoning_tokens,
    )
    return tokens, usage.total_cost


def _without_roles(
    by_model: dict[str, ModelUsage], by_role: dict[str, ModelUsage], bound: dict[str, str]
) -> list[tuple[str, Usage]]:
    """Each model's usage less that of the roles bound to it."""
    found = []
    for model, usage in by_model.items():
        tokens, cost = _tokens_of(usage)
        for role, role_model in bound.items():
            if role_model == model and role in by_role:
                role_tokens, role_cost = _tokens_of(by_role[role])
                tokens -= role_tokens
                cost = None if cost is None else cost - (role_cost or 0.0)
        found.append((model, (tokens, cost)))
    return found


def _sample_writes(
    model: str, model_ttl: Ttl, models: dict[str, str], samples: Sequence[ScoredSample]
) -> Iterator[tuple[Ttl, int]]:
    """The TTL and the model's cache writes (less its roles') of each sample that recorded
    its cache plan."""
    roles = [role for role, bound in models.items() if bound == model]
    for sample in samples:
        record = (sample.metadata or {}).get(CACHE_PLAN)
        usage = (sample.model_usage or {}).get(model)
        if record is None or usage is None:
            continue
        by_role = sample.role_usage or {}
        judged = sum(by_role[r].input_tokens_cache_write or 0 for r in roles if r in by_role)
        yield write_ttl(record, model_ttl), (usage.input_tokens_cache_write or 0) - judged


def _batched(log: EvalLog) -> bool:
    """Whether the model under evaluation ran in batch mode: the eval's generate options
    (the task's config with the command's) over the model's own, as Inspect merges them."""
    planned = log.plan.config.batch if log.plan else None
    return bool(log.eval.model_generate_config.batch if planned is None else planned)


def reasoning_effort_of(log: EvalLog) -> str | None:
    """The effort the model ran at: the eval's generate options (`--reasoning-effort`), or
    the task's own config (set by a recipe), which Inspect records in the plan."""
    effort = log.eval.model_generate_config.reasoning_effort
    if effort is None and log.plan is not None:
        effort = log.plan.config.reasoning_effort
    return effort


def _grader_of(log: EvalLog) -> str:
    roles = log.eval.model_roles or {}
    grader = roles.get(GRADER_ROLE)
    if isinstance(grader, list):
        grader = grader[0] if grader else None
    return grader.model if grader is not None else "unknown judge"


def judges_of(samples: Iterable[ScoredSample], default: str) -> dict[str, str]:
    """Each rubric scorer's judge: the judge model its graded scores name most often.

    Scores without a judge (no answer, model error) name none; a scorer whose scores
    never name one falls back to the log's `grader` role.
    """
    named: dict[str, Counter[str]] = {}
    for sample in samples:
        for name, score in (sample.scores or {}).items():
            if not is_rubric_score(score):
                continue
            judge = (score.metadata or {}).get("judge_model")
            named.setdefault(name, Counter())
            if judge:
                named[name][str(judge)] += 1
    return {
        name: counts.most_common(1)[0][0] if counts else default for name, counts in named.items()
    }


# ---- one sample-epoch -----------------------------------------------------------------


def is_rubric_score(score: Score) -> bool:
    value = score.value
    if isinstance(value, dict):
        return "pass" in value
    # A grading failure written before the five-key value: a bare NaN marked in metadata.
    return bool((score.metadata or {}).get("grading_failure")) and _is_nan(value)


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
    )


def _frames(meta: dict[str, Any]) -> dict[str, Any]:
    received = meta.get("frames_received")
    return received if isinstance(received, dict) else {}


def cause_of(sample: ScoredSample) -> str | None:
    """The failure-cause label of the attempt: the score carrying a taxonomy version."""
    for score in (sample.scores or {}).values():
        metadata = score.metadata or {}
        if "taxonomy_version" in metadata and isinstance(metadata.get("cause"), str):
            return str(metadata["cause"])
    return None


def _flag(value: dict[str, Any], metadata: dict[str, Any], key: str) -> bool:
    """A 0/1 flag of the score value, or (older logs) a truthy entry of its metadata."""
    if key in value:
        flag = value[key]
        return bool(flag) and not _is_nan(flag)
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


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
