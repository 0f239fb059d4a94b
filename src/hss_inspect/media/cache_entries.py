"""How the cache's files are made safe to share between processes: an entry's key (the
hash of what can change it), an entry built in a staging folder and renamed into place, a
file written whole or not at all, and a lock per key across processes."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hss_inspect.media.cache_folder import could_not_store

# An entry another process renamed into place first: nothing to store, nothing wrong.
_TAKEN = {errno.EEXIST, errno.ENOTEMPTY}


def entry_key(spec: dict[str, Any]) -> str:
    """An entry's name: the hash of everything in `spec`, which is what can change it."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def replace_entry(entry: Path, fill: Callable[[Path], None], root: Path) -> bool:
    """Build an entry in a staging folder, then rename it into place. False when the cache
    cannot hold it: nothing is stored, and the problem is recorded (and warned of once)."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=entry.parent))
    except OSError as exc:
        could_not_store(root, exc)
        return False
    try:
        fill(staging)
        if entry.exists():
            shutil.rmtree(entry, ignore_errors=True)  # a corrupt entry is in the way
        os.rename(staging, entry)
        return True
    except OSError as exc:
        if exc.errno in _TAKEN:
            return True
        could_not_store(root, exc)
        return False
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_atomically(target: Path, data: bytes, root: Path, media: bool = True) -> bool:
    """Write a file of the cache whole or not at all; False when the cache under `root`
    cannot hold it (the problem recorded and warned of for `media`, which is then sent
    from memory; anything else is simply made again next time)."""
    temporary = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".partial-", dir=target.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
        return True
    except OSError as exc:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        if media:
            could_not_store(root, exc)
        return False


@contextlib.contextmanager
def locked_all(root: Path, keys: Sequence[str]) -> Iterator[None]:
    with contextlib.ExitStack() as stack:
        for key in keys:
            stack.enter_context(locked(root, key))
        yield


@contextlib.contextmanager
def locked(root: Path, key: str) -> Iterator[None]:
    """Hold an exclusive lock on `key` across processes (released if the holder dies).

    Where the cache cannot hold a lock file, the work goes on unlocked: at worst two
    processes prepare the same media, which nothing can store there anyway."""
    handle = _lock_file(root, key)
    try:
        if handle is not None and sys.platform != "win32":
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        if handle is not None:
            handle.close()


def _lock_file(root: Path, key: str) -> Any:
    lock_path = root / "locks" / f"{key}.lock"
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        return lock_path.open("a+b")
    except OSError as exc:
        could_not_store(root, exc)
        return None
