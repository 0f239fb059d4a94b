"""Which runs measured the same thing: the one rule every table, publisher and export asks.

Two runs are comparable when they read the same release under task versions whose results
are comparable (the same N of Inspect Evals' `N-X`): the same fingerprint for every task
both ran (`data.fingerprints`), from one release, known by the digest of its rows or, where
that differs, by the dataset's name (an erratum of one dataset leaves the tasks it did not
touch comparable). A log written before logs recorded fingerprints (2-H) is known only by
its dataset and commit, and is comparable with another log of the same dataset at the same
commit.

Runs are grouped into releases, one leaderboard each, so that no table ranks runs that
measured different things, the oldest release first; what divides two groups is said in one
line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hss_inspect.core.config import comparable_part
from hss_inspect.core.errors import InputError
from hss_inspect.core.settings import DEFAULT_DATASET
from hss_inspect.data.fingerprints import (
    CONSEQUENCE,
    Change,
    ReleaseDiff,
    TaskPrint,
    change_of,
    counted,
    diff_prints,
    differing_shared,
    short_digest,
)
from hss_inspect.providers.paper_models import paper_release
from hss_inspect.report.log_header import LogInfo

# How many of the differing tasks a line names.
NAMED = 3
CARRY_REMEDY = "carry the others to it (hss-inspect release carry)"


def version_n(info: LogInfo) -> str:
    """N of the run's task version: the package's own `N-X` where recorded, else the
    version Inspect recorded for the task."""
    return comparable_part(info.full_version) if info.full_version else info.comparable_version


def where_read(info: LogInfo) -> str:
    """The copy a run read, as a person names it: the hub id at its commit, or the path."""
    dataset = info.dataset or info.source or "an unnamed dataset"
    if info.dataset_revision:
        return f"{dataset}@{info.dataset_revision[:12]}"
    return info.source or dataset


def difference(a: LogInfo, b: LogInfo) -> str | None:
    """Why the runs of two logs are not comparable, in a few words; None when they are."""
    if version_n(a) != version_n(b):
        return (
            f"task version {a.full_version or version_n(a)} against "
            f"{b.full_version or version_n(b)} (a different N: results not comparable)"
        )
    if a.task_prints is not None and b.task_prints is not None:
        if not _one_release(a, b):
            return f"{where_read(a)} against {where_read(b)}: two datasets"
        differing = differing_shared(a.task_prints, b.task_prints)
        return None if not differing else _differing_line(a.task_prints, b.task_prints, differing)
    # a log without fingerprints is known by its dataset and commit (or path) only
    if (a.dataset, a.dataset_revision) == (b.dataset, b.dataset_revision) and (
        a.dataset_revision is not None or a.source == b.source
    ):
        return None
    unknown = a.task_prints is None or b.task_prints is None
    note = "; one records no task fingerprints (written before task version 2-H)"
    return f"{where_read(a)} against {where_read(b)}" + (note if unknown else "")


def _one_release(a: LogInfo, b: LogInfo) -> bool:
    """Whether two runs read one release, or two of one dataset: the same rows, or the
    same dataset's name (its tasks then compared one by one)."""
    same_rows = a.release_rows is not None and a.release_rows == b.release_rows
    return same_rows or (a.dataset is not None and a.dataset == b.dataset)


def _differing_line(
    a: dict[str, TaskPrint], b: dict[str, TaskPrint], differing: Sequence[str]
) -> str:
    said = counted(change_of(a[t].differing_parts(b[t])) or Change.RECOUNT for t in differing)
    named = ", ".join(differing[:NAMED]) + (", ..." if len(differing) > NAMED else "")
    return f"{len(differing)} shared task(s) differ ({said}: {named})"


@dataclass
class Release:
    """The logs that read one release under one N, and the fingerprints they recorded."""

    logs: list[LogInfo] = field(default_factory=list)
    prints: dict[str, TaskPrint] = field(default_factory=dict)

    def admits(self, info: LogInfo) -> bool:
        return all(difference(info, member) is None for member in self.logs)

    def add(self, info: LogInfo) -> None:
        self.logs.append(info)
        for task_id, found in (info.task_prints or {}).items():
            self.prints.setdefault(task_id, found)

    @property
    def paths(self) -> set[str]:
        return {info.log for info in self.logs}

    @property
    def heading(self) -> str:
        """What the release's runs measured: dataset and commit (or path), tasks, version."""
        first = self.logs[0]
        versions = sorted({info.full_version or version_n(info) for info in self.logs})
        tasks = len(self.prints) or max(_tasks_run(info) for info in self.logs)
        told = f", fingerprint {self.digest}" if self.prints else ""
        return f"{where_read(first)}: {tasks} task(s), task version {', '.join(versions)}{told}"

    @property
    def digest(self) -> str:
        """A short digest of the release's fingerprints: what tells apart two releases read
        from one place (a local copy edited between runs)."""
        encoded = sorted(f"{task_id}={found.encoded()}" for task_id, found in self.prints.items())
        return short_digest(encoded)[:8]


def _tasks_run(info: LogInfo) -> int:
    return info.invocation.tasks if info.invocation is not None else 0


def releases_of(infos: Sequence[LogInfo]) -> list[Release]:
    """The logs grouped by what they measured, the oldest first: each, in the order the runs
    were made, joins the first release that admits it (the order the logs are named in does
    not matter)."""
    found: list[Release] = []
    for info in sorted(infos, key=lambda i: (i.created, i.log)):
        home = next((r for r in found if r.admits(info)), None)
        if home is None:
            home = Release()
            found.append(home)
        home.add(info)
    return found


def release_diff_line(older: Release, newer: Release) -> str:
    """How a later group differs from an earlier one, and how to bring the earlier's runs
    across when they can be."""
    first, later = older.logs[0], newer.logs[0]
    said = f"{newer.heading} against {older.heading}"
    if not older.prints or not newer.prints or version_n(first) != version_n(later):
        return f"{said}: {difference(first, later) or 'they differ'}."
    if not _one_release(first, later):
        return f"{said}: two datasets."
    diff = diff_prints(older.prints, newer.prints)
    return (
        f"{said}: {diff_summary(diff)}; bring a run across with "
        f"`hss-inspect release carry LOG {where_read(later)}`."
    )


def diff_summary(diff: ReleaseDiff) -> str:
    """A diff in one clause: tasks added, removed, and changed by what they cost."""
    changed = counted(c.change for c in diff.changed)
    return (
        f"{len(diff.added)} task(s) added, {len(diff.removed)} removed, "
        f"{len(diff.changed)} changed" + (f" ({changed})" if changed else "")
    )


def diff_json(diff: ReleaseDiff, old: str, new: str) -> dict[str, Any]:
    """A diff as JSON: each changed task with the parts that differ and what it costs."""
    return {
        "old": old,
        "new": new,
        "summary": diff_summary(diff),
        "added": list(diff.added),
        "removed": list(diff.removed),
        "changed": [
            {"task_id": c.task_id, "change": c.change.value, "parts": list(c.parts)}
            for c in diff.changed
        ],
        "unchanged": len(diff.unchanged),
        "media_unknown": list(diff.unknown_media),
        "consequences": {c.value: CONSEQUENCE[c] for c in Change},
    }


def require_one_release(infos: Sequence[LogInfo], what: str) -> None:
    """Refuse logs of more than one release for `what` (a table or file that would set them
    side by side), with one line naming two that differ, how, and what to do."""
    groups = releases_of(infos)
    if len(groups) < 2:
        return
    a, b = groups[0].logs[0], groups[1].logs[0]
    carriable = version_n(a) == version_n(b) and _one_release(a, b)
    remedy = CARRY_REMEDY if carriable else "run the others again on it"
    raise InputError(
        f"{what} takes runs of one release: {a.log} and {b.log} differ ({difference(a, b)}); "
        f"give the logs of one release, or {remedy}"
    )


def paper_comparable(release: Release) -> str | None:
    """Why the paper's published rows may not stand beside this release's runs (None: they
    may): they were measured on ScaleAI/HSS at its release, under task version N the
    package keeps comparable with the paper (Sec. 2.4; the reproducibility statement).
    Every run of the release must have read it."""
    paper = paper_release()
    for info in release.logs:
        if info.dataset != DEFAULT_DATASET:
            return f"the runs read {where_read(info)}, not the paper's {DEFAULT_DATASET}"
        if paper.commit is not None and info.dataset_revision != paper.commit:
            return f"the runs read {where_read(info)}, not its release {paper.commit[:12]}"
        if version_n(info) != str(paper.task_version):
            return (
                f"the runs are of task version {info.full_version or version_n(info)}, not "
                f"comparable with the paper's (N = {paper.task_version})"
            )
    return None
