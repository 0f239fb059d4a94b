"""The code stays formatted, linted, type-checked and register-clean: run as part of the
test command."""

from __future__ import annotations

import ast
import importlib.metadata
import re
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
        # The whole tree's types and the register's checks (single-eval preset, pyproject.toml)
        # take half a minute from a cold cache: slow.
        pytest.param(["mypy"], marks=pytest.mark.slow),
        pytest.param(["inspect-evals-lint", "hss_inspect"], marks=pytest.mark.slow),
    ],
    ids=["ruff-check", "ruff-format", "mypy", "inspect-evals-lint"],
)
def test_tool_passes(command: list[str]) -> None:
    done = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _distribution(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_module_level_import_is_a_declared_dependency() -> None:
    """The register lints a package without its installed environment, where an import
    that arrives only as another package's requirement (anyio through inspect-ai) is
    undeclared: each module-level third-party import must be named in pyproject.toml."""
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {
        _distribution(re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0]) for r in project["dependencies"]
    }
    providers = importlib.metadata.packages_distributions()
    undeclared = set()
    for path in (ROOT / "src" / "hss_inspect").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue  # deferred imports (in functions, try blocks) may be optional
            for top in {name.split(".")[0] for name in names}:
                if top in sys.stdlib_module_names or top in ("hss_inspect", "__future__"):
                    continue
                if not {_distribution(d) for d in providers.get(top, [top])} & declared:
                    undeclared.add(f"{top} ({path.relative_to(ROOT)})")
    assert not undeclared, f"declare in [project].dependencies: {sorted(undeclared)}"
