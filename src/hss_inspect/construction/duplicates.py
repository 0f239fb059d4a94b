"""Near-duplicate media, found when a build is made: items of the pool that nearly repeat
each other, and items that nearly repeat one of a reference release's (ScaleAI/HSS by
default, or any dataset the task loads), by the rules of `media_match`. A task made on an
item the public release already holds is not a private task. What is found is stored in
the build (`duplicates`), shown on the pool list and the item's authoring page, and
`build export` refuses an admitted task whose item repeats the release's. The release's
questions and references are kept (`reference_texts`) for `text_repeats`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hss_inspect.construction import store
from hss_inspect.construction.media_match import find_matches
from hss_inspect.construction.pool import PoolItem
from hss_inspect.construction.store import TaskView
from hss_inspect.construction.text_repeats import QUESTION, REFERENCE
from hss_inspect.core.errors import InputError, SetupError
from hss_inspect.core.settings import DEFAULT_DATASET
from hss_inspect.data.rows import DatasetError, TaskRow
from hss_inspect.media.fingerprint import Look, looks_of
from hss_inspect.web.store import rows as query

POOL, RELEASE = "pool", "reference"
NO_RELEASE = "none"
ALLOW_FLAG = "--allow-duplicates"


# A reference release read for the check: its name, rows, the looks of its media (by task
# id) and the lines saying which media could not be read.
Reference = tuple[str, list[TaskRow], list[tuple[str, Look]], list[str]]


@dataclass(frozen=True)
class Duplicate:
    """A pool item that nearly repeats `other`: another pool item, or a task of the
    reference release (`against`), whose media file is `other_path`."""

    item_id: str
    against: str
    other: str
    other_path: str
    distance: float
    how: str

    def describe(self) -> str:
        if self.against == POOL:
            return f"{self.how} of pool item {self.other} (distance {self.distance:.2f})"
        return (
            f"{self.how} of the reference release's task {self.other} ({self.other_path}, "
            f"distance {self.distance:.2f})"
        )


# ---- the check, when a build is made ----------------------------------------------------


def check_new_build(
    build: Path, pool: Path, items: Sequence[PoolItem], reference: Reference | str, jobs: int
) -> list[str]:
    """Compare the pool with itself and with the reference release (`open_reference`:
    the release, or the line saying why it is not compared), store what is found; the
    lines to print."""
    looked = looks_of([(pool / item.path, item.media_type) for item in items], jobs)
    looks = [(i.item_id, k) for i, k in zip(items, looked, strict=True) if isinstance(k, Look)]
    paths = {item.item_id: item.path for item in items}
    within = find_matches(looks, looks, same=True)
    found = [Duplicate(m.item, POOL, m.other, paths[m.other], m.distance, m.how) for m in within]
    found += [Duplicate(m.other, POOL, m.item, paths[m.item], m.distance, m.how) for m in within]
    lines = [f"near-duplicates within the pool: {len(within)} pair(s) of items"]
    lines += [f"  not compared: {problem}" for problem in looked if isinstance(problem, str)]
    if isinstance(reference, str):
        lines.append(reference)
    else:
        lines += against_release(build, looks, reference, found)
    store_duplicates(build, found)
    return lines


def against_release(
    build: Path, looks: Sequence[tuple[str, Look]], reference: Reference, found: list[Duplicate]
) -> list[str]:
    """The pool's near-duplicates of the release's media, added to `found`; its texts kept
    for `text_repeats`; the lines to print."""
    name, rows, release_looks, problems = reference
    matches = find_matches(looks, release_looks, same=False)
    media = {row.task_id: row.media_path for row in rows}
    found += [Duplicate(m.item, RELEASE, m.other, media[m.other], m.distance, m.how)
              for m in matches]  # fmt: skip
    store_reference(build, name, rows)
    lines = [
        f"near-duplicates of {name}: {len({m.item for m in matches})} pool item(s) repeat "
        f"one of its {len(release_looks)} media file(s) compared"
    ]
    return lines + [f"  not compared: {problem}" for problem in problems]


def open_reference(against: str | None, revision: str, jobs: int) -> Reference | str:
    """The release's name, rows and media looks (keyed by task id) and what could not be
    read; or, for the default release out of reach, the one line saying the check of the
    pool against it was skipped. A release named by `--against` that cannot be read stops
    the command."""
    from hss_inspect.data.release import open_release

    dataset = against or DEFAULT_DATASET
    if dataset == NO_RELEASE:
        return "near-duplicates of a reference release: not checked (--against none)"
    try:
        release = open_release(dataset, revision)
        rows = release.read_rows()
    except (SetupError, DatasetError, OSError) as exc:
        if against is not None:
            raise InputError(f"--against {dataset}: {first_line(exc)}") from None
        return (
            f"near-duplicates of {dataset}: not checked, the release was not reachable (the "
            f"hub is out of reach, or HF_HUB_OFFLINE=1 and it is not cached); to check the "
            "pool against it, make the build again online or with --against DIR (a local "
            "copy of the release), or say --against none"
        )
    name = release.dataset + (f"@{release.revision[:12]}" if release.revision else "")
    files: list[tuple[Path, str]] = []
    problems: list[str] = []
    kept: list[TaskRow] = []
    for row in rows:
        try:
            files.append((release.media_file(row.media_path, row.task_id), row.media_type))
            kept.append(row)
        except OSError as exc:
            problems.append(first_line(exc))
    looked = looks_of(files, jobs)
    looks = [(r.task_id, k) for r, k in zip(kept, looked, strict=True) if isinstance(k, Look)]
    problems += [problem for problem in looked if isinstance(problem, str)]
    return name, rows, looks, problems


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# ---- the store ----------------------------------------------------------------------------


def store_duplicates(build: Path, found: Sequence[Duplicate]) -> None:
    with store.connect(build) as db:
        db.executemany(
            "INSERT OR REPLACE INTO duplicates VALUES (?, ?, ?, ?, ?, ?)",
            [(d.item_id, d.against, d.other, d.other_path, d.distance, d.how) for d in found],
        )


def store_reference(build: Path, name: str, rows: Sequence[TaskRow]) -> None:
    with store.connect(build) as db:
        db.execute("INSERT OR REPLACE INTO build VALUES ('against', ?)", (json.dumps(name),))
        db.executemany(
            "INSERT OR REPLACE INTO reference_texts VALUES (?, ?, ?)",
            [(row.task_id, field, text) for row in rows
             for field, text in ((QUESTION, row.prompt), (REFERENCE, row.golden_response))],
        )  # fmt: skip


def duplicates_of(build: Path) -> dict[str, list[Duplicate]]:
    """Each pool item's near-duplicates, nearest first."""
    found: dict[str, list[Duplicate]] = defaultdict(list)
    for row in query(build, "SELECT * FROM duplicates ORDER BY item_id, distance, against, other"):
        found[row[0]].append(Duplicate(*row))
    return dict(found)


# ---- what people see, and the export ------------------------------------------------------


def item_note(found: Sequence[Duplicate]) -> str:
    """One line for an item's near-duplicates ('' when none)."""
    if not found:
        return ""
    shown = "; ".join(d.describe() for d in found[:3])
    more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
    return f"Near-duplicate: {shown}{more}."


def item_notes(build: Path) -> dict[str, str]:
    """The line shown beside each pool item that has near-duplicates."""
    return {item_id: item_note(found) for item_id, found in duplicates_of(build).items()}


def refuse_release_duplicates(build: Path, tasks: Sequence[tuple[TaskView, PoolItem]]) -> None:
    """Stop the export when an admitted task's item repeats the reference release's: one
    line naming the first, the match and the way past."""
    found = duplicates_of(build)
    hits = [(view.task_id, d) for view, item in tasks for d in found.get(item.item_id, ())
            if d.against == RELEASE]  # fmt: skip
    if not hits:
        return
    task_id, first = hits[0]
    others = len({t for t, _ in hits}) - 1
    more = f" (and {others} more task(s))" if others else ""
    raise InputError(
        f"task {task_id}: its item {first.item_id} is a {first.describe()}{more}; the "
        f"release would not be private: drop the task, or export anyway with {ALLOW_FLAG}"
    )
