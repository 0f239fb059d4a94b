"""HSS inside someone else's suite: one `inspect eval-set` with HSS tasks and a foreign task.

Runs offline with the package's scripted provider in both roles, on the shipped demo set.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from hss_inspect.data.demo import demo_root
from hss_inspect.scripted import FIXED_ANSWER
from tests.support.runs import INSPECT

pytestmark = [pytest.mark.slow, pytest.mark.inspect_api]

OTHER_SUITE = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def repeat_after_me():
    """A task of another suite: the answer must contain the target."""
    return Task(
        dataset=[Sample(input="Say something.", target={target!r})],
        solver=generate(),
        scorer=includes(),
    )
'''


def metrics_of(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def test_eval_set_runs_hss_beside_another_suites_task(tmp_path: Path) -> None:
    suite = tmp_path / "other_suite.py"
    suite.write_text(textwrap.dedent(OTHER_SUITE).format(target=FIXED_ANSWER[:40]))
    log_dir = tmp_path / "logs"
    command = [INSPECT, "eval-set", "hss_inspect/hss_demo", "hss_inspect/hss_oracle"]
    command += [f"{suite}@repeat_after_me", "-T", "dataset=demo", "--epochs", "1"]
    command += ["--model", "hss/scripted", "--model-role", "grader=hss/scripted"]
    command += ["--log-dir", str(log_dir), "--display", "plain"]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = {log.eval.task: log for log in map(read_eval_log, list_eval_logs(str(log_dir)))}
    assert set(logs) == {"hss_inspect/hss_demo", "hss_inspect/hss_oracle", "repeat_after_me"}
    assert all(log.status == "success" for log in logs.values())

    rows = [json.loads(line) for line in (demo_root() / "data" / "test.jsonl").open()]
    # The scripted judge's rule: met only when the answer contains the reference answer.
    standard, oracle = (
        metrics_of(logs["hss_inspect/hss_demo"]),
        metrics_of(logs["hss_inspect/hss_oracle"]),
    )
    for metrics, passes in ((standard, 0.0), (oracle, 1.0)):
        assert metrics["pass_at_1"] == passes and metrics["rubric"] == passes
        assert metrics["tasks"] == len(rows)
        assert metrics["grading_failure_rate"] == 0 and metrics["no_answer_rate"] == 0
    assert metrics_of(logs["repeat_after_me"])["accuracy"] == 1.0

    samples = logs["hss_inspect/hss_demo"].samples or []
    expected_ids = {r["task_id"]: [c["id"] for c in r["rubric_criteria"]] for r in rows}
    for sample in samples:
        (score,) = (sample.scores or {}).values()
        assert [v["id"] for v in (score.metadata or {})["verdicts"]] == expected_ids[sample.id]
        assert sample.output.completion == FIXED_ANSWER
