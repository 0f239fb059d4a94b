"""Checks of the tasks in review before a reviewer's time is spent, each an existing condition
of the benchmark run through `inspect eval` with the user's own models, so it is logged:

- `reference`: the reference answer graded against its own rubric by the judge (the oracle
  condition): a reference that does not meet its own criteria is a rubric defect.
- `blind`: the question alone put to a model (the blind control, Sec. 3.1): a task
  answered from its text alone may not need its media (principle 1, Sec. 2.3).

The tasks in review are written as a release (links to the pool's files) under the build's
checks folder, the evals read it, and what each found is stored on its revision as a flag
for its reviewers: a finding to weigh, never a verdict made for them.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hss_inspect.construction.store import Flag, TaskView
from hss_inspect.report.records import AttemptRecord

REFERENCE, BLIND = "reference", "blind"
ORACLE_TASK, BLIND_TASK = "hss_inspect/hss_oracle", "hss_inspect/hss_blind"


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
