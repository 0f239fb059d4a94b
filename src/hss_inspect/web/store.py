"""One SQLite file a store (a study, a build): made once from its schema, then every read
and write is one transaction, committed before the server answers (WAL, synchronous
FULL), so a server killed at any moment keeps everything it acknowledged."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hss_inspect.core.errors import InputError

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    """Whether `path` is an SQLite file (by its first bytes)."""
    with path.open("rb") as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def create(path: Path, schema: str, what: str) -> None:
    """A new file holding `schema`'s tables; refused when `path` exists."""
    if path.exists():
        raise InputError(f"{path} exists: a {what} is made once; give a new file")
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    try:
        db.executescript(schema)  # commits on its own, before any row goes in
    finally:
        db.close()


@contextmanager
def transaction(
    path: Path, check: Callable[[Path], None] | None = None
) -> Iterator[sqlite3.Connection]:
    """A connection in one transaction, committed on leaving (rolled back on an error);
    `check` first refuses a file that is not the store's kind."""
    if check is not None:
        check(path)
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("BEGIN IMMEDIATE")
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    finally:
        db.close()


def rows(path: Path, query: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
    with transaction(path) as db:
        return db.execute(query, parameters).fetchall()
