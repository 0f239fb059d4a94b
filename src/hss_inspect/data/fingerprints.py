"""What a release asks and grades, task by task: a fingerprint of each task in four parts,
kept apart so that a change between two releases says what it costs the results already
measured.

- `media`: the sha256 of the media file's bytes (None where it could not be known; for a
  file a hub keeps in git rather than LFS, its git blob id, a digest of its bytes too);
- `prompt`: the question the model is asked, and the media type it is asked about (an image
  or a clip's frames are sent, and the judge is told which);
- `answer_key`: the reference answer and the rubric (ids, titles, weights): what the judge
  grades against (Sec. 2.3, Eq. 2);
- `labels`: the domain and subdomain the tables group by (Sec. 2.2).

A change of the media, the prompt or the media type changes what the model was asked: its
answers must be given again. A change of the answer key leaves the answers standing: they are graded
again. A change of the labels changes only the tables. Every log records the fingerprints
of the tasks it ran (`hss_release` in the eval's metadata) and a digest of every row of the
release it chose them from (`rows`: what tells two releases apart when two runs share no
task), so two runs can be checked to have measured the same thing, and a log can be carried
to a later release for the price of what changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from hss_inspect.data.hub import GIT_ID
from hss_inspect.data.rows import TaskRow

# Each part is kept as the first 16 hex digits of its sha256: 64 bits, so a log of 522
# tasks records its release in about 40 kB of its header.
DIGITS = 16
PARTS = ("media", "prompt", "answer_key", "labels")
LABEL_FIELDS = ("domain", "subdomain")  # what a task's labels are
RECORD_KEY = "hss_release"
RECORD_FORMAT = 1
UNKNOWN = "-"
GIT_MARK = "g"  # a media part taken of a hub's git blob id (`hub.GIT_ID`), not a sha256


class Change(Enum):
    """What a task's change between two releases costs the results measured on the older,
    from the dearest: the model answers again, the judge grades again, or only the tables
    are counted again."""

    ANSWER_AGAIN = "answer again"
    GRADE_AGAIN = "grade again"
    RECOUNT = "recount"


# What each change means for results measured on the older release.
CONSEQUENCE = {
    Change.ANSWER_AGAIN: "media, question or media type changed: the model answers again",
    Change.GRADE_AGAIN: "reference or rubric changed: the stored answers are graded again",
    Change.RECOUNT: "domain or subdomain changed: the tables are counted again, nothing is sent",
}

# Which change each part's difference makes, dearest first.
_CHANGE_OF_PART = {
    "media": Change.ANSWER_AGAIN,
    "prompt": Change.ANSWER_AGAIN,
    "answer_key": Change.GRADE_AGAIN,
    "labels": Change.RECOUNT,
}


@dataclass(frozen=True)
class TaskPrint:
    """One task's fingerprint; `media` is None where the media's bytes were not known."""

    media: str | None
    prompt: str
    answer_key: str
    labels: str

    def encoded(self) -> str:
        return ":".join(getattr(self, part) or UNKNOWN for part in PARTS)

    @classmethod
    def decoded(cls, text: str) -> TaskPrint:
        media, prompt, answer_key, labels = text.split(":")
        return cls(None if media == UNKNOWN else media, prompt, answer_key, labels)

    def differing_parts(self, other: TaskPrint) -> tuple[str, ...]:
        """The parts that differ; media known to one side only, or by two kinds of digest,
        differ from nothing (they were not measured alike)."""
        found = []
        for part in PARTS:
            mine, theirs = getattr(self, part), getattr(other, part)
            if part == "media" and not self.media_comparable(other):
                continue
            if mine != theirs:
                found.append(part)
        return tuple(found)

    def media_comparable(self, other: TaskPrint) -> bool:
        """Whether both know the media by the same kind of digest."""
        if self.media is None or other.media is None:
            return False
        return self.media.startswith(GIT_MARK) == other.media.startswith(GIT_MARK)


def short_digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:DIGITS]


def media_part(content_id: str | None) -> str | None:
    """A media file's part of a fingerprint: its sha256's first digits, or, for a file a hub
    keeps in git (a content id `git-<blob id>`), GIT_MARK and the blob id's. The two kinds
    are not compared with each other (`TaskPrint.differing_parts`)."""
    if content_id is None:
        return None
    if content_id.startswith(GIT_ID):
        return GIT_MARK + content_id[len(GIT_ID) :][: DIGITS - 1]
    return content_id[:DIGITS]


def task_print(row: TaskRow, media_id: str | None) -> TaskPrint:
    """The fingerprint of one row whose media file's content id is `media_id`."""
    return TaskPrint(
        media=media_part(media_id),
        prompt=short_digest([row.prompt, row.media_type]),
        answer_key=row.rubric_sha256[:DIGITS],
        labels=short_digest([getattr(row, name) for name in LABEL_FIELDS]),
    )


def rows_digest(rows: Iterable[TaskRow]) -> str:
    """A digest of every row of a release, its media left out (known by path): what tells
    two releases apart where two runs share no task."""
    found = sorted(f"{r.task_id}={task_print(r, None).encoded()}={r.media_path}" for r in rows)
    return short_digest(found)


def release_prints(
    rows: Iterable[TaskRow], media: Mapping[str, str | None]
) -> dict[str, TaskPrint]:
    """Each row's fingerprint, by task id; `media` maps a media path to its file's sha256."""
    return {row.task_id: task_print(row, media.get(row.media_path)) for row in rows}


def prints_record(prints: Mapping[str, TaskPrint], rows: str | None = None) -> dict[str, Any]:
    """The fingerprints as a log's metadata holds them, with the digest of the whole
    release's rows (`rows_digest`) they were chosen from."""
    return {
        "format": RECORD_FORMAT,
        "parts": list(PARTS),
        "rows": rows,
        "tasks": {task_id: found.encoded() for task_id, found in prints.items()},
    }


def rows_of_record(record: Any) -> str | None:
    """The digest of the release's rows a log recorded (None: none)."""
    return record.get("rows") if isinstance(record, dict) else None


def prints_of_record(record: Any) -> dict[str, TaskPrint] | None:
    """The fingerprints a log recorded, or None for a log that recorded none (written
    before task version 2-H) or a record this version cannot read."""
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        return None
    tasks = record.get("tasks")
    if not isinstance(tasks, dict):
        return None
    try:
        return {str(task_id): TaskPrint.decoded(str(text)) for task_id, text in tasks.items()}
    except ValueError:
        return None


@dataclass(frozen=True)
class TaskChange:
    task_id: str
    change: Change
    parts: tuple[str, ...]  # the parts that differ, in PARTS order


@dataclass(frozen=True)
class ReleaseDiff:
    """Two releases task by task: what the newer adds, removes and changes."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[TaskChange, ...]
    unchanged: tuple[str, ...]
    unknown_media: tuple[str, ...] = field(default=())  # shared tasks whose media went unmeasured

    def of(self, change: Change) -> tuple[str, ...]:
        return tuple(c.task_id for c in self.changed if c.change is change)

    @property
    def same(self) -> bool:
        return not (self.added or self.removed or self.changed)


def counted(changes: Iterable[Change]) -> str:
    """Changes counted by kind, dearest first: "2 to answer again, 1 to grade again"."""
    found = list(changes)
    return ", ".join(f"{found.count(c)} to {c.value}" for c in Change if c in found)


def change_of(parts: Iterable[str]) -> Change | None:
    """The dearest change the differing `parts` make (None: no part differs)."""
    found = [_CHANGE_OF_PART[part] for part in parts]
    for change in Change:
        if change in found:
            return change
    return None


def diff_prints(old: Mapping[str, TaskPrint], new: Mapping[str, TaskPrint]) -> ReleaseDiff:
    """Task by task, what changed from `old` to `new` (both in their own order)."""
    changed, unchanged, unknown = [], [], []
    for task_id, before in old.items():
        after = new.get(task_id)
        if after is None:
            continue
        parts = before.differing_parts(after)
        change = change_of(parts)
        if change is None:
            unchanged.append(task_id)
        else:
            changed.append(TaskChange(task_id, change, parts))
        if not before.media_comparable(after):
            unknown.append(task_id)
    return ReleaseDiff(
        added=tuple(t for t in new if t not in old),
        removed=tuple(t for t in old if t not in new),
        changed=tuple(changed),
        unchanged=tuple(unchanged),
        unknown_media=tuple(unknown),
    )


def differing_shared(a: Mapping[str, TaskPrint], b: Mapping[str, TaskPrint]) -> list[str]:
    """The tasks both hold whose fingerprints differ: none, when the two read one release."""
    return [t for t, found in a.items() if t in b and found.differing_parts(b[t])]
