from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from tests.support.fixture_repo import build_repo
from tests.support.runs import run_eval
from tests.support.servers import scripted_models


@pytest.fixture(scope="session")
def hss_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated HSS-format release: data/test.jsonl + media/."""
    return build_repo(tmp_path_factory.mktemp("hss-release"))


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with scripted_models(tmp_path_factory.mktemp("scripted")) as served:
        yield served


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own frame cache, so no test sees another's entries."""
    cache = tmp_path / "hss-cache"
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(cache))
    return cache


@pytest.fixture(scope="session")
def standard_run(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[EvalLog, list[dict]]:
    """One full `inspect eval hss_inspect/hss` run on the fixture, and the model requests."""
    base_url, request_log = model_server
    start = len(request_log.read_text().splitlines())
    cache = tmp_path_factory.mktemp("cache")
    log, _ = run_eval(
        "hss_inspect/hss",
        tmp_path_factory.mktemp("logs"),
        base_url,
        env={"HSS_INSPECT_CACHE": str(cache)},
        task_args={"dataset": hss_repo},
    )
    requests = [json.loads(line) for line in request_log.read_text().splitlines()[start:]]
    return log, requests


@pytest.fixture
def offline_token_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest_inspect_evals runs `mockllm/model` without usage, which Inspect counts with
    tiktoken's o200k_base vocabulary, a download; a byte-level encoding needs none."""
    import tiktoken

    byte_level = tiktoken.Encoding(
        name="bytes",
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)},
        special_tokens={},
    )
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: byte_level)


@pytest.fixture(scope="session")
def newest_inspect_evals(request: pytest.FixtureRequest) -> Path:
    """The newest inspect-evals the package index serves, installed afresh in a folder of its
    own under pytest's cache (pip's own cache spares the download when it is not new)."""
    folder = request.config.cache.mkdir("newest-inspect-evals")
    shutil.rmtree(folder)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade",
         "--target", str(folder), "inspect-evals"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, "pip could not fetch inspect-evals: " + done.stderr[-2000:]
    (found,) = Path(folder).glob("inspect_evals-*.dist-info")
    newest = tuple(int(n) for n in found.name.split("-")[1].split(".")[:2])
    assert newest >= (0, 28), found.name  # the first whose hub assets take `gated`
    return Path(folder)
