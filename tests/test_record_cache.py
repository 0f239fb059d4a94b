"""A log's attempt records kept between reports: read through Inspect once, never stale."""

from __future__ import annotations

import os
import pickle
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest

from hss_inspect.core.config import data_dir
from hss_inspect.media.cache_folder import clear_cache
from hss_inspect.report import logs as report_logs
from hss_inspect.report import record_cache, records
from hss_inspect.report.records import AttemptRecord, read_logs
from tests.support.logs import Item, Try, write_log


def summary_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths whose sample summaries are read through Inspect, as they are read."""
    read: list[str] = []
    reader = report_logs.read_eval_log_sample_summaries

    def counting(path: str, *args: Any, **kwargs: Any) -> Any:
        read.append(path)
        return reader(path, *args, **kwargs)

    monkeypatch.setattr(report_logs, "read_eval_log_sample_summaries", counting)
    return read


def passes(records: list[AttemptRecord]) -> dict[tuple[str, int], float | None]:
    return {(r.task_id, r.epoch): r.pass_ for r in records}


def items(second_passes: bool) -> list[Item]:
    return [
        Item("t1", "retrodiction", "image", (Try(True), Try(False))),
        Item("t2", "theory_of_mind", "video", (Try(second_passes), Try(None))),
    ]


@pytest.fixture
def logged(tmp_path: Path) -> str:
    return write_log(tmp_path / "run.eval", items(second_passes=False))


def test_a_second_report_reads_no_summary_and_gets_the_same_records(
    logged: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = summary_reads(monkeypatch)
    first_infos, first = read_logs([logged])
    second_infos, second = read_logs([logged])
    assert read == [logged]
    assert second == first and second_infos == first_infos
    assert passes(second) == {("t1", 1): 1, ("t1", 2): 0, ("t2", 1): 0, ("t2", 2): None}


def same_size(path: Path, size: int) -> None:
    """The log padded to `size` bytes with a zip comment (which readers ignore)."""
    with zipfile.ZipFile(path, "a") as log:
        log.comment = b" " * (size - path.stat().st_size)
    assert path.stat().st_size == size


def test_a_log_rewritten_at_its_size_and_time_is_read_again(
    logged: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log re-scored and copied back in place at its old size and timestamp (`cp -p`,
    `rsync -t`, or two writes within the clock's tick)."""
    rescored = Path(write_log(tmp_path / "rescored.eval", items(second_passes=True)))
    shorter, longer = sorted((Path(logged), rescored), key=lambda p: p.stat().st_size)
    same_size(shorter, longer.stat().st_size)
    read_logs([logged])
    before = os.stat(logged)
    Path(logged).write_bytes(rescored.read_bytes())
    os.utime(logged, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(logged).st_size == before.st_size and os.stat(logged).st_ino == before.st_ino
    read = summary_reads(monkeypatch)
    _, records = read_logs([logged])
    assert read == [logged]
    assert passes(records)[("t2", 1)] == 1


def test_the_same_log_named_another_way_keeps_the_name_given(
    logged: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_logs([logged])
    monkeypatch.chdir(Path(logged).parent)
    _, records = read_logs(["run.eval"])
    assert {r.log for r in records} == {"run.eval"}


def test_changed_code_or_a_damaged_entry_reads_the_log_again(
    logged: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, first = read_logs([logged])
    read = summary_reads(monkeypatch)
    monkeypatch.setattr(record_cache, "code_identity", lambda: "other code")
    assert read_logs([logged])[1] == first
    record_cache.entry_path(logged).write_bytes(b"not a pickle")
    assert read_logs([logged])[1] == first
    assert read == [logged, logged]


def test_clearing_the_cache_removes_the_entries(logged: str) -> None:
    read_logs([logged])
    entry = record_cache.entry_path(logged)
    assert entry.is_file()
    clear_cache()
    assert not entry.exists()


def test_a_cache_that_cannot_hold_entries_reads_the_log_each_time_and_says_nothing(
    logged: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A cache folder under a file: nothing can be made there, for root as for anyone."""
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(tmp_path / "a-file" / "cache"))
    read = summary_reads(monkeypatch)
    first = read_logs([logged])[1]
    assert read_logs([logged])[1] == first
    assert read == [logged, logged]
    assert passes(first)[("t1", 1)] == 1
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_log_rewritten_after_its_header_was_read_is_kept_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run finishing while the report reads the folder: the headers are read first, the
    records after; what is kept is the finished log's."""
    path = tmp_path / "run.eval"
    write_log(path, items(second_passes=False), model="openai/old", status="started")
    pick = records.current_logs

    def finishing(identity: dict[str, tuple[str, str, str]]) -> list[str]:
        write_log(path, items(second_passes=True), model="openai/new")
        return pick(identity)

    monkeypatch.setattr(records, "current_logs", finishing)
    read_logs([str(path)])
    monkeypatch.setattr(records, "current_logs", pick)
    infos, found = read_logs([str(path)])
    assert (infos[0].model, infos[0].status) == ("openai/new", "success")
    assert {r.model for r in found} == {"openai/new"} and passes(found)[("t2", 1)] == 1


def test_a_log_rewritten_while_it_is_read_is_not_kept(
    logged: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = report_logs.read_eval_log_sample_summaries

    def rewritten_meanwhile(path: str, *args: Any, **kwargs: Any) -> Any:
        found = reader(path, *args, **kwargs)
        write_log(Path(path), items(second_passes=True))
        return found

    monkeypatch.setattr(report_logs, "read_eval_log_sample_summaries", rewritten_meanwhile)
    read_logs([logged])
    assert not record_cache.entry_path(logged).exists()


class RunsCode:
    """An object whose unpickling calls a function: here, one that writes a file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.marker, "ran"))


def test_an_entry_runs_no_code_when_read(
    logged: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder may be shared: an entry written by someone else makes records or
    nothing, never calls."""
    _, first = read_logs([logged])
    entry = record_cache.entry_path(logged)
    marker = tmp_path / "marker"
    identity = record_cache.entry_identity(logged)
    entry.write_bytes(pickle.dumps((identity, RunsCode(marker))))
    read = summary_reads(monkeypatch)
    assert read_logs([logged])[1] == first
    assert read == [logged] and not marker.exists()


def test_the_files_of_task_configs_are_part_of_the_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log without its own dataset size is given the paper's, from task_configs: a new
    figure there makes new records."""
    configs = tmp_path / "task_configs"
    shutil.copytree(data_dir("task_configs"), configs)
    monkeypatch.setattr(record_cache, "data_dir", lambda name: configs)
    record_cache.code_identity.cache_clear()
    before = record_cache.code_identity()
    papers = configs / "paper_models.yaml"
    papers.write_text(papers.read_text() + "\n")
    record_cache.code_identity.cache_clear()
    try:
        assert record_cache.code_identity() != before
    finally:
        record_cache.code_identity.cache_clear()
