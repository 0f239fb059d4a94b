"""The demo runs from a built wheel, not only from the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from hss_inspect.data.demo import demo_root
from tests.support.runs import INSPECT

pytestmark = pytest.mark.slow

CHECKOUT = Path(__file__).parents[1]


def test_built_wheel_ships_the_demo_and_runs_it_offline(tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", tmp_path / "dist", CHECKOUT], check=True)
    (wheel,) = (tmp_path / "dist").glob("hss_inspect-*.whl")
    # Inspect names a package's tasks `package/task` when it is loaded from a site-packages.
    installed = tmp_path / "site-packages"
    subprocess.run([*pip, "install", "--no-deps", "--target", installed, wheel], check=True)

    shipped = installed / "hss_inspect" / "data" / "demo_data"
    in_tree = sorted(p.relative_to(demo_root()) for p in demo_root().rglob("*") if p.is_file())
    assert sorted(p.relative_to(shipped) for p in shipped.rglob("*") if p.is_file()) == in_tree

    # The wheel's copy comes first on the path; the checkout is not the working directory.
    env = {**os.environ, "PYTHONPATH": str(installed), "HF_HUB_OFFLINE": "1"}
    command = [INSPECT, "eval", "hss_inspect/hss_demo", "--model", "hss/scripted"]
    command += ["--model-role", "grader=hss/scripted", "--epochs", "1"]
    command += ["--log-dir", str(tmp_path / "logs"), "--display", "plain"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (log,) = [read_eval_log(info) for info in list_eval_logs(str(tmp_path / "logs"))]
    assert log.status == "success"
    assert log.eval.metadata is not None
    assert str(log.eval.metadata["hss_dataset"]).startswith(str(shipped.resolve()))
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    rows = (shipped / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    assert metrics["tasks"].value == len(rows) == 8
    assert metrics["grading_failure_rate"].value == 0
