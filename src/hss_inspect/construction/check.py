"""Checks of the tasks in review before a reviewer's time is spent, each an existing condition
of the benchmark run through `inspect eval` with the user's own models, so it is logged:

- `reference`: the reference answer graded against its own rubric by the judge (the oracle
  condition): a reference that does not meet its own criteria is a rubric defect.
- `blind`: the question alone put to a model (the blind control, Sec. 3.1): a task
  answered from its text alone may not need its media (principle 1, Sec. 2.3).
- `answers` (a build made with `--blind-answers`): the reviewers' own answers graded by the
  same judge and rubric through `hss_human`, as a human study's are; their grades are
  stored beside them (`blind`), never shown to a reviewer.

The tasks in review are written as a release (links to the pool's files) under the build's
checks folder, the evals read it, and what each found is stored on its revision as a flag
for its reviewers: a finding to weigh, never a verdict made for them.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from hss_inspect.construction import store
from hss_inspect.construction.authoring import build_taxonomy
from hss_inspect.construction.store import Flag, TaskView
from hss_inspect.core.errors import InputError
from hss_inspect.core.settings import HUMAN_CONDITION
from hss_inspect.report.records import AttemptRecord

REFERENCE, BLIND, ANSWERS = "reference", "blind", "answers"
ORACLE_TASK, BLIND_TASK = "hss_inspect/hss_oracle", "hss_inspect/hss_blind"
HUMAN_TASK = "hss_inspect/hss_human"


@dataclass(frozen=True)
class CheckRun:
    """One `inspect eval` of the checks: its kind, the model it asks (`none` for the
    reference), and its command line."""

    kind: str
    model: str
    argv: tuple[str, ...]

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


def check_runs(
    release: Path, grader: str, models: Sequence[str], epochs: int, log_dir: Path
) -> list[CheckRun]:
    """The reference check, then the blind control of each model, on the release."""

    def argv(task: str, model: str, attempts: int) -> tuple[str, ...]:
        return (
            "inspect", "eval", task, "-T", f"dataset={release}", "--model", model,
            "--model-role", f"grader={grader}", "--epochs", str(attempts),
            "--log-dir", str(log_dir),
        )  # fmt: skip

    runs = [CheckRun(REFERENCE, "none", argv(ORACLE_TASK, "none", 1))]
    runs += [CheckRun(BLIND, model, argv(BLIND_TASK, model, epochs)) for model in models]
    return runs


def answers_run(build: Path, release: Path, grader: str, log_dir: Path) -> CheckRun:
    """The reviewers' blind answers to the release's tasks, graded as people's answers."""
    return CheckRun(ANSWERS, "none", (
        "inspect", "eval", HUMAN_TASK, "-T", f"answers={build}", "-T", f"dataset={release}",
        "--model", "none", "--model-role", f"grader={grader}", "--log-dir", str(log_dir),
    ))  # fmt: skip


@dataclass
class CheckPlan:
    """What one `build check` does: the tasks in review it checks, the tasks whose blind
    answers it grades (each at its latest submitted revision), and its evals."""

    folder: Path
    log_dir: Path
    chosen: list[TaskView]
    answered: list[TaskView]
    runs: list[CheckRun]


def plan_checks(
    build: Path,
    grader: str,
    models: Sequence[str],
    epochs: int,
    log_dir: Path | None,
    again: bool,
) -> CheckPlan:
    """The tasks in review not checked at their revision (all, `again`), the blind answers
    not graded (all, `again`), and the evals that check and grade them."""
    from hss_inspect.construction import blind

    views = store.awaiting_review(build)
    done = {(t, r) for t, r, kind, _ in store.checked(build) if kind == REFERENCE}
    chosen = [v for v in views if again or (v.task_id, v.revision) not in done]
    answered = blind.to_grade(build, again)
    stamp = datetime.now(tz=timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder = build.with_name(f"{build.stem}.checks") / stamp
    log_dir = log_dir or folder / "logs"
    runs = check_runs(folder / "release", grader, models, epochs, log_dir) if chosen else []
    if answered:
        runs.append(answers_run(build, folder / ANSWERS, grader, log_dir))
    return CheckPlan(folder, log_dir, chosen, answered, runs)


def run_plan(build: Path, plan: CheckPlan) -> CheckOutcome:
    """Write the releases the evals read (links to the pool's files), run the evals, and
    store what they found."""
    from hss_inspect.construction.export import link_file, write_release

    settings = store.settings_of(build)
    pool, taxonomy = Path(settings["pool"]), build_taxonomy(settings)
    for views, folder in ((plan.chosen, plan.folder / "release"),
                          (plan.answered, plan.folder / ANSWERS)):  # fmt: skip
        if views:
            write_release([(v, v.item) for v in views], pool, folder, link_file, taxonomy)
    ran = run_evals(plan.runs, plan.log_dir)
    return store_check_flags(build, plan.chosen, ran, plan.log_dir, plan.answered)


def reference_flags(
    records: Sequence[AttemptRecord], views: dict[str, TaskView]
) -> list[tuple[str, Flag]]:
    """Per task: whether the judge found its reference answer short of its own rubric."""
    found = []
    for record in records:
        view = views.get(record.task_id)
        if view is None:
            continue
        found.append((record.task_id, reference_flag(record, view)))
    return found


def reference_flag(record: AttemptRecord, view: TaskView) -> Flag:
    judge = record.judge
    if record.pass_ is None:
        detail = f"The judge ({judge}) could not grade the reference answer against its rubric."
        return Flag(REFERENCE, judge, True, detail)
    titles = {c.id: c.title for c in view.draft.criteria}
    unmet = [v.id for v in record.verdicts if not v.met]
    if not unmet:
        detail = f"The judge ({judge}) found that the reference answer meets every criterion."
        return Flag(REFERENCE, judge, False, detail)
    listed = "; ".join(f"{cid} ({titles.get(cid, '?')!r})" for cid in unmet)
    detail = (
        f"The judge ({judge}) found that the reference answer does not meet its own "
        f"criterion {listed}: the rubric and the reference may disagree."
    )
    return Flag(REFERENCE, judge, True, detail)


def blind_flags(records: Sequence[AttemptRecord]) -> list[tuple[str, Flag]]:
    """Per task and model: the attempts that passed from the question alone."""
    attempts: dict[tuple[str, str], list[AttemptRecord]] = defaultdict(list)
    for record in records:
        attempts[(record.task_id, record.model)].append(record)
    found = []
    for (task_id, model), mine in sorted(attempts.items()):
        graded = [r for r in mine if r.pass_ is not None]
        passed = sum(r.pass_ == 1 for r in graded)
        detail = (
            f"{model}, given the question alone (no image or clip), passed {passed} of "
            f"{len(graded)} graded attempt(s)"
        )
        if passed:
            detail += ": the answer may not need the media (principle 1)."
        else:
            detail += "."
        found.append((task_id, Flag(BLIND, model, passed > 0, detail)))
    return found


def check_model_names(grader: str, models: Sequence[str]) -> None:
    """A slip in a model's name is one line before anything runs (a YAML spec of the judge
    is checked by the task itself)."""
    from hss_inspect.providers.model_names import NEWER_INSPECT, check_model_name

    if not grader.lstrip().startswith("{"):
        check_model_name(grader, "--model-role grader", NEWER_INSPECT)
    for model in models:
        check_model_name(model, "--model", NEWER_INSPECT)


def failure_line(run: CheckRun, said: str) -> str:
    """An eval of the checks whose `inspect eval` failed, and why, as Inspect `said` it."""
    who = {
        REFERENCE: "the judge's reference check",
        BLIND: f"the blind check of {run.model}",
        ANSWERS: "the grading of the reviewers' blind answers",
    }[run.kind]
    return f"{who} failed: {said or 'inspect eval printed no reason'}"


def run_evals(runs: Sequence[CheckRun], log_dir: Path) -> tuple[list[str], list[str]]:
    """Run each eval of the checks with the `inspect` beside this Python: the logs they
    wrote, and the evals that failed with what Inspect printed on failing (its display
    `log` prints a missing key or a refused option, where `none` drops them)."""
    from hss_inspect.core.errors import inspect_said

    before = set(logs_in(log_dir))
    inspect = Path(sys.executable).with_name("inspect")
    # wide lines: Inspect's messages are then not wrapped mid-sentence
    env = {**os.environ, "COLUMNS": "1000"}
    failures = []
    for planned in runs:
        argv = [str(inspect) if inspect.exists() else "inspect", *planned.argv[1:]]
        done = subprocess.run(
            [*argv, "--display", "log"], env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            failures.append(failure_line(planned, inspect_said(done.stdout + done.stderr)))
    return [path for path in logs_in(log_dir) if path not in before], failures


def status_said(path: str, status: str) -> str:
    """A log's status, with the error that ended its eval as Inspect recorded it (a request
    the provider refused)."""
    from hss_inspect.core.errors import one_line
    from hss_inspect.report.logs import read_header

    error = read_header(path).error
    return status if error is None else f"{status} ({one_line(error.message)})"


def logs_in(folder: Path) -> list[str]:
    from hss_inspect.report.logs import LOG_SUFFIXES

    if not folder.is_dir():
        return []
    return sorted(str(p) for p in folder.rglob("*") if p.suffix in LOG_SUFFIXES)


@dataclass
class CheckOutcome:
    """What the checks' logs gave: the flags raised by kind, each log whose eval did not
    end in success, with its status, and each eval that failed, with why."""

    flagged: dict[str, int] = field(default_factory=lambda: {REFERENCE: 0, BLIND: 0})
    failed: list[tuple[str, str]] = field(default_factory=list)
    graded: int = 0  # blind answers graded
    met: int = 0  # of which met the rubric
    stopped: list[str] = field(default_factory=list)  # failure_line of each


def store_check_flags(
    build: Path,
    chosen: Sequence[TaskView],
    ran: tuple[Sequence[str], Sequence[str]],
    log_dir: Path,
    answered: Sequence[TaskView] = (),
) -> CheckOutcome:
    """Read the logs the checks wrote (`ran`: with the evals that failed) and store what
    they found on each task's revision, and the grades of the blind answers on theirs."""
    from hss_inspect.construction.blind import store_grades
    from hss_inspect.report.records import read_log

    logs, failures = ran
    if not logs:
        why = "; ".join(dict.fromkeys(failures))
        raise InputError(f"the checks wrote no log to {log_dir}: {why or 'no eval failed'}")
    views = {view.task_id: view for view in chosen}
    outcome = CheckOutcome(stopped=list(failures))
    for path in logs:
        info, records = read_log(path)
        if info.status != "success":
            outcome.failed.append((path, status_said(path, info.status)))
        if info.condition == HUMAN_CONDITION:
            graded, met = store_grades(build, records, answered, path)
            outcome.graded, outcome.met = outcome.graded + graded, outcome.met + met
            continue
        found = (
            reference_flags(records, views) if info.condition == "oracle" else blind_flags(records)
        )
        rows = [
            (task_id, views[task_id].revision, flag) for task_id, flag in found if task_id in views
        ]
        store.store_flags(build, rows, path)
        for _, _, flag in rows:
            outcome.flagged[flag.kind] += flag.flagged
    return outcome
