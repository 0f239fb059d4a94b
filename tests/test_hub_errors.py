"""A dataset that cannot be read gives one short message with the remedy, and fast.

Each case opens the release in a fresh process (the hub client reads its environment
when imported): an olah mirror serving the fixture as ScaleAI/HSS, a port nobody
listens on, offline mode with an empty cache, and a stand-in for a gated dataset.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.gated_hub import GRANTED, NOT_GRANTED, gated_hub
from tests.support.servers import free_port, git_commit_all, olah_hub

pytestmark = pytest.mark.slow

# Well under hf_hub_download's own ~25 s of retries; the measured cases take ~0.1 s.
FAST_SECONDS = 5.0
REMEDY_LOCAL = "or use a local copy with -T dataset=DIR"
ENV_KEYS = ("HF_TOKEN", "HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE")


@pytest.fixture(scope="module")
def hub(hss_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(endpoint, commit) of an olah mirror serving the fixture as ScaleAI/HSS."""
    mirrors = tmp_path_factory.mktemp("mirrors")
    repo = mirrors / "datasets" / "ScaleAI" / "HSS"
    shutil.copytree(hss_repo, repo)
    commit = git_commit_all(repo, "release")
    with olah_hub(mirrors, tmp_path_factory.mktemp("olah")) as endpoint:
        yield endpoint, commit


def open_dataset(
    tmp_path: Path, dataset: str, revision: str = "main", *media: str, **env: str
) -> dict[str, Any]:
    """Open the release (and fetch `media`) in a child process with a clean hub environment."""
    base = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    child_env = {**base, "HF_HOME": str(tmp_path / "hf"), **env}
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.open_dataset", dataset, revision, *media],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[1],
    )
    assert done.returncode == 0, done.stderr
    outcome: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    outcome["stderr"] = done.stderr
    return outcome


def assert_clean_failure(outcome: dict[str, Any]) -> str:
    assert outcome["ok"] is False
    assert outcome["prerequisite"] is True, outcome  # Inspect prints it without a traceback
    assert outcome["seconds"] < FAST_SECONDS, outcome
    message: str = outcome["message"]
    assert "\n" not in message and len(message) < 420, message
    return message


def test_unknown_dataset_names_it_and_the_remedy(hub: tuple[str, str], tmp_path: Path) -> None:
    endpoint, _ = hub
    message = assert_clean_failure(open_dataset(tmp_path, "ScaleAI/Nope", HF_ENDPOINT=endpoint))
    assert message == (
        f"dataset ScaleAI/Nope@main: no such dataset on the hub at {endpoint} (or it is "
        "private and HF_TOKEN cannot see it); check the id in -T dataset, set HF_TOKEN for "
        f"a private dataset, {REMEDY_LOCAL}"
    )


def test_unknown_revision_lists_the_existing_ones(hub: tuple[str, str], tmp_path: Path) -> None:
    endpoint, _ = hub
    message = assert_clean_failure(
        open_dataset(tmp_path, "ScaleAI/HSS", "v9", HF_ENDPOINT=endpoint)
    )
    assert message == (
        "dataset ScaleAI/HSS: revision 'v9' does not exist (no such branch, tag or commit); "
        "give an existing one with -T revision= (main, or a commit id)"
    )


def test_offline_with_an_empty_cache_fails_at_once(tmp_path: Path) -> None:
    # The endpoint is a dead port: offline mode must not try it, let alone retry it.
    outcome = open_dataset(
        tmp_path,
        "ScaleAI/HSS",
        HF_HUB_OFFLINE="1",
        HF_ENDPOINT=f"http://127.0.0.1:{free_port()}",
    )
    message = assert_clean_failure(outcome)
    assert message == (
        "dataset ScaleAI/HSS@main is not in the local Hugging Face cache "
        f"({tmp_path / 'hf' / 'hub'}) and HF_HUB_OFFLINE=1 forbids downloading it; run "
        "`hss-inspect prepare --dataset ScaleAI/HSS --revision main` once online, "
        f"{REMEDY_LOCAL}"
    )


def test_unreachable_hub_fails_at_once_with_the_remedies(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    message = assert_clean_failure(open_dataset(tmp_path, "ScaleAI/HSS", HF_ENDPOINT=endpoint))
    assert message.startswith(
        f"dataset ScaleAI/HSS@main: cannot reach the Hugging Face hub at {endpoint} ("
    )
    assert message.endswith(
        f") and it is not in the local cache; check the network or HF_ENDPOINT, {REMEDY_LOCAL}"
        ", or run `hss-inspect prepare --dataset ScaleAI/HSS --revision main` once online "
        "and then use HF_HUB_OFFLINE=1"
    )


def test_unreachable_hub_falls_back_to_the_cached_rows(
    hub: tuple[str, str], tmp_path: Path
) -> None:
    endpoint, commit = hub
    online = open_dataset(tmp_path, "ScaleAI/HSS", HF_ENDPOINT=endpoint)
    assert online["ok"] and online["revision"] == commit, online
    dead = f"http://127.0.0.1:{free_port()}"
    media_path = "media/vid_cfr.mp4"  # never downloaded: not in the cache
    again = open_dataset(tmp_path, "ScaleAI/HSS", "main", media_path, HF_ENDPOINT=dead)
    assert again["ok"] and again["revision"] == commit, again
    assert again["seconds"] < FAST_SECONDS
    assert f"the hub at {dead} is out of reach" in again["stderr"]
    assert "using the copy in the local cache" in again["stderr"]
    # a media file the cache lacks fails at once too, naming the task and the file
    assert again["media_seconds"] < FAST_SECONDS, again
    assert again["media_error"].startswith(f"task task-x: cannot fetch {media_path} from ")


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        (
            None,
            "the dataset is gated; accept its conditions at {endpoint}/datasets/ScaleAI/HSS "
            "and set HF_TOKEN to a token of that account "
            "(https://huggingface.co/settings/tokens), " + REMEDY_LOCAL,
        ),
        (
            NOT_GRANTED,
            "the dataset is gated and the account of HF_TOKEN has not been granted access; "
            "accept its conditions at {endpoint}/datasets/ScaleAI/HSS with that account, "
            + REMEDY_LOCAL,
        ),
        (
            "hf_expired",
            "the hub refused HF_TOKEN (invalid or expired); set HF_TOKEN to a valid token "
            "(https://huggingface.co/settings/tokens), unset it for a public dataset, "
            + REMEDY_LOCAL,
        ),
    ],
)
def test_gated_dataset_and_token_problems(tmp_path: Path, token: str | None, expected: str) -> None:
    with gated_hub() as endpoint:
        env = {"HF_ENDPOINT": endpoint, **({"HF_TOKEN": token} if token else {})}
        message = assert_clean_failure(open_dataset(tmp_path, "ScaleAI/HSS", **env))
    assert message == "dataset ScaleAI/HSS@main: " + expected.format(endpoint=endpoint)


def test_gated_dataset_opens_with_a_granted_token(tmp_path: Path) -> None:
    with gated_hub() as endpoint:
        outcome = open_dataset(tmp_path, "ScaleAI/HSS", HF_ENDPOINT=endpoint, HF_TOKEN=GRANTED)
    assert outcome["ok"], outcome


# a judge bound, so that the dataset's error is the first the task meets
BAD_REVISION_JUDGED = ("-T", "revision=v9", "--model-role", "grader=mockllm/model")


def test_inspect_prints_the_message_without_a_traceback(
    hub: tuple[str, str], tmp_path: Path
) -> None:
    endpoint, _ = hub
    inspect = str(Path(sys.executable).with_name("inspect"))
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    done = subprocess.run(
        [
            inspect,
            "eval",
            "hss_inspect/hss",
            "--model",
            "mockllm/model",
            *BAD_REVISION_JUDGED,
        ],
        env={**env, "HF_ENDPOINT": endpoint, "HF_HOME": str(tmp_path / "hf"), "COLUMNS": "400"},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    output = done.stdout + done.stderr
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines[-1].startswith("dataset ScaleAI/HSS: revision 'v9' does not exist"), output
    assert "Traceback" not in output
    assert not any(line.lstrip().startswith('File "') for line in lines), output


def test_prepare_command_prints_the_message_and_fails(tmp_path: Path) -> None:
    hss_inspect = str(Path(sys.executable).with_name("hss-inspect"))
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    done = subprocess.run(
        [hss_inspect, "prepare", "--dataset", "ScaleAI/HSS"],
        env={**env, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        "hss-inspect prepare: dataset ScaleAI/HSS@main is not in the local Hugging Face cache"
    )
    assert "Traceback" not in done.stderr
