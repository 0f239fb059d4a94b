"""A log cut short (a run killed while writing it, a copy not finished) is one line and exit
status 1, wherever it is cut: alone, the line names it and what to do; in a folder of good
logs, the report is the good logs' report, and the line names the file left out."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hss_inspect.commands.cli import main
from tests.support.runs import INSPECT

# Where a copy stops, as a share of the file: at once, in the first bytes, in the middle,
# just short of the end (a zip's directory is its last bytes; a JSON log's samples follow
# its header).
CUTS = (0.0, 0.002, 0.1, 0.5, 0.9, 0.999)


@pytest.fixture(scope="module")
def good_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real log of two demo tasks, as .eval and as .json (named as Inspect names logs,
    so that a folder listing finds both)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    folder = tmp_path_factory.mktemp("good")
    command = [INSPECT, "eval", "hss_inspect/hss_demo", "--model", "hss/scripted"]
    command += ["--model-role", "grader=hss/scripted", "--limit", "2", "--epochs", "1"]
    command += ["--log-dir", str(folder), "--display", "none"]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    (log,) = folder.glob("*.eval")
    as_json = log.with_suffix(".json")
    write_eval_log(read_eval_log(str(log)), str(as_json), format="json")
    return {".eval": log, ".json": as_json}


def cut(log: Path, share: float, out: Path) -> Path:
    data = log.read_bytes()
    out.write_bytes(data[: int(len(data) * share)])
    return out


def report(paths: list[Path], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["report", *map(str, paths), "--format", "json"])
    said = capsys.readouterr()
    return status, said.out, said.err


@pytest.mark.slow  # makes a log with `inspect eval`
@pytest.mark.parametrize("suffix", [".eval", ".json"])
@pytest.mark.parametrize("share", CUTS)
def test_a_log_cut_short_alone_is_one_line_naming_it(
    suffix: str,
    share: float,
    good_logs: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    damaged = cut(good_logs[suffix], share, tmp_path / f"cut{suffix}")
    status, out, err = report([damaged], capsys)
    assert status == 1 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"hss-inspect report: {damaged}: ")
    what = "empty (0 bytes)" if share == 0 else "cut short"
    assert what in line and ("copy it again" in line or "move it out of the way" in line)


@pytest.mark.slow  # makes a log with `inspect eval`
@pytest.mark.parametrize("suffix", [".eval", ".json"])
@pytest.mark.parametrize("share", CUTS)
def test_a_log_cut_short_in_a_folder_of_good_logs_is_left_out_and_named(
    suffix: str,
    share: float,
    good_logs: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = good_logs[suffix]
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(log, alone / log.name)
    status, expected, err = report([alone], capsys)
    assert status == 0 and err == ""
    folder = tmp_path / "runs"
    shutil.copytree(alone, folder)
    # named as Inspect names a log of another run, so the folder's listing finds it
    damaged = cut(log, share, folder / f"2026-01-02T00-00-00+00-00_hss-demo_cut{suffix}")
    status, out, err = report([folder], capsys)
    assert status == 1
    # the report is the good log's, made as if the damaged one were not there
    assert out == expected.replace(str(alone), str(folder))
    (line,) = err.splitlines()
    assert line.startswith(f"hss-inspect report: left out {damaged}: ")
    assert "read: the other logs" in line
