"""Running the real `inspect eval` command line against the scripted models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

INSPECT = str(Path(sys.executable).with_name("inspect"))
CANDIDATE = "openai-api/scripted/candidate"
JUDGE = "openai-api/scripted/judge"


def run_eval(
    task: str,
    log_dir: Path,
    base_url: str,
    *args: str,
    task_args: dict[str, object] | None = None,
    epochs: int | None = None,
    model: str = CANDIDATE,
    grader: str | None = JUDGE,
    env: dict[str, str] | None = None,
    timeout: float = 300,
    program: tuple[str, ...] = (INSPECT,),
) -> tuple[EvalLog, subprocess.CompletedProcess[str]]:
    """Run one eval in a child process; returns its log (read in full) and the process.

    `program` replaces the `inspect` command (e.g. tests/support/faulty_inspect.py)."""
    command = eval_command(task, log_dir, args, task_args, epochs, model, grader, program)
    return _run_logged(command, log_dir, base_url, env, timeout)


def eval_command(
    task: str,
    log_dir: Path,
    args: tuple[str, ...] = (),
    task_args: dict[str, object] | None = None,
    epochs: int | None = None,
    model: str = CANDIDATE,
    grader: str | None = JUDGE,
    program: tuple[str, ...] = (INSPECT,),
) -> list[str]:
    command = [*program, "eval", task, "--model", model, "--log-dir", str(log_dir)]
    command += ["--display", "plain", "--log-format", "eval", *args]
    for name, value in (task_args or {}).items():
        command += ["-T", f"{name}={value}"]
    if epochs is not None:
        command += ["--epochs", str(epochs)]
    if grader:
        command += ["--model-role", f"grader={grader}"]
    return command


def run_refused(
    task: str,
    log_dir: Path,
    base_url: str,
    *args: str,
    task_args: dict[str, object] | None = None,
    model: str = CANDIDATE,
    grader: str | None = JUDGE,
) -> subprocess.CompletedProcess[str]:
    """An eval the task refuses to start: the process, after checking that it exited non-zero,
    printed no traceback and wrote no log."""
    command = eval_command(task, log_dir, args, task_args, None, model, grader)
    env = {**os.environ, "SCRIPTED_API_KEY": "test-key", "SCRIPTED_BASE_URL": base_url}
    env["COLUMNS"] = "400"
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in output, output
    assert not list(log_dir.glob("*.eval")), "the refused eval wrote a log"
    return done


def retry_eval(
    log: EvalLog,
    base_url: str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> tuple[EvalLog, subprocess.CompletedProcess[str]]:
    """`inspect eval-retry` of `log` into its own folder; returns the new log and the process."""
    log_dir = Path(log.location).parent
    command = [INSPECT, "eval-retry", log.location, "--log-dir", str(log_dir)]
    command += ["--display", "plain", *args]
    return _run_logged(command, log_dir, base_url, env, timeout)


def _run_logged(
    command: list[str],
    log_dir: Path,
    base_url: str,
    env: dict[str, str] | None,
    timeout: float,
) -> tuple[EvalLog, subprocess.CompletedProcess[str]]:
    child_env = {
        **os.environ,
        "SCRIPTED_API_KEY": "test-key",
        "SCRIPTED_BASE_URL": base_url,
        "COLUMNS": "400",  # keep console lines whole for assertions on them
        **(env or {}),
    }
    before = set(log_dir.glob("*.eval")) if log_dir.exists() else set()
    done = subprocess.run(command, env=child_env, capture_output=True, text=True, timeout=timeout)
    written = sorted(set(log_dir.glob("*.eval")) - before)
    assert written, f"no log written\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return read_eval_log(str(written[-1])), done


_PRICED_RUN = """
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelCost, ModelInfo, set_model_info
from hss_inspect.task import hss_demo
set_model_info("hss/scripted", ModelInfo(cost=ModelCost(**json.loads(sys.argv[2]))))
(log,) = eval(hss_demo(), model="hss/scripted", model_roles={"grader": "hss/scripted"},
    epochs=1, log_dir=sys.argv[1], display="none")
print(log.location)
"""


def priced_scripted_run(log_dir: Path, price: dict[str, float]) -> EvalLog:
    """The demo set, one epoch, with `hss/scripted` answering and judging at `price` (the
    four ModelCost fields) registered in Inspect, so Inspect records the cost of each call.
    In a child process, so the price stays out of the tests' own; `set_model_info`, as
    `--model-cost-config` refuses a model Inspect's database does not know."""
    command = [sys.executable, "-c", _PRICED_RUN, str(log_dir), json.dumps(price)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return read_eval_log(done.stdout.strip().splitlines()[-1])


# Inspect's banner of registered hooks (its version, the count, one line per hook), which
# it prints before an eval's own output when the package's hooks are registered.
_BANNER = ("inspect_ai v", "- hooks enabled:", "  hss_inspect/")


def lines_after_banner(output: str) -> list[str]:
    """The non-blank lines of a command's output that are not Inspect's hook banner."""
    return [line for line in output.splitlines() if line.strip() and not line.startswith(_BANNER)]


def outcome(log: EvalLog) -> dict[str, Any]:
    """What a run gave: its metrics, and per attempt the answer and the judge's score."""
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()} if log.results else {}
    attempts = {
        (str(s.id), s.epoch): (s.output.completion, s.scores and s.scores["rubric_judge"].value)
        for s in log.samples or []
    }
    return {"status": log.status, "metrics": metrics, "attempts": attempts}
