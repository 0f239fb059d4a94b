"""The edges of `hss-inspect build` a lab meets in its first week, through the real command:
a check whose `inspect eval` fails says Inspect's own reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.build_pool import Build, build, new_build, task_row, write_tasks

pytestmark = pytest.mark.slow


def in_review(tmp_path: Path) -> Build:
    b = new_build(tmp_path, "--authors", "ann", "--reviewers", "r1,r2,r3")
    rows = [task_row("one", "street.png"), task_row("two", "clips/ball.mp4", "video")]
    tasks = write_tasks(tmp_path / "tasks.jsonl", rows)
    build("import", str(b.path), str(tasks), "--author", "ann")
    return b


def test_a_check_without_the_judges_key_says_inspects_reason(tmp_path: Path) -> None:
    b = in_review(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["COLUMNS"] = "400"
    done = build(
        "check", str(b.path), "--model-role", "grader=anthropic/claude-opus-5", env=env, ok=False
    )
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("hss-inspect build: the checks wrote no log to "), line
    assert line.endswith(
        ": the judge's reference check failed: Unable to initialise Anthropic client: "
        "No ANTHROPIC_API_KEY defined in the environment."
    ), line
