"""The code stays formatted, linted, type-checked and register-clean: run as part of the
test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "src", "tests", "benchmarks"],
        ["ruff", "format", "--check", "src", "tests", "benchmarks"],
        ["mypy"],
        # The Inspect Evals register's checks, with the single-eval preset (pyproject.toml).
        ["inspect-evals-lint", "hss_inspect"],
    ],
    ids=["ruff-check", "ruff-format", "mypy", "inspect-evals-lint"],
)
def test_tool_passes(command: list[str]) -> None:
    done = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
