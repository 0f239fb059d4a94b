"""Reading and validating HSS rows (one JSON object per line of `data/test.jsonl`)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from hss_inspect.core.errors import InputError, SetupError
from hss_inspect.core.options import OptionList, as_list, spell
from hss_inspect.core.taxonomy import (
    MEDIA_TYPES,
    PAPER,
    resolve_domain,
    resolve_subdomains,
)

logger = logging.getLogger(__name__)

REQUIRED_FIELDS = (
    "task_id",
    "domain",
    "subdomain",
    "media_type",
    "media_path",
    "prompt",
    "golden_response",
    "rubric_criteria",
)
_MAX_ERRORS_SHOWN = 20


class DatasetError(SetupError, ValueError):
    """Rows that cannot be used as they are; the message lists each bad row."""


@dataclass(frozen=True)
class Criterion:
    id: str
    title: str
    weight: float | None = None


@dataclass(frozen=True)
class GradedTask:
    """A task as the judge and the perturber read it: the question, the media type, the
    reference answer and the rubric (never the media)."""

    question: str
    media_type: str
    reference: str
    criteria: tuple[Criterion, ...]


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    domain: str
    subdomain: str
    media_type: str
    media_path: str
    prompt: str
    golden_response: str
    criteria: tuple[Criterion, ...]

    @property
    def graded(self) -> GradedTask:
        return GradedTask(self.prompt, self.media_type, self.golden_response, self.criteria)

    @property
    def rubric_sha256(self) -> str:
        """Fingerprint of what the judge grades against: reference answer and criteria."""
        payload = {
            "golden_response": self.golden_response,
            "criteria": [[c.id, c.title, c.weight] for c in self.criteria],
        }
        return _sha256_json(payload)

    def sample_metadata(self) -> dict[str, Any]:
        """The metadata of the row's Inspect sample, which its user turn is built from
        (by the run, `hss-inspect estimate` and `prepare` alike)."""
        return {
            "task_id": self.task_id,
            "media_type": self.media_type,
            "domain": self.domain,
            "subdomain": self.subdomain,
            "media_path": self.media_path,
            "prompt": self.prompt,
            "golden_response": self.golden_response,
            "criteria": [asdict(c) for c in self.criteria],
            "rubric_sha256": self.rubric_sha256,
        }


def question_sha256(prompt: str, media_sha256: str) -> str:
    """Fingerprint of what the model is asked: question text and media content."""
    return _sha256_json({"prompt": prompt, "media": media_sha256})


def _sha256_json(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def row_record(row: TaskRow) -> dict[str, Any]:
    """The row as a line of `data/test.jsonl` holds it: the inverse of `parse_row`, so a
    release written here reads back as the same rows."""
    return {
        "task_id": row.task_id,
        "domain": row.domain,
        "subdomain": row.subdomain,
        "media_type": row.media_type,
        "media_path": row.media_path,
        "prompt": row.prompt,
        "golden_response": row.golden_response,
        "rubric_criteria": criterion_records(row.criteria),
        "num_criteria": len(row.criteria),
    }


def criterion_records(criteria: Sequence[Criterion]) -> list[dict[str, Any]]:
    """Criteria as the release holds them: `{id, title}`, and `weight` where one is set."""
    return [
        {"id": c.id, "title": c.title, **({} if c.weight is None else {"weight": c.weight})}
        for c in criteria
    ]


def parse_rows(lines: Iterable[str], source: str) -> list[TaskRow]:
    """Every row of a JSONL text, or one DatasetError naming each bad row and its fault."""
    numbered, errors = read_rows(lines, source)
    if errors:
        remedy = f"or point {spell('dataset')} at a good copy"
        raise DatasetError(error_summary([e for _, e in errors], source, remedy))
    rows = [row for _, row in numbered]
    if not rows:
        raise DatasetError(f"{source}: no rows; is this the HSS data/test.jsonl?")
    report_unknown_taxonomy(rows, source)
    return rows


def read_rows(
    lines: Iterable[str], source: str
) -> tuple[list[tuple[int, TaskRow]], list[tuple[int, str]]]:
    """The rows of a JSONL text that parse, and a line naming each one that does not
    ("SOURCE line N: ..."), each with its line number."""
    rows: list[tuple[int, TaskRow]] = []
    errors: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            row = parse_row(json.loads(line))
        except json.JSONDecodeError as exc:
            errors.append((number, f"{where}: not valid JSON at column {exc.colno} ({exc.msg})"))
            continue
        except DatasetError as exc:
            errors.append((number, f"{where}: {exc}"))
            continue
        if row.task_id in seen:
            first = seen[row.task_id]
            errors.append(
                (number, f"{where}: duplicate task_id {row.task_id!r} (first on line {first})")
            )
            continue
        seen[row.task_id] = number
        rows.append((number, row))
    return rows, errors


def error_summary(errors: Sequence[str], source: str, remedy: str) -> str:
    """Each bad row's line (the first 20), after what to do: fix or remove them, `remedy`
    (what else the command offers); one bad row, one line."""
    if len(errors) == 1:
        return f"{errors[0]}; fix or remove the row ({remedy})"
    shown = "\n  ".join(errors[:_MAX_ERRORS_SHOWN])
    more = len(errors) - _MAX_ERRORS_SHOWN
    tail = f"\n  ... and {more} more" if more > 0 else ""
    return (
        f"{len(errors)} invalid row(s) in {source}; fix or remove them ({remedy}):\n  {shown}{tail}"
    )


def parse_row(raw: Any) -> TaskRow:
    if not isinstance(raw, dict):
        raise DatasetError("a row must be a JSON object")
    task_id = raw.get("task_id")
    label = f"task {task_id!r}" if task_id not in (None, "") else "row"
    missing = [f for f in REQUIRED_FIELDS if raw.get(f) in (None, "")]
    if missing:
        raise DatasetError(f"{label}: missing field(s) {', '.join(missing)}")
    media_type = str(raw["media_type"]).strip().lower()
    if media_type not in MEDIA_TYPES:
        raise DatasetError(
            f"{label}: unknown media_type {raw['media_type']!r} (expected image or video)"
        )
    criteria = parse_rubric(raw["rubric_criteria"], label)
    declared = raw.get("num_criteria")
    if declared is not None and int(declared) != len(criteria):
        raise DatasetError(
            f"{label}: num_criteria is {declared} but rubric_criteria has {len(criteria)}"
        )
    return TaskRow(
        task_id=str(task_id),
        domain=str(raw["domain"]).strip(),
        subdomain=str(raw["subdomain"]).strip(),
        media_type=media_type,
        media_path=safe_media_path(str(raw["media_path"]), label),
        prompt=str(raw["prompt"]),
        golden_response=str(raw["golden_response"]),
        criteria=criteria,
    )


def safe_media_path(value: str, label: str) -> str:
    """The path as a clean relative POSIX path inside the repo, or an error."""
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise DatasetError(
            f"{label}: media_path {value!r} escapes the repository root; "
            "it must be relative, like media/<file>"
        )
    return str(path)


def parse_rubric(value: Any, label: str) -> tuple[Criterion, ...]:
    """Criteria from a list of {id, title, weight?} objects or that list as a JSON string."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{label}: rubric_criteria is a string but not JSON ({exc.msg})"
            ) from exc
    if not isinstance(value, list) or not value:
        raise DatasetError(f"{label}: rubric_criteria must be a non-empty list")
    criteria = tuple(_parse_criterion(item, label, n) for n, item in enumerate(value, start=1))
    ids = [c.id for c in criteria]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise DatasetError(f"{label}: duplicate criterion id(s) {', '.join(duplicates)}")
    return criteria


def _parse_criterion(item: Any, label: str, position: int) -> Criterion:
    if not isinstance(item, dict):
        raise DatasetError(f"{label}: criterion {position} must be an object with id and title")
    criterion_id, title = item.get("id"), item.get("title")
    if criterion_id in (None, "") or not isinstance(title, str) or not title.strip():
        raise DatasetError(f"{label}: criterion {position} needs a non-empty id and title")
    weight = item.get("weight")
    if weight is not None:
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
            raise DatasetError(f"{label}: criterion {criterion_id} has weight {weight!r}")
        weight = float(weight)
    return Criterion(str(criterion_id), title.strip(), weight)


def report_unknown_taxonomy(rows: Sequence[TaskRow], source: str) -> list[str]:
    """Warn about domain/subdomain strings outside the paper's taxonomy; return the warnings.
    A run reads any dataset in HSS's format (a lab's split may have its own taxonomy), so
    these are reported under their own names, not refused."""
    warnings = [
        f"task {row.task_id}: {fault}"
        for row in rows
        if (fault := PAPER.fault(row.domain, row.subdomain))
    ]
    for warning in warnings:
        logger.warning(
            "%s: %s; it is reported under its own name in the breakdowns", source, warning
        )
    return warnings


def select_rows(
    rows: Sequence[TaskRow],
    media: str = "all",
    domains: OptionList = None,
    subdomains: OptionList = None,
) -> list[TaskRow]:
    """The rows a run evaluates, in release order."""
    media = media.strip().lower()
    if media not in ("all", *MEDIA_TYPES):
        raise InputError(f"media must be all, image or video, not {media!r}")
    try:
        wanted_domains = {resolve_domain(d) for d in as_list(domains)}
        wanted_subdomains = resolve_subdomains(as_list(subdomains))
    except ValueError as exc:
        raise InputError(f"domains/subdomains: {exc}") from None
    return [
        row
        for row in rows
        if (media == "all" or row.media_type == media)
        and (not wanted_domains or row.domain in wanted_domains)
        and (not wanted_subdomains or row.subdomain in wanted_subdomains)
    ]


@dataclass(frozen=True)
class DatasetSize:
    """What a whole dataset holds, before any filter or limit: its tasks, and its tasks by
    media type. A log records it at load, so a report counts a run against the dataset it
    ran on."""

    tasks: int
    media: dict[str, int]

    def record(self) -> dict[str, Any]:
        return {"tasks": self.tasks, "media": dict(self.media)}

    @classmethod
    def from_record(cls, record: Any) -> DatasetSize | None:
        if not isinstance(record, dict) or not isinstance(record.get("tasks"), int):
            return None
        media = record.get("media") or {}
        return cls(record["tasks"], {m: int(media.get(m, 0)) for m in MEDIA_TYPES})


def dataset_size(rows: Sequence[TaskRow]) -> DatasetSize:
    return DatasetSize(len(rows), {m: sum(r.media_type == m for r in rows) for m in MEDIA_TYPES})
