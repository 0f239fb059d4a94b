"""The hub path over real HTTP: olah serves a git repo of the fixture as ScaleAI/HSS."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fixture_repo import TASKS
from tests.support.runs import run_eval
from tests.support.servers import git_commit_all, olah_hub

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hub(hss_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """(endpoint, first commit, second commit): the second adds a task to the rows."""
    mirrors = tmp_path_factory.mktemp("mirrors")
    repo = mirrors / "datasets" / "ScaleAI" / "HSS"
    shutil.copytree(hss_repo, repo)
    first = git_commit_all(repo, "release 1")
    rows = repo / "data" / "test.jsonl"
    extra = json.loads(rows.read_text().splitlines()[0]) | {"task_id": "img-added"}
    rows.write_text(rows.read_text() + json.dumps(extra) + "\n")
    second = git_commit_all(repo, "release 2")
    with olah_hub(mirrors, tmp_path_factory.mktemp("olah")) as endpoint:
        yield endpoint, first, second


def snapshot_files(hf_home: Path, commit: str) -> set[str]:
    snapshot = hf_home / "hub" / "datasets--ScaleAI--HSS" / "snapshots" / commit
    return {str(p.relative_to(snapshot)) for p in snapshot.rglob("*") if not p.is_dir()}


def test_filtered_run_downloads_only_its_media_and_records_the_commit(
    hub: tuple[str, str, str], model_server: tuple[str, Path], tmp_path: Path
) -> None:
    endpoint, _, second = hub
    env = {"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf")}
    log, done = run_eval(
        "hss_inspect/hss",
        tmp_path / "logs",
        model_server[0],
        env=env,
        task_args={"media": "image", "domains": "social,abstract"},
        epochs=1,
    )
    assert log.status == "success", done.stderr
    assert log.eval.metadata["hss_dataset_revision"] == second
    assert "revision 'main' is not pinned" in done.stdout + done.stderr
    assert log.eval.metadata["hss_dataset_pinned"] is False
    wanted = [
        t for t in TASKS if t.media_type == "image" and t.domain.startswith(("Social", "Abstract"))
    ]
    assert sorted(str(s.id) for s in log.samples or []) == sorted(t.task_id for t in wanted)
    expected_files = {"data/test.jsonl"} | {t.media_path for t in wanted}
    assert snapshot_files(tmp_path / "hf", second) == expected_files

    # The same run offline is served from the cache, at the same commit.
    offline, done = run_eval(
        "hss_inspect/hss",
        tmp_path / "logs",
        model_server[0],
        env={**env, "HF_HUB_OFFLINE": "1"},
        task_args={"media": "image", "domains": "social,abstract"},
        epochs=1,
    )
    assert offline.status == "success", done.stderr
    assert offline.eval.metadata["hss_dataset_revision"] == second
    assert len(offline.samples or []) == len(wanted)


def test_pinned_revision_reads_that_commit(
    hub: tuple[str, str, str], model_server: tuple[str, Path], tmp_path: Path
) -> None:
    endpoint, first, _ = hub
    env = {"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf")}
    log, done = run_eval(
        "hss_inspect/hss_image",
        tmp_path / "logs",
        model_server[0],
        "--limit",
        "1",
        env=env,
        task_args={"revision": first},
        epochs=1,
    )
    assert log.status == "success", done.stderr
    assert log.eval.metadata["hss_dataset_revision"] == first
    assert log.eval.metadata["hss_selection"]["tasks"] == sum(
        t.media_type == "image" for t in TASKS
    )
    assert "is not pinned" not in done.stdout + done.stderr
    assert log.eval.metadata["hss_dataset_pinned"] is True
    assert snapshot_files(tmp_path / "hf", first) == {"data/test.jsonl", TASKS[0].media_path}


def test_the_release_commit_is_the_default_revision_once_set(
    hub: tuple[str, str, str], model_server: tuple[str, Path], tmp_path: Path
) -> None:
    """With task_configs/release.yaml naming the first commit, a run given no revision
    reads that commit, pinned; `-T revision=main` still reads the branch, unpinned."""
    endpoint, first, second = hub
    env = {"HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf")}
    released = (sys.executable, "-m", "tests.support.released_inspect", first)
    ran = {}
    for name, args in (("default", {}), ("main", {"revision": "main"})):
        log, done = run_eval(
            "hss_inspect/hss_image",
            tmp_path / name,
            model_server[0],
            "--limit",
            "1",
            env=env,
            task_args=args,
            epochs=1,
            program=released,
        )
        assert log.status == "success", done.stderr
        ran[name] = (log.eval.metadata or {}, done.stdout + done.stderr)
    metadata, output = ran["default"]
    assert metadata["hss_dataset_requested"]["revision"] == first
    assert metadata["hss_dataset_revision"] == first
    assert metadata["hss_dataset_pinned"] is True
    assert "is not pinned" not in output
    metadata, output = ran["main"]
    assert metadata["hss_dataset_revision"] == second
    assert metadata["hss_dataset_pinned"] is False
    assert "revision 'main' is not pinned" in output
