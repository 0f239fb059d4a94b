"""Which runs measured the same thing: the one rule every table, publisher and export asks.

Two runs are comparable when they read the same release, the same fingerprint for every
task both ran (`data.fingerprints`), under task versions whose results are comparable: the
same N of Inspect Evals' `N-X`. A log written before logs recorded fingerprints (2-H) is
known only by its dataset and commit, and is comparable with another such log, or a newer
one, of the same dataset at the same commit.

Runs are grouped into releases, one leaderboard each, so that no table ranks runs that
measured different things; what divides two groups is said in one line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hss_inspect.core.errors import InputError
from hss_inspect.core.settings import DEFAULT_DATASET
from hss_inspect.data.fingerprints import (
    Change,
    ReleaseDiff,
    TaskPrint,
    change_of,
    diff_prints,
    differing_shared,
    short_digest,
)
from hss_inspect.providers.paper_models import paper_release
from hss_inspect.report.log_header import LogInfo

# How many of the differing tasks a line names.
NAMED = 3


def version_n(info: LogInfo) -> str:
    """N of the run's task version: the package's own `N-X` where recorded, else the
    version Inspect recorded for the task."""
    if info.full_version:
        return info.full_version.split("-")[0]
    return info.comparable_version


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


def _differing_line(
    a: dict[str, TaskPrint], b: dict[str, TaskPrint], differing: Sequence[str]
) -> str:
    kinds = Counter(change_of(a[t].differing_parts(b[t])) for t in differing)
    said = ", ".join(f"{kinds[c]} to {c.value}" for c in Change if kinds[c])
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
    """The logs grouped by what they measured, each in the first release that admits it."""
    found: list[Release] = []
    for info in infos:
        home = next((r for r in found if r.admits(info)), None)
        if home is None:
            home = Release()
            found.append(home)
        home.add(info)
    return found


def release_diff_line(older: Release, newer: Release) -> str:
    """How two groups differ, and how to bring the runs of the one to the other."""
    if not older.prints or not newer.prints:
        return f"{newer.heading} against {older.heading}: {_reason(older, newer)}."
    if version_n(older.logs[0]) != version_n(newer.logs[0]):
        return f"{newer.heading} against {older.heading}: {_reason(older, newer)}."
    diff = diff_prints(older.prints, newer.prints)
    return (
        f"{newer.heading} against {older.heading}: {diff_summary(diff)}; bring a run across "
        f"with `hss-inspect release carry LOG {where_read(newer.logs[0])}`."
    )


def _reason(older: Release, newer: Release) -> str:
    return difference(older.logs[0], newer.logs[0]) or "they differ"


def diff_summary(diff: ReleaseDiff) -> str:
    """A diff in one clause: tasks added, removed, and changed by what they cost."""
    changed = ", ".join(f"{len(diff.of(c))} to {c.value}" for c in Change if diff.of(c))
    return (
        f"{len(diff.added)} task(s) added, {len(diff.removed)} removed, "
        f"{len(diff.changed)} changed" + (f" ({changed})" if changed else "")
    )


# What each kind of change means for the results measured on the older release.
CONSEQUENCE = {
    Change.ANSWER_AGAIN: "the model answers again (release carry runs it)",
    Change.GRADE_AGAIN: "the stored answers are graded again (release carry re-grades them)",
    Change.RECOUNT: "the tables are counted again; nothing is sent",
}


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
    side by side), with one line naming two that differ and how."""
    groups = releases_of(infos)
    if len(groups) < 2:
        return
    a, b = groups[0].logs[0], groups[1].logs[0]
    raise InputError(
        f"{what} takes runs of one release: {a.log} and {b.log} differ ({difference(a, b)}); "
        "give the logs of one release, or carry the others to it (hss-inspect release carry)"
    )


def paper_comparable(release: Release) -> str | None:
    """Why the paper's published rows may not stand beside this release's runs (None: they
    may): they were measured on ScaleAI/HSS at its release, under task version N the
    package keeps comparable with the paper (Sec. 2.4; the reproducibility statement)."""
    paper = paper_release()
    first = release.logs[0]
    if first.dataset != DEFAULT_DATASET:
        return f"the runs read {where_read(first)}, not the paper's {DEFAULT_DATASET}"
    if paper.commit is not None and first.dataset_revision != paper.commit:
        return f"the runs read {where_read(first)}, not its release {paper.commit[:12]}"
    if version_n(first) != str(paper.task_version):
        return (
            f"the runs are of task version {first.full_version or version_n(first)}, not "
            f"comparable with the paper's (N = {paper.task_version})"
        )
    return None
