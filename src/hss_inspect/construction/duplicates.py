"""Near-duplicate media, found when a build is made: items of the pool that nearly repeat
each other, and items that nearly repeat one of a reference release's (ScaleAI/HSS by
default, or any dataset the task loads), by the rules of `media_match`. A task made on an
item the public release already holds is not a private task.

Near-duplicates are kept as groups (`groups`): the pool's items and the release's tasks
are joined as pairs are found, a pair already in one group is not compared, and each item
keeps its PAIRS_KEPT nearest pairs (`duplicates`) beside its group (`duplicate_groups`).
A pool of look-alikes so costs a check or so per item, and its marks stay a few per item.
What is found is shown beside the pool's items on an author's home (read for the items
shown only) and on an item's page, with its group; `build export` refuses an admitted
task whose item's group holds a task of the release. The release's questions and
references are kept (`reference_texts`) for `text_repeats`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hss_inspect.construction import store
from hss_inspect.construction.groups import MAX_FAILED, Groups
from hss_inspect.construction.media_match import Match, find_matches
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
# The pairs each item keeps, nearest first (its group holds the rest), and the members of
# its group its note names.
PAIRS_KEPT = 5
MEMBERS_NAMED = 3


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
    release = [] if isinstance(reference, str) else reference[2]
    released = [(release_key(task_id), look) for task_id, look in release]
    groups = Groups([key for key, _ in looks] + [key for key, _ in released])
    within = find_matches(looks, looks, same=True, groups=groups)
    found = [Duplicate(m.item, POOL, m.other, paths[m.other], m.distance, m.how) for m in within]
    found += [Duplicate(m.other, POOL, m.item, paths[m.item], m.distance, m.how) for m in within]
    problems = [f"  not compared: {problem}" for problem in looked if isinstance(problem, str)]
    if isinstance(reference, str):
        release_lines = [reference]
    else:
        release_lines = against_release(build, looks, released, reference, groups, found)
    store_duplicates(build, nearest_kept(found))
    store_groups(build, groups, paths, [] if isinstance(reference, str) else reference[1])
    return group_lines(build, groups) + problems + release_lines


def release_key(task_id: str) -> str:
    """A release task's key among the pool's items (which it may share an id with)."""
    return f"{RELEASE}/{task_id}"


def is_release_key(key: str) -> bool:
    return key.startswith(f"{RELEASE}/")


def release_task(key: str) -> str:
    """The task id of a release task's key."""
    return key.removeprefix(f"{RELEASE}/")


def against_release(
    build: Path,
    looks: Sequence[tuple[str, Look]],
    released: Sequence[tuple[str, Look]],
    reference: Reference,
    groups: Groups,
    found: list[Duplicate],
) -> list[str]:
    """The pool's near-duplicates of the release's media (`released`, by their keys), added
    to `found`; its texts kept for `text_repeats`; the lines to print."""
    name, rows, release_looks, problems = reference
    matches = find_matches(looks, released, same=False, groups=groups)
    media = {row.task_id: row.media_path for row in rows}
    found += [release_duplicate(m, media) for m in matches]
    store_reference(build, name, rows)
    repeating = pool_members_with_release(groups)
    lines = [
        f"near-duplicates of {name}: {repeating} pool item(s) repeat one of its "
        f"{len(release_looks)} media file(s) compared"
    ]
    return lines + [f"  not compared: {problem}" for problem in problems]


def release_duplicate(match: Match, media: dict[str, str]) -> Duplicate:
    task_id = release_task(match.other)
    return Duplicate(match.item, RELEASE, task_id, media[task_id], match.distance, match.how)


def pool_members_with_release(groups: Groups) -> int:
    """The pool items whose group holds a task of the release."""
    return sum(
        sum(not is_release_key(key) for key in keys)
        for keys in groups.members()
        if any(is_release_key(key) for key in keys)
    )


def nearest_kept(found: Sequence[Duplicate]) -> list[Duplicate]:
    """Each item's PAIRS_KEPT nearest near-duplicates (its group holds the others)."""
    by_item: dict[str, list[Duplicate]] = defaultdict(list)
    for duplicate in found:
        by_item[duplicate.item_id].append(duplicate)
    return [d for kept in by_item.values()
            for d in sorted(kept, key=lambda d: d.distance)[:PAIRS_KEPT]]  # fmt: skip


def group_lines(build: Path, groups: Groups) -> list[str]:
    """What the groups of the pool's items come to, in a line or two."""
    sizes = [sum(not is_release_key(key) for key in keys) for keys in groups.members()]
    sizes = [size for size in sizes if size > 1]
    if not sizes:
        lines = ["near-duplicates within the pool: none"]
    else:
        lines = [
            f"near-duplicates within the pool: {sum(sizes):,} item(s) fall in {len(sizes):,} "
            f"group(s) of look-alikes; the largest holds {max(sizes):,} (each group's items "
            f"are listed on their pages: `hss-inspect build serve {build}`)"
        ]
    if groups.given_up:
        lines.append(
            f"  {groups.given_up:,} item(s) looked like more than {MAX_FAILED} others that "
            "proved no copies: their other look-alikes were not checked"
        )
    return lines


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


def store_groups(
    build: Path, groups: Groups, paths: dict[str, str], rows: Sequence[TaskRow]
) -> None:
    """Each member of each group of more than one, numbered from the largest."""
    media = {release_key(row.task_id): row.media_path for row in rows}
    members = []
    for number, keys in enumerate(groups.members(), start=1):
        for key in keys:
            against, member = (RELEASE, release_task(key)) if key in media else (POOL, key)
            members.append((against, member, number, media.get(key) or paths[key]))
    with store.connect(build) as db:
        db.executemany("INSERT OR REPLACE INTO duplicate_groups VALUES (?, ?, ?, ?)", members)


def store_reference(build: Path, name: str, rows: Sequence[TaskRow]) -> None:
    with store.connect(build) as db:
        db.execute("INSERT OR REPLACE INTO build VALUES ('against', ?)", (json.dumps(name),))
        db.executemany(
            "INSERT OR REPLACE INTO reference_texts VALUES (?, ?, ?)",
            [(row.task_id, field, text) for row in rows
             for field, text in ((QUESTION, row.prompt), (REFERENCE, row.golden_response))],
        )  # fmt: skip


def duplicates_of(build: Path, item_ids: Sequence[str] | None = None) -> dict[str, list[Duplicate]]:
    """Each pool item's near-duplicates kept, nearest first (of `item_ids` only, if given)."""
    found: dict[str, list[Duplicate]] = defaultdict(list)
    where, ids = _among("item_id", item_ids)
    order = "ORDER BY item_id, distance, against, other"
    for row in query(build, f"SELECT * FROM duplicates {where} {order}", ids):
        found[row[0]].append(Duplicate(*row))
    return dict(found)


def _among(column: str, ids: Sequence[str] | None) -> tuple[str, tuple[str, ...]]:
    """A WHERE clause keeping the rows whose `column` is one of `ids` (all: None)."""
    if ids is None:
        return "", ()
    return f"WHERE {column} IN ({', '.join('?' * len(ids))})", tuple(ids)


@dataclass(frozen=True)
class Group:
    """A group of near-duplicates: its number, size, and its first few members (against
    the pool or the release, the member, its media file) with the release's always."""

    number: int
    size: int
    named: tuple[tuple[str, str, str], ...]

    def release_members(self) -> list[tuple[str, str, str]]:
        return [m for m in self.named if m[0] == RELEASE]


def groups_of(build: Path, item_ids: Sequence[str]) -> dict[str, Group]:
    """The group of each of the pool items `item_ids` that is in one."""
    where, ids = _among("member", item_ids)
    numbers = dict(query(
        build, f"SELECT member, grp FROM duplicate_groups {where} AND against = ?", (*ids, POOL)
    ))  # fmt: skip
    found = {number: group_of(build, number) for number in set(numbers.values())}
    return {item_id: found[number] for item_id, number in numbers.items()}


def group_of(build: Path, number: int) -> Group:
    ((size,),) = query(build, "SELECT COUNT(*) FROM duplicate_groups WHERE grp = ?", (number,))
    named = query(
        build,
        "SELECT against, member, path FROM duplicate_groups WHERE grp = ? ORDER BY "
        "against = ?, rowid LIMIT ?",
        (number, POOL, MEMBERS_NAMED + 1),
    )
    return Group(number, int(size), tuple((a, m, p) for a, m, p in named))


# ---- what people see, and the export ------------------------------------------------------


def item_note(item_id: str, found: Sequence[Duplicate], group: Group | None = None) -> str:
    """One line for an item's near-duplicates and its group ('' when none)."""
    parts = []
    if found:
        shown = "; ".join(d.describe() for d in found[:3])
        more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
        parts.append(f"Near-duplicate: {shown}{more}.")
    if group is not None:
        parts.append(group_note(item_id, group))
    return " ".join(parts)


def group_note(item_id: str, group: Group) -> str:
    """Which group the item is in, and a few of its other members."""
    others = [m for m in group.named if m[:2] != (POOL, item_id)][:MEMBERS_NAMED]
    names = [f"pool item {member}" if against == POOL else
             f"the reference release's task {member} ({path})"
             for against, member, path in others]  # fmt: skip
    rest = group.size - 1 - len(names)
    more = f" and {rest:,} more" if rest > 0 else ""
    return (
        f"In near-duplicate group {group.number} ({group.size:,} members), with "
        f"{', '.join(names)}{more}."
    )


def item_notes(build: Path, item_ids: Sequence[str]) -> dict[str, str]:
    """The line shown beside each of the pool items `item_ids` that has near-duplicates:
    their marks alone are read, not the pool's."""
    found, groups = duplicates_of(build, item_ids), groups_of(build, item_ids)
    return {
        item_id: item_note(item_id, found.get(item_id, ()), groups.get(item_id))
        for item_id in item_ids
        if item_id in found or item_id in groups
    }


def refuse_release_duplicates(build: Path, tasks: Sequence[tuple[TaskView, PoolItem]]) -> None:
    """Stop the export when an admitted task's item repeats the reference release's, or is
    in a group with a task of it: one line naming the first, the match and the way past."""
    item_ids = [item.item_id for _, item in tasks]
    found, groups = duplicates_of(build, item_ids), groups_of(build, item_ids)
    hits = []
    for view, item in tasks:
        own = [d for d in found.get(item.item_id, ()) if d.against == RELEASE]
        group = groups.get(item.item_id)
        if own:
            hits.append((view.task_id, item.item_id, f"is a {own[0].describe()}"))
        elif group is not None and group.release_members():
            _, task, path = group.release_members()[0]
            what = f"is in near-duplicate group {group.number} with the reference release's"
            hits.append((view.task_id, item.item_id, f"{what} task {task} ({path})"))
    if not hits:
        return
    task_id, item_id, what = hits[0]
    more = f" (and {len(hits) - 1} more task(s))" if len(hits) > 1 else ""
    raise InputError(
        f"task {task_id}: its item {item_id} {what}{more}; the release would not be "
        f"private: drop the task, or export anyway with {ALLOW_FLAG}"
    )
