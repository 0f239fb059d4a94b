"""A store written by an earlier version opens with everything it held and gains the tables
a later version added, empty; a file that is not the store's kind is still refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hss_inspect.core.errors import InputError
from hss_inspect.web import store

OLD = "CREATE TABLE kept (name TEXT PRIMARY KEY);"
ADDED = "CREATE TABLE IF NOT EXISTS later (name TEXT NOT NULL, note TEXT NOT NULL);"


def tables(path: Path) -> set[str]:
    return store.table_names(path)


def test_an_earlier_store_gains_the_added_tables_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    store.create(path, OLD, "thing")
    with store.transaction(path) as db:
        db.execute("INSERT INTO kept VALUES ('first')")
    assert tables(path) == {"kept", "sqlite_autoindex_kept_1"}

    with store.transaction(
        path, lambda p: store.check_store(p, "thing", ("kept",), "make", ADDED)
    ) as db:
        db.execute("INSERT INTO later VALUES ('first', 'added later')")
        kept = db.execute("SELECT name FROM kept").fetchall()
    assert kept == [("first",)]
    assert "later" in tables(path)
    assert store.rows(path, "SELECT * FROM later") == [("first", "added later")]


def test_a_new_store_made_with_the_added_tables_opens_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    store.create(path, OLD + ADDED, "thing")
    store.check_store(path, "thing", ("kept",), "make", ADDED)
    assert {"kept", "later"} <= tables(path)


def test_a_file_without_the_first_tables_is_still_not_the_store(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE unrelated (x)")
    db.close()
    with pytest.raises(InputError, match=r"not a thing \(no kept table"):
        store.check_store(path, "thing", ("kept",), "make", ADDED)
    assert "later" not in tables(path)


def test_a_store_kind_makes_its_file_reads_its_settings_and_refuses_another_kind(
    tmp_path: Path,
) -> None:
    thing = store.StoreKind("thing", "CREATE TABLE thing (key TEXT, value TEXT);", ("thing",), "mk")
    other = store.StoreKind("other", "CREATE TABLE other (key TEXT, value TEXT);", ("other",), "mo")
    path = tmp_path / "a.sqlite"
    thing.create(path, {"rounds": 2, "name": "é"})
    assert thing.settings(path) == {"rounds": 2, "name": "é"}
    with pytest.raises(InputError, match=r"exists: a thing is made once"):
        thing.create(path, {})
    with pytest.raises(InputError, match=r"not a other \(no other table\): give the file `mo`"):
        other.settings(path)


def test_a_servers_kept_connection_reads_what_others_wrote_and_notices_its_file_gone(
    tmp_path: Path,
) -> None:
    """A server keeps one connection a thread (`keep_connections`): each transaction still
    sees what another process committed since, and a file gone is refused with the store's
    own message, then made again at its path and read as the new file."""
    thing = store.StoreKind("thing", "CREATE TABLE thing (key TEXT, value TEXT);", ("thing",), "mk")
    path = tmp_path / "served.sqlite"
    thing.create(path, {"n": 1})
    store.keep_connections(path)
    assert thing.settings(path) == {"n": 1}
    with thing.reading(path) as db:
        first = db
    with thing.reading(path) as db:
        assert db is first  # kept, not opened again
    other = sqlite3.connect(path)  # another process's write, outside the store's code
    other.execute("UPDATE thing SET value = '2'")
    other.commit()
    other.close()
    assert thing.settings(path) == {"n": 2}
    with thing.connect(path) as db:  # a read within a write, in one thread
        db.execute("UPDATE thing SET value = '3'")
        assert thing.settings(path) == {"n": 2}  # its own transaction: the write unseen
    assert thing.settings(path) == {"n": 3}

    path.unlink()
    with pytest.raises(InputError, match=r"served.sqlite: no such file; make a thing with `mk"):
        thing.settings(path)
    thing.create(path, {"n": 5})
    assert thing.settings(path) == {"n": 5}
