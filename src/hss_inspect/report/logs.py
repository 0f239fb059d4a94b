"""The report's one reader of Inspect logs: finds them, and reads their headers and their
samples' scores, metadata, usage and timing, never the samples' messages, events or images.

The attempt records, the pilot of an estimate and the audit's tables all read logs here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from inspect_ai.log import (
    EvalLog,
    EvalSample,
    EvalSampleSummary,
    list_eval_logs,
    read_eval_log,
    read_eval_log_sample,
    read_eval_log_sample_summaries,
    read_eval_log_samples,
    read_eval_log_samples_by_id,
)
from inspect_ai.model import ModelConfig

from hss_inspect.core.errors import InputError
from hss_inspect.core.names import unknown_text
from hss_inspect.core.settings import CACHE_PLAN_RECORD, HUMAN_RECORD

LOG_SUFFIXES = (".eval", ".json")
# Parts of a sample the report never needs; skipping them keeps images out of memory.
_HEAVY_FIELDS = {"messages", "events", "attachments", "store", "events_data", "timelines"}

# A sample as the report reads it: Inspect's summary of it (one read of the log's summary
# file), or the sample itself where the summary dropped something the report uses.
ScoredSample = EvalSample | EvalSampleSummary


class LogError(InputError):
    """A path that is not an Inspect log, or a log with nothing to report."""


class DamagedLog(LogError):
    """A file listed as a log that Inspect cannot read: cut short, empty, or another kind
    of file. A report of several logs leaves it out and names it (`records.read_logs`)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path


# What Inspect raises for a file it cannot read as a log: a zip without its directory
# (`EOCD not found`), JSON cut short or not JSON, JSON without a log's fields (pydantic's
# ValidationError is a ValueError), a damaged member. Anything else is a bug, and keeps
# its traceback.
_UNREADABLE = (ValueError, zipfile.BadZipFile, zlib.error, EOFError, KeyError, AssertionError)
# A .json file this small that Inspect cannot read is parsed again here, to say where it
# stops being JSON, or that it is JSON of something else.
_JSON_CHECKED_BYTES = 1_000_000
# The place a JSON parser gives in its message ("... at line 3 column 7")
_AT_LINE = re.compile(r"line (\d+),? column (\d+)")
_COPY_AGAIN = "copy it again, or move it out of the way"
_NOT_A_LOG = "move it out of the way, or name the logs themselves"


@contextlib.contextmanager
def reading(path: str) -> Iterator[None]:
    """Inspect reading the log at `path`: a file it cannot read becomes a DamagedLog
    naming the file, what is wrong with it and what to do."""
    try:
        yield
    except LogError:
        raise
    except _UNREADABLE as exc:
        raise DamagedLog(path, damage(path, exc)) from None


def damage(path: str, exc: BaseException) -> str:
    """What is wrong with a log Inspect could not read, as the file's first bytes and
    Inspect's message tell it, and what to do."""
    first = _first_bytes(path)
    if first == b"":
        return f"empty (0 bytes), not an Inspect log: {_COPY_AGAIN}"
    if path.endswith(".eval"):
        if first is not None and not first.startswith(b"PK"):
            return f"not an Inspect log (an .eval log is a zip archive): {_NOT_A_LOG}"
        return (
            "cut short (its zip directory is missing: a run stopped while writing it, or a "
            f"copy not finished): {_COPY_AGAIN}; `inspect log recover` rebuilds it if its run "
            "crashed on this machine"
        )
    if first is not None and not first.lstrip().startswith(b"{"):
        return f"not an Inspect log (a .json log is one JSON object): {_NOT_A_LOG}"
    found = _AT_LINE.search(str(exc)) or _AT_LINE.search(_json_problem(path))
    if found:
        line, column = found.groups()
        return f"cut short or damaged at line {line}, column {column}: {_COPY_AGAIN}"
    if _json_problem(path) == "" or "validation error" in str(exc):
        return f"JSON, but not an Inspect log (it lacks a log's fields): {_NOT_A_LOG}"
    return f"cut short or damaged ({_cause(exc)}): {_COPY_AGAIN}"


def _json_problem(path: str) -> str:
    """Where a small local .json file stops being JSON ("" when it is JSON; "not
    checked" for a large or remote one)."""
    if is_remote(path) or os.path.getsize(path) > _JSON_CHECKED_BYTES:
        return "not checked"
    try:
        json.loads(Path(path).read_bytes())
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        return str(exc)
    return ""


def _cause(exc: BaseException) -> str:
    """Inspect's own words, and the parser's beneath them where Inspect wraps them."""
    cause = exc.__cause__ or exc.__context__
    said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"{said}: {str(cause).splitlines()[0]}" if cause and str(cause) else said


def _first_bytes(path: str) -> bytes | None:
    """The file's first bytes (None: a remote log, or one that cannot be opened)."""
    if is_remote(path):
        return None
    try:
        with open(path, "rb") as handle:
            return handle.read(64)
    except OSError:
        return None


def find_logs(paths: Sequence[str | Path]) -> list[str]:
    """Log files named directly or found (recursively) in the folders given, in order."""
    found: list[str] = []
    for raw in paths:
        path = Path(raw)
        if is_remote(str(raw)):  # a folder in a store Inspect reads (s3://...)
            infos = list_eval_logs(str(raw), recursive=True, descending=False)
            found += sorted(info.name for info in infos)
        elif path.is_dir():
            infos = list_eval_logs(str(path), recursive=True, descending=False)
            found += sorted(_local_path(info.name) for info in infos)
        elif path.is_file() and path.suffix in LOG_SUFFIXES:
            found.append(str(path))
        elif path.exists():
            raise LogError(f"{path}: not an Inspect log (.eval or .json) nor a folder of logs")
        else:
            raise LogError(f"{path}: no such file or folder; pass .eval/.json logs or folders")
    if not found:
        raise LogError("no Inspect logs found in " + ", ".join(str(p) for p in paths))
    return list(dict.fromkeys(found))


def is_remote(location: str) -> bool:
    """A location in a remote store (`s3://bucket/...`), not a local path."""
    return "://" in location and not location.startswith("file://")


def _local_path(name: str) -> str:
    return name.removeprefix("file://")


def single_model_roles(log: EvalLog) -> dict[str, ModelConfig]:
    """Each role of the log bound to one model, with its config. A role bound to several
    models cannot be told apart from them in the usage Inspect records, and is left out."""
    found = {}
    for role, config in (log.eval.model_roles or {}).items():
        configs = config if isinstance(config, list) else [config]
        distinct = list({c.model: c for c in configs}.values())
        if len(distinct) == 1:
            found[role] = distinct[0]
    return found


def current_logs(identity: dict[str, tuple[str, str, str]]) -> list[str]:
    """Paths whose (task id, eval id, created) is the latest eval of its task id.

    `inspect eval-retry` keeps the task id and starts a new eval; a copy of a log
    re-scored keeps both ids, so copies of the current eval all stay.
    """
    latest: dict[str, tuple[str, str]] = {}
    for task_id, eval_id, created in identity.values():
        if task_id not in latest or created > latest[task_id][0]:
            latest[task_id] = (created, eval_id)
    return [p for p, (task, eval_id, _) in identity.items() if latest[task][1] == eval_id]


def read_header(path: str) -> EvalLog:
    """A log without its samples: how it was run, its results and its usage. Read once a
    process for each version of a local file: a report asks several times (which kind of
    log, its run, its bill), each read a tenth of a second. Not to be changed."""
    key = (path, _local_version(path))
    if key not in _headers:
        with reading(path):
            _headers[key] = read_eval_log(path, header_only=True)
    return _headers[key]


_headers: dict[tuple[str, tuple[int, int] | None], EvalLog] = {}


def _local_version(path: str) -> tuple[int, int] | None:
    if is_remote(path):
        return None
    stat = os.stat(path)
    return stat.st_mtime_ns, stat.st_size


def read_summaries(path: str) -> list[EvalSampleSummary]:
    """Every sample's summary (scores, metadata, usage, timing, error), in one read."""
    with reading(path):
        return read_eval_log_sample_summaries(path)


def read_scored_samples(path: str) -> list[ScoredSample]:
    """Every sample's scores and metadata, from the log's sample summaries.

    Summaries hold the scores and metadata without messages, events or images, and are
    read in one go; Inspect drops metadata values over 1 kB from them, so a sample whose
    verdicts, token counts or agent record are missing there is read in full (without
    its messages, events and images).
    """
    return [
        read_sample(path, s.id, s.epoch) if summary_lacks_details(s) else s
        for s in read_summaries(path)
    ]


def check_sample(header: EvalLog, path: str, id: str, epoch: int) -> None:
    """A sample id and epoch the log holds, else a LogError with the closest id."""
    ids = [str(i) for i in header.eval.dataset.sample_ids or []]
    if ids and id not in ids:
        shown = ", ".join(ids[:8]) + (", ..." if len(ids) > 8 else "")
        raise LogError(unknown_text(id, f"a sample of {path}", ids, f"it holds {shown}"))
    epochs = header.eval.config.epochs or 1
    if not 1 <= epoch <= epochs:
        raise LogError(f"--epoch {epoch}: {path} has epochs 1 to {epochs}")


def read_sample(path: str, id: str | int, epoch: int) -> EvalSample:
    """One sample-epoch with its metadata and scores, without messages, events or images."""
    with reading(path):
        return read_eval_log_sample(path, id=id, epoch=epoch, exclude_fields=_HEAVY_FIELDS)


def summary_lacks_details(summary: EvalSampleSummary) -> bool:
    metadata = summary.metadata or {}
    if not isinstance(metadata.get("agent", {}), dict):
        return True
    if not isinstance(metadata.get(CACHE_PLAN_RECORD, {}), dict | None):
        return True
    if not isinstance(metadata.get(HUMAN_RECORD, {}), dict):
        return True
    for score in (summary.scores or {}).values():
        meta = score.metadata or {}
        if not isinstance(meta.get("verdicts", []), list):
            return True
        if not isinstance(meta.get("answer_usage", {}), dict | None):
            return True
    return False


def read_chosen_samples(path: str, chosen: Sequence[tuple[str, int]]) -> list[EvalSample]:
    """The samples of `chosen` (sample id, epoch) without messages, events or images, and
    no others: the log's directory read once, the samples read together."""
    with reading(path):
        return read_eval_log_samples_by_id(path, chosen, exclude_fields=_HEAVY_FIELDS)


def read_samples(path: str) -> Iterator[EvalSample]:
    """The samples of a log without messages, events or images (streamed)."""
    with reading(path):
        try:
            yield from read_eval_log_samples(
                path, all_samples_required=False, exclude_fields=_HEAVY_FIELDS
            )
        except RuntimeError:  # a header without sample ids (hand-written logs): read it whole
            yield from read_eval_log(path).samples or []
