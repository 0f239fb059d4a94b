"""The package's layers (pyproject.toml `[tool.importlinter]`, described in the package
docstring) hold, cover every room, and the check really catches an upward import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "hss_inspect"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def top_level_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [
        c for c in config["tool"]["importlinter"]["contracts"] if c["containers"] == ["hss_inspect"]
    ]
    return [room.strip() for layer in contract["layers"] for room in layer.split("|")]


def rooms_on_disk() -> set[str]:
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    return modules | packages


def run_lint_imports(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_every_module_and_subpackage_has_a_layer() -> None:
    assert rooms_on_disk() == set(top_level_layers())


def test_the_layers_hold() -> None:
    done = run_lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("core/settings.py", "hss_inspect.task"),  # the ground floor reaching the top
        (
            "grading/metrics.py",
            "hss_inspect.conditions.prompt",
        ),  # one room of a layer to its neighbour
        ("media/plan.py", "hss_inspect.media.service"),  # inside a room, upwards
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path: Path, module: str, upward: str) -> None:
    copy = tmp_path / "src" / "hss_inspect"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "demo_data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + f"\nimport {upward}  # noqa\n")
    done = run_lint_imports(tmp_path, pythonpath=tmp_path / "src")
    assert done.returncode != 0
    importer = "hss_inspect." + module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {upward}" in done.stdout
