"""Versions of a built split: an admitted task reopened for an erratum, a task retired, new
tasks authored into a later version, and each export recorded as a version.

- A reopened task goes back to its author with the erratum's note, as after an Edit; its new
  revision goes through the review rounds again (with blind answers where the build has
  them), and is admitted again or dropped (Sec. 2.4: "the revision re-enters the pipeline
  from the beginning").
- A retired task stays admitted in the build's history (the funnel counts it as the paper
  does) but leaves every later export, with its reason: an erratum, exposure, or other.
- `build export --version V` records the export: its tasks' fingerprints (`data.fingerprints`,
  of the files as released) and its funnel. The next export's changelog is the difference of
  the two fingerprint sets, so `hss-inspect release diff` between two exported folders gives
  the same classification, by construction.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hss_inspect.construction.build_file import connect, reading
from hss_inspect.construction.funnel import Funnel
from hss_inspect.core.errors import InputError
from hss_inspect.data.fingerprints import (
    CONSEQUENCE,
    ReleaseDiff,
    TaskPrint,
    diff_prints,
    prints_of_record,
    prints_record,
)

RETIRE_REASONS = ("erratum", "exposure", "other")


# ---- reopening and retiring ------------------------------------------------------------------


def _admitted_task(db: Any, task_id: str, doing: str) -> int:
    """The admitted, unretired task's revision, or an InputError saying why not."""
    row = db.execute("SELECT state, revision FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
    if row is None:
        raise InputError(f"task {task_id}: no such task in the build (build status lists them)")
    retired = db.execute("SELECT reason FROM retirements WHERE task_id = ?", (task_id,)).fetchone()
    if retired is not None:
        raise InputError(
            f"task {task_id}: retired already ({retired[0]}); a retired task stays out of every "
            "later version"
        )
    if row[0] != "admitted":
        raise InputError(
            f"task {task_id}: {row[0]}, not admitted; only an admitted task is {doing}"
        )
    return int(row[1])


def reopen(path: Path, task_id: str, note: str, now: float | None = None) -> None:
    """Send an admitted task back to its author for an erratum, with the note saying what is
    wrong; it goes through the review rounds again from its next revision."""
    if not note.strip():
        raise InputError(f"task {task_id}: say what is wrong (--note) for its author to mend")
    with connect(path) as db:
        revision = _admitted_task(db, task_id, "reopened")
        db.execute(
            "INSERT INTO reopenings VALUES (?, ?, ?, ?)",
            (task_id, revision, note.strip(), time.time() if now is None else now),
        )
        db.execute(
            "UPDATE tasks SET state = 'returned', round = NULL WHERE task_id = ?", (task_id,)
        )


def retire(path: Path, task_id: str, reason: str, note: str, now: float | None = None) -> None:
    """Leave an admitted task out of every later export, for `reason` (RETIRE_REASONS)."""
    if reason not in RETIRE_REASONS:
        raise InputError(f"--reason {reason!r}: give one of {', '.join(RETIRE_REASONS)}")
    with connect(path) as db:
        _admitted_task(db, task_id, "retired")
        db.execute(
            "INSERT INTO retirements VALUES (?, ?, ?, ?)",
            (task_id, reason, note.strip(), time.time() if now is None else now),
        )


def retirements(path: Path) -> dict[str, tuple[str, str]]:
    """Each retired task's reason and note."""
    with reading(path) as db:
        rows = db.execute("SELECT task_id, reason, note FROM retirements").fetchall()
    return {task_id: (reason, note) for task_id, reason, note in rows}


def erratum_notes(path: Path, since: float = 0.0) -> dict[str, str]:
    """Each task's latest erratum note of those given after `since` (the last export)."""
    with reading(path) as db:
        rows = db.execute(
            "SELECT task_id, note FROM reopenings WHERE reopened_at > ? ORDER BY reopened_at",
            (since,),
        ).fetchall()
    return dict(rows)


def check_no_erratum_pending(path: Path) -> None:
    """Refuse an export while a task reopened for an erratum is still in revision or review:
    the version would drop it, and the next add it as new, as if its answers were lost."""
    with reading(path) as db:
        pending = [
            task_id
            for (task_id,) in db.execute(
                "SELECT DISTINCT o.task_id FROM reopenings o JOIN tasks t USING (task_id) "
                "WHERE t.state NOT IN ('admitted', 'dropped') ORDER BY o.task_id"
            )
        ]
    if pending:
        raise InputError(
            f"task(s) {', '.join(pending)} reopened for an erratum are not through review yet; "
            "finish their rounds (`hss-inspect build status`) or retire them, then export"
        )


# ---- exports as versions ---------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """One export of the build: its version, when, its tasks' fingerprints and its funnel."""

    version: str
    exported_at: float
    prints: dict[str, TaskPrint]
    funnel: dict[str, Any]


def versions(path: Path) -> list[Version]:
    """The build's exports, the first first."""
    with reading(path) as db:
        rows = db.execute(
            "SELECT version, exported_at, prints, funnel FROM exports ORDER BY exported_at"
        ).fetchall()
    return [
        Version(version, at, prints_of_record(json.loads(prints)) or {}, json.loads(funnel))
        for version, at, prints, funnel in rows
    ]


def record_export(
    path: Path,
    version: str,
    folder: Path,
    prints: Mapping[str, TaskPrint],
    funnel: Mapping[str, Any],
    now: float | None = None,
) -> None:
    with connect(path) as db:
        db.execute(
            "INSERT INTO exports VALUES (?, ?, ?, ?, ?)",
            (
                version,
                time.time() if now is None else now,
                str(folder),
                json.dumps(prints_record(prints)),
                json.dumps(funnel),
            ),
        )


@dataclass(frozen=True)
class Changelog:
    """A version against the one before: the release diff, with each retired task's reason
    and each reopened task's erratum note."""

    version: str
    previous: str | None
    diff: ReleaseDiff
    retired: dict[str, tuple[str, str]]
    errata: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "previous": self.previous,
            "added": list(self.diff.added),
            "retired": {
                t: self.retired.get(t, ("dropped when reopened", ""))[0] for t in self.diff.removed
            },
            "changed": {c.task_id: c.change.value for c in self.diff.changed},
        }


def changelog(
    version: str,
    before: Version | None,
    prints: Mapping[str, TaskPrint],
    retired: Mapping[str, tuple[str, str]],
    errata: Mapping[str, str],
) -> Changelog:
    diff = diff_prints(before.prints if before else {}, prints)
    return Changelog(
        version,
        None if before is None else before.version,
        diff,
        {t: retired[t] for t in diff.removed if t in retired},
        {c.task_id: errata[c.task_id] for c in diff.changed if c.task_id in errata},
    )


def changelog_lines(log: Changelog) -> list[str]:
    """The card's lines for one version: what it adds, retires and changes, and how."""
    if log.previous is None:
        return [f"Version {log.version}: the first, {len(log.diff.added)} task(s)."]
    lines = [
        f"Version {log.version}, against {log.previous}: {len(log.diff.added)} task(s) added, "
        f"{len(log.diff.removed)} retired, {len(log.diff.changed)} changed."
    ]
    lines += [f"- added: {task_id}" for task_id in log.diff.added]
    for task_id in log.diff.removed:
        reason, note = log.retired.get(task_id, ("dropped when reopened", ""))
        lines.append(f"- retired: {task_id} ({reason}{': ' + note if note else ''})")
    for change in log.diff.changed:
        erratum = f"; erratum: {log.errata[change.task_id]}" if change.task_id in log.errata else ""
        lines.append(f"- changed: {change.task_id} ({CONSEQUENCE[change.change]}{erratum})")
    return lines


def funnel_record(found: Funnel, released: int, retired: int) -> dict[str, Any]:
    """A funnel as a version keeps it: authored, then the survivors of each round; the
    admitted, the retired among them, and the tasks the version released."""
    return {
        "stages": [found.authored, *(r.survivors for r in found.rounds)],
        "admitted": found.admitted,
        "retired": retired,
        "released": released,
    }


def next_version(path: Path, given: str | None) -> str:
    """The version an export is: the one given, else the last numbered one plus one (1 for
    the first); a version exported already is refused."""
    earlier = versions(path)
    if given is None:
        last = earlier[-1].version if earlier else "0"
        if not last.isdigit():
            raise InputError(f"the last export is version {last}; name this one with --version")
        given = str(int(last) + 1)
    if any(found.version == given for found in earlier):
        raise InputError(f"--version {given}: exported already; give the next version another name")
    return given


def funnel_line(version: str, funnel: Mapping[str, Any]) -> str:
    """One version's funnel in one line: authored, after each round; admitted, retired,
    released."""
    stages = " -> ".join(str(n) for n in funnel.get("stages", []))
    counts = f"{funnel.get('admitted', 0)} admitted, {funnel.get('retired', 0)} retired"
    return f"Version {version}: {stages} ({counts}: {funnel.get('released', 0)} released)"


def versions_lines(
    earlier: Sequence[Version], log: Changelog, funnel: Mapping[str, Any]
) -> list[str]:
    """The card's section on versions: this one's changelog, then each version's funnel."""
    funnels = [funnel_line(v.version, v.funnel) for v in earlier]
    funnels.append(funnel_line(log.version, funnel))
    return [
        *changelog_lines(log),
        "",
        "The funnel of each version (authored -> after each round):",
        "",
        *(f"- {line}" for line in funnels),
    ]
