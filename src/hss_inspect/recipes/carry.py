"""A log carried to a later release for the price of what changed (`hss-inspect release
carry`): an ordinary Inspect log of the new release, made from a log of the old one.

What each task's change costs (`data.fingerprints`) decides what happens to its samples:

- unchanged: kept, scores and all;
- labels only: kept, with the new domain, subdomain and media type (the tables move);
- reference or rubric: the stored answers graded again by the log's own judge, through
  Inspect's scoring (`score_async`), against the new release's reference and rubric;
- media or prompt, and tasks the new release adds: run again, only they, with the log's
  own model, roles, options and attempts;
- tasks the new release removes: dropped.

Every sample records where its scores came from (`hss_carried`), the log records what it
was carried from, and its metrics are recomputed over all its samples by Inspect.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ModelUsage

from hss_inspect.core.config import comparable_part
from hss_inspect.core.errors import InputError
from hss_inspect.core.options import DEFAULTS
from hss_inspect.core.settings import HUMAN_CONDITION
from hss_inspect.data.fingerprints import (
    LABEL_FIELDS,
    RECORD_KEY,
    Change,
    ReleaseDiff,
    TaskPrint,
    diff_prints,
    prints_of_record,
    prints_record,
    rows_digest,
)
from hss_inspect.data.release import Release, fingerprints_of, open_release
from hss_inspect.data.rows import TaskRow, dataset_size, select_rows
from hss_inspect.media.facts import remembered_sha256
from hss_inspect.versioning import comparability_version

CARRIED = "hss_carried"  # a sample's metadata: where its scores came from; the log's: from what
KEPT, RELABELLED, REGRADED, RERUN = "kept", "relabelled", "graded again", "answered again"


@dataclass(frozen=True)
class CarryPlan:
    """What a carry does to each task of the log and of the new release."""

    log: str
    source: str  # the new release, as the carried log names it
    epochs: int
    diff: ReleaseDiff
    kept: tuple[str, ...]
    relabelled: tuple[str, ...]
    regraded: tuple[str, ...]
    rerun: tuple[str, ...]
    dropped: tuple[str, ...]
    unknown_media: tuple[str, ...] = ()  # answered again: their media went unhashed
    rows: dict[str, TaskRow] = field(repr=False, default_factory=dict)
    prints: dict[str, TaskPrint] = field(repr=False, default_factory=dict)  # the new release's

    @property
    def judge_conversations(self) -> int:
        """Conversations with the judge: the regraded attempts, and the rerun ones."""
        return (len(self.regraded) + len(self.rerun)) * self.epochs

    @property
    def candidate_attempts(self) -> int:
        return len(self.rerun) * self.epochs

    @property
    def new_attempts(self) -> int:
        """The carried log's attempts: what a run of the new release would make."""
        tasks = len(self.kept) + len(self.relabelled) + len(self.regraded) + len(self.rerun)
        return tasks * self.epochs

    def as_dict(self) -> dict[str, Any]:
        return {
            "log": self.log,
            "to": self.source,
            "epochs": self.epochs,
            "kept": list(self.kept),
            "relabelled": list(self.relabelled),
            "graded_again": list(self.regraded),
            "answered_again": list(self.rerun),
            "dropped": list(self.dropped),
            "media_unknown": list(self.unknown_media),
            "new_attempts": self.new_attempts,
            "judge_conversations": self.judge_conversations,
            "candidate_attempts": self.candidate_attempts,
        }


def plan_carry(
    log: str,
    source: str,
    epochs: int,
    old: Mapping[str, TaskPrint],
    new_rows: Sequence[TaskRow],
    new: Mapping[str, TaskPrint],
    media_sent: bool = True,
) -> CarryPlan:
    """The carry of a log whose tasks had the fingerprints `old` to the selection `new_rows`
    of the new release (fingerprints `new`). A task whose media went unhashed on either side
    is answered again: what the model saw cannot be shown the same. A run that sent no media
    (the blind control) does not depend on them. Pure."""
    if not media_sent:
        old, new = _without_media(old), _without_media(new)
    diff = diff_prints(old, new)
    unknown = set(diff.unknown_media) if media_sent else set()
    kept = set(diff.unchanged) - unknown
    return CarryPlan(
        log=log,
        source=source,
        epochs=epochs,
        diff=diff,
        kept=tuple(t for t in old if t in kept),
        relabelled=tuple(t for t in diff.of(Change.RECOUNT) if t not in unknown),
        regraded=tuple(t for t in diff.of(Change.GRADE_AGAIN) if t not in unknown),
        rerun=(*_answered_again(diff, unknown), *diff.added),
        dropped=diff.removed,
        unknown_media=tuple(t for t in old if t in unknown),
        rows={row.task_id: row for row in new_rows},
        prints=dict(new),
    )


def _answered_again(diff: ReleaseDiff, unknown: set[str]) -> list[str]:
    changed = set(diff.of(Change.ANSWER_AGAIN)) | unknown
    return [t for t in (*diff.unchanged, *(c.task_id for c in diff.changed)) if t in changed]


def _without_media(prints: Mapping[str, TaskPrint]) -> dict[str, TaskPrint]:
    return {t: replace(found, media=None) for t, found in prints.items()}


def carry_plan(header: EvalLog, path: str, new_release: Release) -> CarryPlan:
    """The plan for carrying the log at `path` (its header) to `new_release`, after the
    checks that make a carry mean what it says."""
    metadata = header.eval.metadata or {}
    _check_carriable(header, path, metadata)
    old = prints_of_record(metadata.get(RECORD_KEY))
    if old is None:
        old = _legacy_prints(header, path)
    chosen = _selection_of(header)
    rows = select_rows(
        new_release.read_rows(), chosen["media"], chosen["domains"], chosen["subdomains"]
    )
    new = fingerprints_of(new_release, rows, remembered_sha256)
    epochs = int(header.eval.config.epochs or 1)
    media_sent = metadata.get("hss_condition") != "blind"
    return plan_carry(path, new_release.description, epochs, old, rows, new, media_sent)


def _selection_of(header: EvalLog) -> dict[str, Any]:
    """The tasks the run chose (media, domains, subdomains), as its task recorded them: a
    preset's own choice (`hss_image`) is there, not among the arguments passed."""
    recorded = (header.eval.metadata or {}).get("hss_selection") or {}
    args = header.eval.task_args or {}
    return {
        key: recorded[key] if key in recorded else args.get(key, DEFAULTS[key])
        for key in ("media", "domains", "subdomains")
    }


def _check_carriable(header: EvalLog, path: str, metadata: Mapping[str, Any]) -> None:
    if "hss_task_version" not in metadata:
        raise InputError(f"{path}: not a log of an HSS task; release carry takes a run of one")
    if metadata.get("hss_condition") == HUMAN_CONDITION:
        raise InputError(
            f"{path}: people's answers (hss_human); grade them on the new release with "
            "inspect eval hss_inspect/hss_human -T dataset=NEW, their answers given again"
        )
    ran = comparable_part(str(metadata["hss_task_version"]))
    if ran != str(comparability_version()):
        raise InputError(
            f"{path}: a run of task version {metadata['hss_task_version']}; this package grades "
            f"as task version {comparability_version()}, whose results are not comparable: run "
            "the new release again, or carry with the package version that made the log"
        )
    config = header.eval.config
    if config.limit is not None or config.sample_id is not None:
        raise InputError(
            f"{path}: a run limited to some samples (--limit or --sample-id); carry takes a "
            "whole run, whose tasks the new release's can be set against"
        )
    if header.status != "success":
        raise InputError(
            f"{path}: the run ended {header.status}; finish it first (inspect eval-retry), "
            "then carry it"
        )


def _legacy_prints(header: EvalLog, path: str) -> dict[str, TaskPrint]:
    """A log written before logs recorded fingerprints: its release's, read again at the
    commit it recorded (a local copy may have changed since, so it is refused)."""
    metadata = header.eval.metadata or {}
    requested = metadata.get("hss_dataset_requested") or {}
    commit = metadata.get("hss_dataset_revision")
    if commit is None or not requested.get("dataset"):
        raise InputError(
            f"{path}: the log records no task fingerprints and read a local copy, which may "
            "have changed since; run the new release again"
        )
    release = open_release(str(requested["dataset"]), str(commit))
    ran = {str(task_id) for task_id in header.eval.dataset.sample_ids or []}
    rows = [row for row in release.read_rows() if row.task_id in ran]
    return fingerprints_of(release, rows, remembered_sha256)


# ---- carrying -----------------------------------------------------------------------------


def carry_log(path: str, new_release: Release, out: Path) -> tuple[CarryPlan, EvalLog]:
    """The log at `path` carried to `new_release`, written to `out` (`.eval` or `.json`)."""
    from inspect_ai.log import read_eval_log, recompute_metrics, write_eval_log

    from hss_inspect.report.logs import reading

    with reading(path):
        log = read_eval_log(path)
    plan = carry_plan(log, path, new_release)
    # the run first: when it fails, no judge call of the re-grade is spent for nothing
    rerun = _rerun_samples(log, plan, new_release)
    samples = [*_kept_samples(log, plan), *_regraded_samples(log, plan), *rerun]
    samples.sort(key=lambda s: (s.epoch, str(s.id)))
    carried = _with_release(log, plan, new_release, samples)
    recompute_metrics(carried)
    write_eval_log(carried, str(out))
    return plan, carried


def _kept_samples(log: EvalLog, plan: CarryPlan) -> list[EvalSample]:
    keep = {**dict.fromkeys(plan.kept, KEPT), **dict.fromkeys(plan.relabelled, RELABELLED)}
    found = []
    for sample in log.samples or []:
        how = keep.get(str(sample.id))
        if how is None:
            continue
        if how == RELABELLED:
            sample.metadata = {**sample.metadata, **_labels(plan.rows[str(sample.id)])}
        found.append(_marked(sample, how, plan.log))
    return found


def _labels(row: TaskRow) -> dict[str, Any]:
    return {name: getattr(row, name) for name in LABEL_FIELDS}


def _marked(sample: EvalSample, how: str, log: str) -> EvalSample:
    sample.metadata = {**sample.metadata, CARRIED: {"how": how, "from": log}}
    return sample


def _regraded_samples(log: EvalLog, plan: CarryPlan) -> list[EvalSample]:
    """The samples of the tasks whose reference or rubric changed, with the new release's
    reference and rubric, graded again by the log's own scorers and judge; each sample's
    usage gains the judge's calls of the re-grade."""
    from inspect_ai import score_async

    chosen = set(plan.regraded)
    samples = [s for s in log.samples or [] if str(s.id) in chosen]
    if not samples:
        return []
    # the events themselves are kept, so no new event can take a freed one's id
    before = {id(sample): _model_events(sample) for sample in samples}
    for sample in samples:
        row = plan.rows[str(sample.id)]
        sample.metadata = {**sample.metadata, **row.sample_metadata()}
        sample.target = row.golden_response
    graded = log.model_copy(update={"samples": samples})
    scoring = score_async(graded, _scorers_of(log), action="overwrite", copy=False, display="none")
    asyncio.run(scoring)
    for sample in graded.samples or []:
        _add_usage(sample, {id(event) for event in before.get(id(sample), [])})
    return [_marked(sample, REGRADED, plan.log) for sample in graded.samples or []]


def _model_events(sample: EvalSample) -> list[Any]:
    from inspect_ai.event import ModelEvent

    return [e for e in sample.events if isinstance(e, ModelEvent)]


def _add_usage(sample: EvalSample, seen: set[int]) -> None:
    """The usage of the model calls made since `seen` (the re-grade's), added to the
    sample's, by model and by role."""
    from inspect_ai.event import ModelEvent

    for event in sample.events:
        if not isinstance(event, ModelEvent) or id(event) in seen or event.output.usage is None:
            continue
        usage = event.output.usage
        sample.model_usage[event.model] = _plus(sample.model_usage.get(event.model), usage)
        if event.role:
            sample.role_usage[event.role] = _plus(sample.role_usage.get(event.role), usage)


def _plus(a: ModelUsage | None, b: ModelUsage) -> ModelUsage:
    return b if a is None else a + b


def _scorers_of(log: EvalLog) -> list[Any]:
    """The scorers the log's task ran (the judge, and the labeller when it ran), built as
    the task builds them."""
    from hss_inspect.task import scorers

    args = log.eval.task_args or {}
    names = {scorer.name for scorer in log.eval.scorers or []}
    return scorers(
        int(args.get("judge_retries", DEFAULTS["judge_retries"])),
        any(name.endswith("failure_cause") for name in names),
        int(args.get("labeler_retries", DEFAULTS["labeler_retries"])),
    )


def _rerun_samples(log: EvalLog, plan: CarryPlan, new_release: Release) -> list[EvalSample]:
    """The tasks whose media or prompt changed and the tasks added, run with the log's own
    model, roles, options and attempts against the new release."""
    if not plan.rerun:
        return []
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    spec = log.eval
    args = {**(spec.task_args or {}), **_dataset_args(new_release)}
    config = log.plan.config.merge(spec.model_generate_config)
    with tempfile.TemporaryDirectory() as folder:
        (ran,) = inspect_eval(
            spec.task_registry_name or spec.task,
            task_args=args,
            model=spec.model,
            model_base_url=spec.model_base_url,
            model_args=dict(spec.model_args or {}),
            model_roles=_roles_of(log),
            epochs=plan.epochs,
            sample_id=list(plan.rerun),
            log_dir=folder,
            display="none",
            **_eval_options(log),
            **config.model_dump(exclude_none=True),
        )
        if ran.status != "success":
            kept = plan.log + ".answered-again.eval"
            shutil.copy(ran.location, kept)
            raise InputError(
                f"{plan.log}: the run of the {len(plan.rerun)} task(s) to answer again ended "
                f"{ran.status} (its log: {kept}); fix the cause and carry again"
            )
        done = read_eval_log(ran.location)
    return [_marked(sample, RERUN, plan.log) for sample in done.samples or []]


# The eval options that decide what a sample is sent or allowed, given again to the run of
# the tasks answered again (the others are the run's bookkeeping).
CARRIED_OPTIONS = (
    "message_limit",
    "token_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
    "fail_on_error",
    "retry_on_error",
    "log_images",
    "log_realtime",
    "score_display",
)


def _eval_options(log: EvalLog) -> dict[str, Any]:
    config = log.eval.config
    found = {name: getattr(config, name, None) for name in CARRIED_OPTIONS}
    return {name: value for name, value in found.items() if value is not None}


def _roles_of(log: EvalLog) -> dict[str, Any]:
    from inspect_ai.model import get_model

    roles = {}
    for name, config in (log.eval.model_roles or {}).items():
        chosen = config[0] if isinstance(config, list) else config
        roles[name] = get_model(
            chosen.model, config=chosen.config, base_url=chosen.base_url, **dict(chosen.args)
        )
    return roles


def _dataset_args(release: Release) -> dict[str, Any]:
    return {"dataset": release.dataset, "revision": release.revision or "main"}


def _with_release(
    log: EvalLog, plan: CarryPlan, release: Release, samples: list[EvalSample]
) -> EvalLog:
    """The log's header for the new release: its rows' fingerprints, the commit, the
    sizes, the selection and where it was read, what it was carried from, its usage over
    its samples; a new eval id and date (it is a new eval)."""
    spec = log.eval
    metadata = dict(spec.metadata or {})
    ids = sorted({str(s.id) for s in samples})
    all_rows = release.read_rows()
    metadata.update(
        {
            RECORD_KEY: prints_record({t: plan.prints[t] for t in ids}, rows_digest(all_rows)),
            "hss_dataset": release.description,
            "hss_dataset_requested": _dataset_args(release),
            "hss_dataset_revision": release.revision,
            "hss_dataset_pinned": release.revision is not None,
            "hss_dataset_size": dataset_size(all_rows).record(),
            CARRIED: {"from": plan.log, "from_release": metadata.get("hss_dataset")}
            | {k: v for k, v in plan.as_dict().items() if k not in ("log", "to")},
        }
    )
    selection = dict(metadata.get("hss_selection") or {})
    selection["tasks"] = len(ids)
    selection["videos"] = sum(plan.rows[t].media_type == "video" for t in ids if t in plan.rows)
    metadata["hss_selection"] = selection
    dataset = spec.dataset.model_copy(
        update={"samples": len(ids), "sample_ids": ids, "location": release.description}
    )
    task_args = {**(spec.task_args or {}), **_dataset_args(release)}
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    new_spec = spec.model_copy(
        update={
            "eval_id": secrets.token_hex(11),
            "task_id": secrets.token_hex(11),
            "created": now,
            "metadata": metadata,
            "dataset": dataset,
            "task_args": task_args,
            "task_args_passed": {**(spec.task_args_passed or {}), **_dataset_args(release)},
        }
    )
    status = "error" if any(s.error for s in samples) else log.status
    stats = log.stats.model_copy(
        update={
            "started_at": now,
            "completed_at": now,
            "model_usage": _summed(s.model_usage for s in samples),
            "role_usage": _summed(s.role_usage for s in samples),
        }
    )
    return log.model_copy(
        update={"eval": new_spec, "samples": samples, "status": status, "stats": stats}
    )


def _summed(usages: Iterable[dict[str, ModelUsage]]) -> dict[str, ModelUsage]:
    total: dict[str, ModelUsage] = {}
    for usage in usages:
        for name, used in usage.items():
            total[name] = _plus(total.get(name), used)
    return total
