"""The code stays formatted, linted, type-checked and register-clean: run as part of the
test command."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def _names(requirements: list[str]) -> set[str]:
    return {_distribution(re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0]) for r in requirements}


def _project() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")
    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"])


def _third_party_imports() -> list[tuple[str, Path, bool]]:
    """Each third-party module the package imports: its top name, the file, and whether the
    import runs when the module loads (at module level, outside a try block)."""
    found = []
    for path in sorted((ROOT / "src" / "hss_inspect").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        eager = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for top in {name.split(".")[0] for name in names}:
                if top not in sys.stdlib_module_names and top not in ("hss_inspect", "__future__"):
                    found.append((top, path.relative_to(ROOT), id(node) in eager))
    return found


def _undeclared(imports: list[tuple[str, Path, bool]], declared: set[str]) -> list[str]:
    providers = importlib.metadata.packages_distributions()
    return sorted(
        {
            f"{top} ({path})"
            for top, path, _ in imports
            if not {_distribution(d) for d in providers.get(top, [top])} & declared
        }
    )


def test_every_module_level_import_is_a_declared_dependency() -> None:
    """The register lints a package without its installed environment, where an import
    that arrives only as another package's requirement (anyio through inspect-ai) is
    undeclared: each module-level third-party import must be named in pyproject.toml."""
    declared = _names(_project()["dependencies"])
    eager = [found for found in _third_party_imports() if found[2]]
    undeclared = _undeclared(eager, declared)
    assert not undeclared, f"declare in [project].dependencies: {undeclared}"


def test_every_deferred_import_is_declared_as_a_dependency_or_in_an_extra() -> None:
    """An import inside a function (rich in core/errors.py, matplotlib in the report's
    plots) must be declared too: in the dependencies, or in the extra of the feature that
    needs it, as the register's lint asks (IECQ004)."""
    project = _project()
    declared = _names(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared |= _names(extra)
    deferred = [found for found in _third_party_imports() if not found[2]]
    assert any(top == "rich" for top, _, _ in deferred)  # the case the lint found
    undeclared = _undeclared(deferred, declared)
    assert not undeclared, f"declare in pyproject.toml: {undeclared}"
