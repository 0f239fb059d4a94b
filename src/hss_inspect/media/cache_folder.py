"""The media cache's folder: where it is (`HSS_INSPECT_CACHE`), whether it can be used,
the problems met storing in it (warned of once per process), what it holds, and clearing it.

The cache is a content-addressed store of prepared media on disk, shared by runs, epochs,
models and processes:

- `frames/<key>/` (`frame_cache`, files in `frame_files`): `frames.bin` (the JPEG frames,
  end to end) + `frames.json`, keyed by the clip's content hash and the frame settings;
- `images/<key>/` (`image_cache`): `image.json` (+ `image.bin` when the image was
  re-encoded), keyed by the image's content hash and the size limits;
- `hashes/` (`facts`): content hashes of files already read, by path, size and
  modification time;
- `facts/<sha256>.json` (`facts`): what a media file is, probed once: a clip's duration
  and frame size (the token fit needs them), an image's size, bytes and type (whether a
  provider's limits change it at all);
- `locks/` (`cache_entries`): a lock file per key;
- `models/inspect-<version>.json` (`providers.price_lookup`): what Inspect's model database
  says of the model names reports and estimates priced.

A key holds only the settings that can change the result (`plan.frames_that_matter`,
`ImageFacts.reencoding_limits`), so every model whose limits make no difference reads
the same entry; a thinned set of frames is taken from the clip's unthinned entry at the
same size without opening the clip.

Entries are built in a temporary folder and renamed into place, so a reader sees a whole
entry or none. A lock file per key makes a second process wait for the first instead of
preparing the same media again. An entry whose files do not match their recorded sizes
and hashes is rebuilt.

The cache only saves work: when it cannot store (a full disk, a read-only folder), the
media prepared are used from memory, and one warning per process names the folder, its
free space and the remedy. A cache path that is not a folder at all is refused up front
(`check_cache_folder`), before a run starts.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from hss_inspect.media.activity import count_not_stored
from hss_inspect.media.errors import MediaError

logger = logging.getLogger(__name__)

CACHE_ENV = "HSS_INSPECT_CACHE"
# a log's attempt records, kept between reports (hss_inspect.report.record_cache)
REPORTS_SECTION = "reports"
_SECTIONS = ("frames", "images", "hashes", "locks", "facts", "models", REPORTS_SECTION)


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hss_inspect"


class CacheFolderError(MediaError):
    """The cache path is not a folder: nothing can be read or stored there."""


def check_cache_folder(root: Path | None = None) -> Path:
    """The cache folder, made if missing; CacheFolderError, naming HSS_INSPECT_CACHE and
    the path, when it is not a folder and cannot be made one (a file, a path under one).

    A folder that exists but cannot be written is usable: what is there is read, and what
    cannot be stored is sent from memory."""
    root = root or cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CacheFolderError(_not_a_folder(root, exc)) from None
    return root


def _not_a_folder(root: Path, exc: OSError) -> str:
    configured = os.environ.get(CACHE_ENV)
    named = f"{CACHE_ENV}={configured}" if configured else f"the media cache {root}"
    blocking = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
    why = (
        "it is a file"
        if blocking == root
        else f"{blocking} is a file"
        if blocking is not None
        else exc.strerror or str(exc)
    )
    remedy = (
        f"point {CACHE_ENV} at a folder, or unset it for ~/.cache/hss_inspect"
        if configured
        else f"set {CACHE_ENV} to a folder"
    )
    return f"{named} is not a usable folder ({why}): {remedy}"


@dataclass(frozen=True)
class StorageProblem:
    """The first time this process could not store media in a cache folder."""

    root: Path
    reason: str
    free_bytes: int | None
    full: bool

    def warning(self) -> str:
        free = "unknown" if self.free_bytes is None else size_text(self.free_bytes)
        remedy = (
            f"free space there, or point {CACHE_ENV} at a folder with room"
            if self.full
            else f"make it writable, or point {CACHE_ENV} at a folder that is"
        )
        return (
            f"the media cache {self.root} cannot store prepared media ({self.reason}; "
            f"{free} free): frames and images are sent from memory and prepared again by the "
            f"next run; {remedy}"
        )


def size_text(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


_FULL_DISK = {errno.ENOSPC, errno.EDQUOT}
_problems: dict[Path, StorageProblem] = {}
_problems_lock = threading.Lock()
_warn_of_problems = True


def storage_problem(root: Path | None = None) -> StorageProblem | None:
    """Why this process could not store media in the cache, if it could not."""
    return _problems.get(root or cache_root())


def report_storage_problems_quietly() -> None:
    """Record storage problems without warning (prepare's worker processes: their parent
    warns once for all of them)."""
    global _warn_of_problems
    _warn_of_problems = False


def could_not_store(root: Path, error: OSError) -> None:
    """Count a file the cache under `root` could not hold; the folder's first problem is
    recorded and warned of (once per process, unless reported quietly)."""
    problem = StorageProblem(
        root, error.strerror or str(error), _free_bytes(root), error.errno in _FULL_DISK
    )
    count_not_stored()
    with _problems_lock:
        if root in _problems:
            return
        _problems[root] = problem
    if _warn_of_problems:
        logger.warning(problem.warning())


def _free_bytes(root: Path) -> int | None:
    for folder in (root, *root.parents):
        with contextlib.suppress(OSError):
            if folder.is_dir():
                return shutil.disk_usage(folder).free
    return None


@dataclass(frozen=True)
class CacheStats:
    root: Path
    frame_entries: int
    image_entries: int
    files: int
    bytes: int


def cache_stats(root: Path | None = None) -> CacheStats:
    root = root or cache_root()
    files = [p for p in root.rglob("*") if p.is_file()] if root.exists() else []

    def entries(section: str) -> int:
        folder = root / section
        return (
            sum(1 for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
            if folder.exists()
            else 0
        )

    return CacheStats(
        root, entries("frames"), entries("images"), len(files), sum(p.stat().st_size for p in files)
    )


def clear_cache(root: Path | None = None) -> CacheStats:
    """Delete every entry; returns what there was."""
    root = root or cache_root()
    before = cache_stats(root)
    for section in _SECTIONS:
        shutil.rmtree(root / section, ignore_errors=True)
    return before
