"""Perturber variants on disk, so every judge audited later grades the same answers.

An entry is keyed by the task, its rubric fingerprint, the kind, the perturber model
and the fingerprint of the perturber's prompt for that kind. A variant the perturber
could not write is stored too (as skipped, with its replies): a second audit then
skips the same variants instead of asking again and grading a different set. Entries
live in `<cache root>/audit/` (see `hss-inspect cache`); `hss-inspect cache --clear`
leaves them alone, and deleting that folder makes the next audit write new variants.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import anyio

from hss_inspect.audit.perturber import Perturbation
from hss_inspect.audit.variants import Variant

# The media cache's atomic write (temporary file, then rename) serves these entries too.
from hss_inspect.media.cache_entries import write_atomically
from hss_inspect.media.cache_folder import cache_root

AUDIT_SECTION = "audit"
ENTRY_FORMAT = 1


@dataclass(frozen=True)
class VariantKey:
    task_id: str
    rubric_sha256: str
    kind: str
    perturber_model: str
    perturber_prompt_sha256: str

    @property
    def digest(self) -> str:
        text = json.dumps({"format": ENTRY_FORMAT, **asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def entry_path(key: VariantKey, root: Path | None = None) -> Path:
    return (root or cache_root()) / AUDIT_SECTION / f"{key.digest}.json"


def encode_entry(key: VariantKey, result: Perturbation) -> bytes:
    variant = result.variant
    entry = {
        "format": ENTRY_FORMAT,
        "key": asdict(key),
        "variant": None if variant is None else asdict(variant),
        "replies": result.replies,
        "problems": result.problems,
    }
    return json.dumps(entry, indent=1).encode()


def decode_entry(key: VariantKey, data: bytes) -> Perturbation | None:
    """The stored perturbation, or None when the entry is damaged or for another key."""
    try:
        entry = json.loads(data)
        if entry["format"] != ENTRY_FORMAT or entry["key"] != asdict(key):
            return None
        stored = entry["variant"]
        variant = None if stored is None else Variant(**stored)
        return Perturbation(
            replies=list(entry["replies"]), problems=list(entry["problems"]), variant=variant
        )
    except (ValueError, KeyError, TypeError):
        return None


# anyio locks are not tied to one event loop, so a second eval() in this process is fine.
_process_locks: dict[str, anyio.Lock] = {}


@contextlib.asynccontextmanager
async def _held(path: Path) -> AsyncIterator[None]:
    """Exclusive hold on one entry: within this process, then across processes.

    The file lock is taken in a worker thread, so waiting for another process never
    blocks this process's event loop. Where the cache cannot hold a lock file, the
    variant is made without one (and kept only in this run).
    """
    lock = _process_locks.setdefault(str(path), anyio.Lock())
    async with lock:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = path.with_suffix(".lock").open("a+b")
        except OSError:  # a cache that cannot hold the lock cannot hold the entry either
            yield
            return
        with handle:
            if os.name == "posix":
                import fcntl

                await anyio.to_thread.run_sync(fcntl.flock, handle.fileno(), fcntl.LOCK_EX)
            yield


async def cached_perturbation(
    key: VariantKey,
    make: Callable[[], Awaitable[Perturbation]],
    root: Path | None = None,
) -> tuple[Perturbation, bool]:
    """The stored perturbation for `key`, else a new one made and stored; and whether cached."""
    path = entry_path(key, root)
    async with _held(path):
        with contextlib.suppress(OSError):
            stored = decode_entry(key, path.read_bytes())
            if stored is not None:
                return stored, True
        made = await make()
        write_atomically(path, encode_entry(key, made), root or cache_root())
        return made, False
