"""A local log's attempt records kept between reports, so a log is read through Inspect once.

Reading a Table 1 log's 1,566 sample summaries through Inspect's public reader takes about
a second, most of the report's time; the records made from them are plain data. They are
kept in `<cache root>/reports/`, one entry per log path, and used only while everything
they were made from is unchanged: the log file (its size and modification time, which
`inspect score` and every rewrite change), the installed inspect-ai, and this package's
own files (the size and modification time of each). Anything else, an unreadable or
foreign entry included, and the log is read again and the entry replaced; an entry makes
nothing but the report's record classes when read. A remote log (s3://...) is always
read. `hss-inspect cache --clear` deletes the entries.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import logging
import os
import pickle
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar, cast

from hss_inspect.core.config import data_dir
from hss_inspect.media.cache_entries import write_atomically
from hss_inspect.media.cache_folder import REPORTS_SECTION, cache_root
from hss_inspect.report.logs import is_remote

logger = logging.getLogger(__name__)

# what `records.read_log` makes of a log: its LogInfo and its AttemptRecords
LogRecords = TypeVar("LogRecords")


def records_kept(path: str, read: Callable[[], LogRecords]) -> LogRecords:
    """The log's info and records: the kept ones when they still hold, else `read()`'s,
    which are then kept."""
    if is_remote(path):
        return read()
    identity = entry_identity(path)
    entry = entry_path(path)
    kept = _load(entry, identity)
    if kept is not None:
        # an entry of this identity is what `read()` made of this log and this code
        return cast(LogRecords, kept)
    found = read()
    # a log rewritten while it was read (a run finishing, `inspect score`) is not kept:
    # what was read may mix the two versions
    if entry_identity(path) == identity:
        _keep(entry, identity, found)
    return found


def _keep(entry: Path, identity: tuple[Any, ...], found: object) -> None:
    try:
        data = pickle.dumps((identity, found))
    except Exception:  # the cache only saves work: a record it cannot hold is read again
        logger.debug("the report's records of %s cannot be kept", identity[0], exc_info=True)
        return
    write_atomically(entry, data, cache_root(), media=False)


def entry_path(path: str) -> Path:
    name = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:32]
    return cache_root() / REPORTS_SECTION / f"{name}.pickle"


def entry_identity(path: str) -> tuple[Any, ...]:
    """What the records were made from: the log (its path, file, size, time and the digest
    of its last MiB, which for an `.eval` log holds the checksum of every part) and the code.
    The digest catches a rewrite of the same size within the clock's tick."""
    stat = os.stat(path)
    with open(path, "rb") as log:
        log.seek(max(0, stat.st_size - _TAIL_BYTES))
        tail = hashlib.sha256(log.read()).hexdigest()
    file = (stat.st_ino, stat.st_size, stat.st_mtime_ns, tail)
    # the path as given too: the records name their log by it
    return (path, os.path.abspath(path), file, code_identity())


_TAIL_BYTES = 1 << 20


@functools.cache
def code_identity() -> str:
    """A digest of what makes records besides the log: inspect-ai's version and each file
    of this package and of its task_configs (the paper's release size a log without its
    own falls back to, the demo set's rows) by name, size and modification time."""
    stamps = [f"inspect-ai {version('inspect-ai')}"]
    folders = {Path(__file__).resolve().parents[1], data_dir("task_configs").resolve()}
    for folder in sorted(folders):
        for file in sorted(folder.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts:
                stat = file.stat()
                stamps.append(f"{file} {stat.st_size} {stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(stamps).encode()).hexdigest()


def _load(entry: Path, identity: tuple[Any, ...]) -> Any:
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    try:
        kept_identity, found = _RecordsUnpickler(io.BytesIO(data)).load()
    except Exception:  # an entry cut short, or written by other code: read the log again
        logger.debug("the report's entry %s is unreadable; reading the log again", entry)
        return None
    return found if kept_identity == identity else None


class _RecordsUnpickler(pickle.Unpickler):
    """Makes nothing but this package's record classes: a cache folder may be shared (a
    cache prepared elsewhere), and an entry must not be able to run code in its reader."""

    def find_class(self, module: str, name: str) -> Any:
        found = super().find_class(module, name) if module.startswith("hss_inspect.") else None
        if not (isinstance(found, type) and dataclasses.is_dataclass(found)):
            raise pickle.UnpicklingError(f"{module}.{name} is not a record of the report")
        return found
