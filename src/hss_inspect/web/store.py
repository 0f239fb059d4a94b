"""One SQLite file a store (a study, a build): made once from its schema, then every read
and write is one transaction, committed before the server answers (WAL, synchronous
FULL), so a server killed at any moment keeps everything it acknowledged."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hss_inspect.core.errors import InputError

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    """Whether `path` is an SQLite file (by its first bytes)."""
    with path.open("rb") as handle:
        return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def check_store(
    path: Path, what: str, tables: Sequence[str], made_by: str, added: str = ""
) -> None:
    """`path` is a store of this kind (an SQLite file holding `tables`), else one InputError
    naming the file, what it is and what to do; `made_by` is the command that makes one
    (`hss-inspect human new`). `added` makes the tables a later version added (each
    `CREATE TABLE IF NOT EXISTS`) in a file an earlier version wrote. A file found good is
    not read again (a server opens its store at every request)."""
    if not path.exists():
        raise InputError(f"{path}: no such file; make a {what} with `{made_by} {path}`")
    # keyed by the kind too: a build found good is still no study. Known before the file is
    # opened: closing a file this process opened drops every lock SQLite holds on it here,
    # and a server's other threads hold theirs (a read then fails with a disk I/O error).
    identity = (path.resolve(), path.stat().st_ino, what)
    if identity in _checked:
        return
    if not path.is_file() or not is_sqlite(path):
        raise InputError(f"{path}: not a {what} (a SQLite file `{made_by}` makes)")
    missing = [table for table in tables if table not in table_names(path)]
    if missing:
        raise InputError(
            f"{path}: a SQLite file, but not a {what} (no {', '.join(missing)} table): give "
            f"the file `{made_by}` made"
        )
    if added:
        add_tables(path, added)
    _checked.add(identity)


def add_tables(path: Path, added: str) -> None:
    """The tables a later version added, made empty where missing, so a store written by an
    earlier version opens with everything it held (new data goes in new tables, never in
    new columns of old ones)."""
    db = sqlite3.connect(path, timeout=30)
    try:
        db.executescript(added)
    except sqlite3.DatabaseError as exc:
        raise damaged(path, exc) from None
    finally:
        db.close()


_checked: set[tuple[Path, int, str]] = set()


def table_names(path: Path) -> set[str]:
    """The tables of an SQLite file, read only; a file SQLite cannot read is an InputError."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise damaged(path, exc) from None


def damaged(path: Path, exc: sqlite3.DatabaseError) -> InputError:
    return InputError(
        f"{path}: a damaged SQLite file ({exc}): cut short or overwritten; restore it from a copy"
    )


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
    path: Path, check: Callable[[Path], None] | None = None, write: bool = True
) -> Iterator[sqlite3.Connection]:
    """A connection in one transaction, committed on leaving (rolled back on an error);
    `check` first refuses a file that is not the store's kind. A read (`write` False)
    waits for no writer (WAL); the writers of one process queue on a lock of their own
    rather than on SQLite's busy wait, which sleeps up to 100 ms between tries."""
    with _writer_lock(path) if write else contextlib.nullcontext():
        db, kept = _connection(path, check)
        try:
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield db
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            if not kept:
                db.close()


def keep_connections(path: Path) -> None:
    """A server's own store: each of its threads keeps one connection to `path` (as given)
    open, rather than opening one per transaction. Opening and setting one up costs about
    0.6 ms, several times the queries of a page."""
    _kept_paths.add(path)


_kept_paths: set[Path] = set()
_thread_connections = threading.local()


def _connection(
    path: Path, check: Callable[[Path], None] | None
) -> tuple[sqlite3.Connection, bool]:
    """A connection to `path`, and whether it is kept open (`keep_connections`). A kept
    one is dropped when the path names another file now (replaced, or gone), and is not
    used by a transaction opened within its own."""
    held: dict[Path, tuple[sqlite3.Connection, int]] = _thread_connections.__dict__.setdefault(
        "by", {}
    )
    kept = path in _kept_paths
    if kept and path in held:
        db, inode = held[path]
        if db.in_transaction:  # a transaction within another: a connection of its own
            kept = False
        elif inode == _inode(path):
            return db, True
        else:
            del held[path]
            db.close()
    if check is not None:
        check(path)
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA foreign_keys=ON")
    if kept:
        held[path] = (db, _inode(path))
    return db, kept


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except OSError:
        return -1


_writer_locks: dict[Path, threading.RLock] = {}
_locks_lock = threading.Lock()


def _writer_lock(path: Path) -> threading.RLock:
    with _locks_lock:
        return _writer_locks.setdefault(path.resolve(), threading.RLock())


def rows(path: Path, query: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
    """The rows of a read-only query."""
    with transaction(path, write=False) as db:
        return db.execute(query, parameters).fetchall()


@dataclass(frozen=True)
class StoreKind:
    """One kind of store (a study, a build): its schema, the tables that make a file one,
    the command that makes one, and its settings, kept as JSON in the table named `what`
    (key, value). The study and the build each bind one, so how a store is made, checked,
    opened and its settings read is written once."""

    what: str
    schema: str
    tables: tuple[str, ...]
    made_by: str
    added: str = ""  # the tables a later version added (`check_store`)

    def create(self, path: Path, settings: Mapping[str, Any]) -> None:
        """A new file of this kind holding `settings`; refused when `path` exists."""
        create(path, self.schema + self.added, self.what)
        with self.connect(path) as db:
            db.executemany(
                f"INSERT INTO {self.what} VALUES (?, ?)",
                [(key, json.dumps(value)) for key, value in settings.items()],
            )

    def check(self, path: Path) -> None:
        check_store(path, self.what, self.tables, self.made_by, self.added)

    def connect(self, path: Path) -> AbstractContextManager[sqlite3.Connection]:
        """A connection to a file of this kind in one transaction, committed on leaving."""
        return transaction(path, self.check)

    def reading(self, path: Path) -> AbstractContextManager[sqlite3.Connection]:
        """A connection in one read-only transaction: it waits for no writer (WAL)."""
        return transaction(path, self.check, write=False)

    def settings(self, path: Path) -> dict[str, Any]:
        with self.reading(path) as db:
            return {k: json.loads(v) for k, v in db.execute(f"SELECT key, value FROM {self.what}")}
