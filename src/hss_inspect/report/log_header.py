"""What a log says about how it was run (`LogInfo`): the model, condition and effort that
name the run, each rubric scorer's judge, the `inspect eval` invocation, and who made
its calls (`parties`).

Rubric scorers are recognised by their value (a dict with a `pass` key), not by name,
so scorers added beside the judge (failure-cause labels, audits) are not rubric scorers.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.scorer import Score

from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.core.settings import DEFAULT_DATASET
from hss_inspect.core.values import is_nan
from hss_inspect.data.demo import DEMO_DATASET
from hss_inspect.data.fingerprints import RECORD_KEY, TaskPrint, prints_of_record, rows_of_record
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import DatasetSize, dataset_size
from hss_inspect.providers.paper_models import release_media_tasks, release_tasks
from hss_inspect.report.bill import Party
from hss_inspect.report.logs import ScoredSample
from hss_inspect.report.parties import parties_of


@dataclass(frozen=True)
class Invocation:
    """How a log's eval was run, as far as the log records it: enough to give back the
    `inspect eval` command (Inspect logs no command line) and the versions and dates."""

    task: str  # as `inspect eval` takes it: hss_inspect/hss, or FILE@NAME for a file's task
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
    dataset_revision: str | None = None  # the commit the run read (None: not a hub dataset)
    # what `-T dataset` and `-T revision` asked for, and whether the revision was a commit
    dataset: str | None = None
    requested_revision: str | None = None
    dataset_pinned: bool | None = None
    judges: dict[str, str] = field(default_factory=dict)  # scorer name -> judge model
    invocation: Invocation | None = None
    parties: tuple[Party, ...] = ()  # who made the run's calls, with their tokens
    # the whole dataset the run chose its tasks from (None: the log records no size)
    dataset_size: DatasetSize | None = None
    # what the run measured: the copy it read (a hub address at its commit, or a path), the
    # fingerprint of each task (None: a log written before 2-H), and the task version, N
    # as Inspect records it and the full N-X
    source: str | None = None
    task_prints: dict[str, TaskPrint] | None = None
    release_rows: str | None = None  # the digest of every row of the release read
    comparable_version: str = ""
    full_version: str | None = None

    @property
    def benchmark(self) -> str:
        return benchmark_id(self.dataset)


def benchmark_id(dataset: str | None) -> str:
    """The name a dataset's results go under: its repo's (or folder's) name, in lowercase
    with `_` between words, so ScaleAI/HSS gives `hss` and a built split pushed to
    lab/wildlife-split gives `wildlife_split`. The demo set is HSS's shape: `hss`."""
    if dataset is None or dataset == DEMO_DATASET:
        return "hss"
    path = PurePosixPath(dataset.replace("\\", "/"))
    if path.suffix == ".jsonl":  # a rows file: named by its copy's folder
        path = path.parent.parent if path.parent.name == "data" else path.parent
    return re.sub(r"[^a-z0-9]+", "_", path.name.lower()).strip("_") or "hss"


def size_of(record: Any, dataset: str | None) -> DatasetSize | None:
    """The size the log recorded at load; for a log written before it recorded one, HSS's
    own (Sec. 2.4, Table 3) when the log ran on ScaleAI/HSS, the shipped demo set's when it
    ran on that, else unknown."""
    recorded = DatasetSize.from_record(record)
    if recorded is not None:
        return recorded
    if dataset == DEFAULT_DATASET:
        return DatasetSize(release_tasks(), release_media_tasks())
    if dataset == DEMO_DATASET:
        return dataset_size(open_release(DEMO_DATASET, "main").read_rows())
    return None


def log_info(log: EvalLog, path: str, samples: Sequence[ScoredSample] = ()) -> LogInfo:
    spec = log.eval
    metadata = spec.metadata or {}
    frames = (metadata.get("hss_media_settings") or {}).get("frames") or {}
    max_frames = frames.get("max_frames")
    condition = str(metadata.get("hss_condition", "standard"))
    effort = reasoning_effort_of(log)
    requested = metadata.get("hss_dataset_requested") or {}
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
        dataset=requested.get("dataset"),
        requested_revision=requested.get("revision"),
        dataset_pinned=metadata.get("hss_dataset_pinned"),
        judges=judges_of(samples, default=_grader_of(log)),
        invocation=invocation_of(log),
        parties=parties_of(log, path, run_label(spec.model, effort, condition), samples),
        dataset_size=size_of(metadata.get("hss_dataset_size"), requested.get("dataset")),
        source=metadata.get("hss_dataset"),
        task_prints=prints_of_record(metadata.get(RECORD_KEY)),
        release_rows=rows_of_record(metadata.get(RECORD_KEY)),
        comparable_version=str(spec.task_version),
        full_version=metadata.get("hss_task_version"),
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
        task=task_named(log),
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


def task_named(log: EvalLog) -> str:
    """The task as `inspect eval` was given it: a package's task by its registry name
    (`hss_inspect/hss`), a file's as FILE@NAME (`src/hss_inspect/task.py@hss`, the
    register's run form), the file's path as the run's working folder saw it."""
    spec = log.eval
    name = spec.task_registry_name or spec.task
    return f"{spec.task_file}@{name}" if spec.task_file else name


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


def is_rubric_score(score: Score) -> bool:
    value = score.value
    if isinstance(value, dict):
        return "pass" in value
    # A grading failure written before the five-key value: a bare NaN marked in metadata.
    return bool((score.metadata or {}).get("grading_failure")) and is_nan(value)
