"""The one rule of which runs are comparable (report/releases.py), on logs written here:
the same fingerprints over the tasks two runs share and the same N, else a leaderboard of
their own; the paper's rows only beside runs of its release under its N; logs without
fingerprints known by their dataset and commit."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from hss_inspect.commands.cli import main
from hss_inspect.data.fingerprints import (
    Change,
    TaskPrint,
    change_of,
    diff_prints,
    prints_of_record,
    prints_record,
)
from hss_inspect.report.records import read_logs
from hss_inspect.report.releases import releases_of
from tests.support.logs import Item, Try, write_log

ITEMS = [
    Item("t1", "retrodiction", "image", (Try(True), Try(False))),
    Item("t2", "theory_of_mind", "video", (Try(False), Try(False))),
    Item("t3", "extrapolation", "image", (Try(True), Try(True))),
]


def printed(*parts: str) -> str:
    return ":".join(parts)


def release(tasks: dict[str, str], rows: str | None = None) -> dict[str, Any]:
    parts = ["media", "prompt", "answer_key", "labels"]
    return {"format": 1, "parts": parts, "rows": rows, "tasks": tasks}


BASE = {t: printed(f"m{t}", f"p{t}", f"k{t}", f"l{t}") for t in ("t1", "t2", "t3")}


def metadata(
    tasks: dict[str, str] | None = None,
    dataset: str = "lab/split",
    commit: str | None = "a" * 40,
    version: str = "2-G",
    rows: str | None = None,
    source: str | None = None,
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "hss_dataset_requested": {"dataset": dataset, "revision": commit or "main"},
        "hss_dataset_revision": commit,
        "hss_dataset": source or f"hf://datasets/{dataset}@{commit}",
        "hss_task_version": version,
        "hss_dataset_size": {"tasks": 3, "media": {"image": 2, "video": 1}},
    }
    if tasks is not None:
        found["hss_release"] = release(tasks, rows)
    return found


def groups(tmp_path: Path, *metas: dict[str, Any], items: list[Item] = ITEMS) -> list[list[str]]:
    """The releases the logs fall in, each log made a minute after the one before it."""
    paths = [
        write_log(
            tmp_path / f"run{n}.eval",
            items,
            model=f"m/{n}",
            metadata=meta,
            created=f"2026-11-29T20:{n:02d}:00+00:00",
        )
        for n, meta in enumerate(metas)
    ]
    infos, _ = read_logs(paths[::-1])  # named newest first: the grouping follows the dates
    return [[Path(info.log).stem for info in group.logs] for group in releases_of(infos)]


def test_one_release_one_leaderboard(tmp_path: Path) -> None:
    assert groups(tmp_path, metadata(BASE), metadata(BASE)) == [["run0", "run1"]]


def test_a_changed_task_or_another_n_makes_a_release_of_its_own(tmp_path: Path) -> None:
    fixed = {**BASE, "t2": printed("mt2", "pt2", "FIXED", "lt2")}
    assert groups(tmp_path, metadata(BASE), metadata(fixed), metadata(BASE)) == [
        ["run0", "run2"],
        ["run1"],
    ]
    assert groups(tmp_path, metadata(BASE), metadata(BASE, version="3-A")) == [["run0"], ["run1"]]


def test_runs_of_parts_of_one_release_are_comparable(tmp_path: Path) -> None:
    images = {t: BASE[t] for t in ("t1", "t3")}
    video = {"t2": BASE["t2"]}
    assert groups(tmp_path, metadata(images), metadata(video), metadata(BASE)) == [
        ["run0", "run1", "run2"]
    ]


def test_runs_of_two_datasets_are_two_releases_though_they_share_no_task(
    tmp_path: Path,
) -> None:
    hss = {"t1": BASE["t1"]}
    other = {"x1": printed("m", "p", "k", "l")}
    assert groups(tmp_path, metadata(hss, dataset="ScaleAI/HSS"), metadata(other)) == [
        ["run0"],
        ["run1"],
    ]
    # one release read from two places (its rows the same): one leaderboard
    same = metadata(hss, dataset="ScaleAI/HSS", rows="r1")
    copy = metadata(hss, dataset="/data/hss-copy", commit=None, rows="r1")
    assert groups(tmp_path, same, copy) == [["run0", "run1"]]


def test_the_grouping_follows_the_runs_dates_not_the_order_logs_are_named(
    tmp_path: Path,
) -> None:
    fixed = {**BASE, "t1": printed("mt1", "pt1", "FIXED", "lt1")}
    images = {"t3": BASE["t3"]}  # a part both releases share unchanged
    assert groups(tmp_path, metadata(fixed), metadata(images), metadata(BASE)) == [
        ["run0", "run1"],
        ["run2"],
    ]


def test_unknown_media_is_not_a_difference(tmp_path: Path) -> None:
    offline = {**BASE, "t1": printed("-", "pt1", "kt1", "lt1")}
    assert groups(tmp_path, metadata(BASE), metadata(offline)) == [["run0", "run1"]]


def test_logs_without_fingerprints_are_known_by_dataset_and_commit(tmp_path: Path) -> None:
    assert groups(
        tmp_path,
        metadata(None),
        metadata(None, commit="b" * 40),
        metadata(BASE),
        metadata(None, dataset="lab/other"),
    ) == [["run0", "run2"], ["run1"], ["run3"]]


def report(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["report", str(tmp_path / "logs"), *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("meta", "shown", "why"),
    [
        (metadata(BASE, dataset="ScaleAI/HSS"), True, ""),
        (
            metadata(BASE, dataset="ScaleAI/HSS", version="3-A"),
            False,
            "the runs are of task version 3-A, not comparable with the paper's (N = 2)",
        ),
        (
            metadata(BASE, dataset="demo", commit=None, source="/site/hss_inspect/demo/data"),
            False,
            "the runs read /site/hss_inspect/demo/data, not the paper's ScaleAI/HSS",
        ),
    ],
)
def test_the_papers_rows_stand_only_beside_runs_of_its_release(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    meta: dict[str, Any],
    shown: bool,
    why: str,
) -> None:
    write_log(tmp_path / "logs" / "a.eval", ITEMS, metadata=meta)
    markdown = report(tmp_path, capsys, "--with-paper")
    assert ("Human baseline (published)" in markdown) is shown
    assert ("GPT-6-astra (max) (published)" in markdown) is shown
    if not shown:
        assert f"The paper's rows are not shown: {why}." in markdown
    payload = json.loads(report(tmp_path, capsys, "--with-paper", "--format", "json"))
    assert ("paper" in payload) is shown


def test_csv_names_each_rows_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixed = {**BASE, "t2": printed("mt2", "pt2", "FIXED", "lt2")}
    write_log(tmp_path / "logs" / "a.eval", ITEMS, model="m/a", metadata=metadata(BASE))
    write_log(tmp_path / "logs" / "b.eval", ITEMS, model="m/b", metadata=metadata(fixed))
    header, *rows = csv.reader(io.StringIO(report(tmp_path, capsys, "--format", "csv")))
    assert header[-3:] == ["best", "second", "release"]
    # each row the best of its own release: two runs, two leaderboards, both bold
    assert ["pass_at_1" in row[-3].split() for row in rows] == [True, True]
    # one place read, two releases: told apart by their fingerprints' digest
    assert [row[-1].split(":")[0] for row in rows] == ["lab/split@aaaaaaaaaaaa"] * 2
    assert rows[0][-1] != rows[1][-1] and all(", fingerprint " in row[-1] for row in rows)


def test_a_diff_classes_each_part_by_what_it_costs() -> None:
    old = {t: TaskPrint.decoded(v) for t, v in BASE.items()}
    new = {
        "t1": TaskPrint("OTHER", "pt1", "OTHER", "lt1"),  # media and key: answer again
        "t2": TaskPrint("mt2", "pt2", "kt2", "OTHER"),  # labels only
        "t4": TaskPrint("m", "p", "k", "l"),
    }
    diff = diff_prints(old, new)
    assert [(c.task_id, c.change, c.parts) for c in diff.changed] == [
        ("t1", Change.ANSWER_AGAIN, ("media", "answer_key")),
        ("t2", Change.RECOUNT, ("labels",)),
    ]
    assert (diff.added, diff.removed, diff.unchanged) == (("t4",), ("t3",), ())
    assert change_of(["answer_key", "labels"]) is Change.GRADE_AGAIN
    assert change_of([]) is None
    assert prints_of_record(prints_record(new)) == new
    assert prints_of_record({"format": 99, "tasks": {}}) is None


@pytest.mark.parametrize(
    ("argv", "what"),
    [
        (["report", "{logs}", "--sweep", "frames"], "a sweep"),
        (["report", "{logs}", "--format", "register"], "the register's evaluation report"),
        (
            ["report", "{logs}", "--format", "hf-eval-results", "--out", "{out}"],
            "the hub's eval results",
        ),
        (["agreement", "{logs}"], "agreement"),
        (
            ["register", "{logs}", "--repository-url", "https://github.com/o/r",
             "--repository-commit", "0" * 40, "--task-file", "evals/split.py"],
            "the register's entry",
        ),
    ],
)  # fmt: skip
def test_tables_and_publishers_of_one_release_refuse_two(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    what: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # where the register would write the split's task file
    fixed = {**BASE, "t2": printed("mt2", "pt2", "FIXED", "lt2")}
    a = write_log(tmp_path / "logs" / "a.eval", ITEMS, model="m/a", metadata=metadata(BASE))
    b = write_log(tmp_path / "logs" / "b.eval", ITEMS, model="m/b", metadata=metadata(fixed))
    words = [w.format(logs=tmp_path / "logs", out=tmp_path / "out") for w in argv]
    assert main(words) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert not (tmp_path / "out").exists() and not (tmp_path / "evals").exists()
    assert line.endswith(
        f"{what} takes runs of one release: {a} and {b} differ (1 shared task(s) differ "
        "(1 to grade again: t2)); give the logs of one release, or carry the others to it "
        "(hss-inspect release carry)"
    )


def test_a_hub_release_takes_the_hubs_own_content_ids_with_no_download(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hub's sha256 of each LFS file and git blob id of each file it keeps in git, asked
    in requests of at most 500 paths and with no download; offline, the cached files hashed
    and the others unknown."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    from hss_inspect.data import hub
    from hss_inspect.data.fingerprints import TaskPrint, media_part
    from hss_inspect.data.release import HubRelease

    asked: list[int] = []

    def listed(self: object, repo_id: str, paths: list[str], **kwargs: object) -> list[RepoFile]:
        asked.append(len(paths))
        return [
            RepoFile(path=p, size=1, oid=f"blob{n:036d}", lfs=None if p.endswith(".txt") else {
                "size": 1, "oid": f"sha-of-{p}", "pointerSize": 100})
            for n, p in enumerate(paths)
        ]  # fmt: skip

    def never(*args: object) -> Path:
        raise AssertionError("nothing is downloaded")

    monkeypatch.setattr(HfApi, "get_paths_info", listed)
    monkeypatch.setattr(hub, "download", never)
    monkeypatch.setattr(hub, "cached", lambda repo, path, revision: None)
    release = HubRelease("lab/split", "main", "c" * 40)
    paths = [f"media/{n}.png" for n in range(1200)] + ["media/notes.txt"]
    found = release.media_digests(paths, lambda path: "never")
    assert asked == [500, 500, 201]
    assert found["media/7.png"] == "sha-of-media/7.png"
    assert found["media/notes.txt"] == f"git-blob{200:036d}"
    # a git blob id is a digest of the bytes too, but never set against a sha256
    git, sha = media_part(found["media/notes.txt"]), media_part("ab" * 32)
    assert git == "gblob00000000000" and sha == "ab" * 8
    assert TaskPrint(git, "p", "k", "l").differing_parts(TaskPrint(sha, "p", "k", "l")) == ()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    assert release.media_digests(["media/7.png"], lambda path: "never") == {"media/7.png": None}


def test_each_releases_task_pages_stand_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task two releases hold differently gets a page in each; each leaderboard links
    its own (the later release's pages in a folder of their own)."""
    fixed = {**BASE, "t2": printed("mt2", "pt2", "FIXED", "lt2")}
    write_log(tmp_path / "logs" / "a.eval", ITEMS, model="m/a", metadata=metadata(BASE))
    write_log(
        tmp_path / "logs" / "b.eval", ITEMS, model="m/b", metadata=metadata(fixed),
        created="2026-11-30T20:00:00+00:00",
    )  # fmt: skip
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out), "--pages", "t2"]) == 0
    capsys.readouterr()
    first, second = out / "tasks" / "t2.html", out / "release_2" / "tasks" / "t2.html"
    assert "m/a" in first.read_text() and "m/b" not in first.read_text()
    assert "m/b" in second.read_text() and "m/a" not in second.read_text()
    page = (out / "report.html").read_text()
    boards = page.split("<h2>Leaderboard (pass@1, %)</h2>")[1:]
    assert '<a href="tasks/t2.html">t2</a>' in boards[0]
    assert '<a href="release_2/tasks/t2.html">t2</a>' in boards[1]
    assert 'href="../../report.html"' in second.read_text()
