from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fixture_repo import build_repo
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
