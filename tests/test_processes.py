"""Every core, then every machine: a recipe's models each in their own process (or Ray
task), each an eval set in a folder of the run's log folder, read back as one run by the
report, resumed by running the same command again, and no process left behind when the
recipe is killed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from hss_inspect.recipes.plans import plan_recipe
from hss_inspect.recipes.processes import (
    PER_CORE,
    PROCESS_MEMORY,
    folder_name,
    model_shares,
    processes_for,
)
from tests.support.servers import free_port

HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))
MODELS = {
    "GPT-6-astra": "openai-api/scripted/candidate-a",
    "Claude-Opus-5.5": "openai-api/scripted/candidate-b",
    "judge-claude-opus-5": "openai-api/scripted/judge",
}


# ---- the split (pure) -----------------------------------------------------------------


def test_a_plan_is_split_by_model_each_share_in_its_own_folder() -> None:
    runs = plan_recipe("effort", aliases={})
    shares = model_shares(runs, "s3://bucket/run/")
    assert [share.model for share in shares] == list(dict.fromkeys(r.model for r in runs))
    assert sorted(map(repr, (r for share in shares for r in share.runs))) == sorted(map(repr, runs))
    for share in shares:
        assert {r.model for r in share.runs} == {share.model}
        assert share.log_dir == "s3://bucket/run/" + share.model.replace("/", "_")
    assert folder_name("openai-api/vllm/Qwen/Qwen3:8b") == "openai-api_vllm_Qwen_Qwen3_8b"


def test_the_recipe_gives_inspects_switches_to_every_eval_set_and_prints_them() -> None:
    from hss_inspect.commands.cli import parse
    from hss_inspect.commands.recipe import eval_set_options, inspect_flags

    given = ["--no-log-images", "--no-score-display"]
    args = parse(["recipe", "table1", "--max-samples", "8", *given])
    # as `eval_set` takes them, and as the flags `--dry-run` prints, which `inspect eval`
    # must know by those names
    assert eval_set_options(args) == {"max_samples": 8, "log_images": False,
                                      "score_display": False}  # fmt: skip
    assert inspect_flags(args) == ["--max-samples 8", *given]
    # the CLI's own flags (no public list of them), to check the names printed
    from inspect_ai._cli.eval import eval_command

    known = {o for p in eval_command.params for o in [*p.opts, *getattr(p, "secondary_opts", [])]}
    assert set(given) <= known and "--no-log-realtime" in known


@pytest.mark.parametrize(
    ("shares", "cores", "memory", "expected"),
    [
        (25, 16, 64 * 1024**3, 21),  # what the memory holds (3 GiB a process)
        (25, 4, 64 * 1024**3, 4 * PER_CORE),  # a few a core: they mostly wait
        (3, 16, None, 3),  # never more than the models
        (25, 2, PROCESS_MEMORY // 2, 1),  # at least one
    ],
)
def test_processes_follow_the_cores_and_the_memory(
    shares: int, cores: int, memory: int | None, expected: int
) -> None:
    assert processes_for(shares, cores, memory) == expected


# ---- on this machine, against the scripted models -----------------------------------


def recipe_command(log_dir: str, repo: Path, *extra: str) -> list[str]:
    command = [HSS_INSPECT, "recipe", "table1", "--models", "GPT-6-astra,Claude-Opus-5.5"]
    command += [arg for name, model in MODELS.items() for arg in ("--as", f"{name}={model}")]
    return [*command, "-T", f"dataset={repo}", "--log-dir", log_dir, *extra]


def scripted_env(base_url: str, **more: str) -> dict[str, str]:
    return {
        **os.environ,
        "SCRIPTED_API_KEY": "test-key",
        "SCRIPTED_BASE_URL": base_url,
        "COLUMNS": "400",
        **more,
    }


def requests_sent(request_log: Path) -> int:
    return len(request_log.read_text().splitlines())


def finished_logs(log_dir: str) -> dict[str, object]:
    """Each model's finished log under the folder (local or remote), by model."""
    logs = [read_eval_log(info.name) for info in list_eval_logs(log_dir, recursive=True)]
    return {log.eval.model: log for log in logs if log.status == "success"}


@pytest.mark.slow
@pytest.mark.inspect_api  # one eval set a process, in folders of one log folder
def test_each_model_runs_in_its_own_process_and_a_rerun_sends_nothing(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, request_log = model_server
    env = scripted_env(base_url)
    log_dir = tmp_path / "logs"
    done = subprocess.run(
        recipe_command(str(log_dir), hss_repo), env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 models, 2 process(es) at once" in done.stdout
    logs = finished_logs(str(log_dir))
    assert sorted(logs) == sorted([MODELS["GPT-6-astra"], MODELS["Claude-Opus-5.5"]])
    for model in logs:
        assert (log_dir / folder_name(model)).is_dir()
        assert f"{model}: finished ({log_dir / folder_name(model)})" in done.stdout
    report = subprocess.run(
        [HSS_INSPECT, "report", str(log_dir), "--format", "json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert sorted(r["model"] for r in json.loads(report.stdout)["rows"]) == sorted(logs)

    before = requests_sent(request_log)
    again = subprocess.run(
        recipe_command(str(log_dir), hss_repo), env=env, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert requests_sent(request_log) == before  # nothing answered or judged twice


def descendants(pid: int) -> set[int]:
    """Every process under `pid`, from Linux's /proc children lists."""
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in found:
                    found.add(child)
                    frontier.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until(check: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(what)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_a_recipe_killed_leaves_no_process_and_the_same_command_finishes_it(
    hss_repo: Path, tmp_path: Path, signum: int
) -> None:
    from tests.support.servers import scripted_models

    with scripted_models(tmp_path / "slow-server") as (base_url, request_log):
        models = {**MODELS, "GPT-6-astra": "openai-api/scripted/candidate-a-slow"}
        command = recipe_command(str(tmp_path / "logs"), hss_repo)
        for name, model in models.items():
            command[command.index(f"{name}={MODELS[name]}")] = f"{name}={model}"
        env = scripted_env(base_url)
        recipe = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        wait_until(lambda: requests_sent(request_log) >= 4, 120, "no request was sent")
        workers = descendants(recipe.pid)
        assert len(workers) >= 2
        os.kill(recipe.pid, signum)
        recipe.wait(timeout=60)
        wait_until(lambda: not any(alive(p) for p in workers), 15, "a model's process outlived it")
        if signum == signal.SIGTERM:
            assert recipe.returncode == 128 + signal.SIGTERM
            assert b"Traceback" not in (recipe.stdout.read() if recipe.stdout else b"")
        again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(finished_logs(str(tmp_path / "logs"))) == 2


# ---- on Ray, the logs in an S3-compatible store -------------------------------------


@pytest.fixture
def s3_store(tmp_path: Path) -> Iterator[dict[str, str]]:
    """moto's S3 server on 127.0.0.1 with a bucket `hss-logs`; the environment that
    reaches it (botocore reads AWS_ENDPOINT_URL)."""
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    try:
        wait_until(lambda: _answers(env["AWS_ENDPOINT_URL"]), 30, "moto_server did not start")
        httpx.put(env["AWS_ENDPOINT_URL"] + "/hss-logs").raise_for_status()
        yield env
    finally:
        server.terminate()
        server.wait(timeout=10)


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
        return True
    except httpx.HTTPError:
        return False


@pytest.mark.slow
def test_on_a_local_ray_cluster_each_model_is_a_task_writing_to_s3(
    hss_repo: Path, model_server: tuple[str, Path], s3_store: dict[str, str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    pytest.importorskip("ray")
    for name, value in s3_store.items():
        monkeypatch.setenv(name, value)
    base_url, request_log = model_server
    # Ray's socket paths must stay under 107 bytes: a short folder of its own
    ray_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")
    env = scripted_env(base_url, RAY_TMPDIR=ray_dir, **s3_store)
    env.pop("RAY_ADDRESS", None)  # a cluster of its own, on this machine
    log_dir = "s3://hss-logs/run"
    command = recipe_command(log_dir, hss_repo, "--engine", "ray")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = finished_logs(log_dir)
    assert sorted(logs) == sorted([MODELS["GPT-6-astra"], MODELS["Claude-Opus-5.5"]])
    assert all(
        f"{model}: finished ({log_dir}/{folder_name(model)})" in done.stdout for model in logs
    )
    report = subprocess.run(
        [HSS_INSPECT, "report", log_dir, "--format", "json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert sorted(r["model"] for r in json.loads(report.stdout)["rows"]) == sorted(logs)
    before = requests_sent(request_log)
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    shutil.rmtree(ray_dir, ignore_errors=True)
    assert again.returncode == 0 and requests_sent(request_log) == before
