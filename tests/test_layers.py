"""The package's layers (pyproject.toml `[tool.importlinter]`) hold, cover every room and
module, and the check really catches an upward import; the map (the package docstring,
each room's docstring, and docs/development.md) names every room and module that exists,
nothing that does not, and the layers the contracts enforce."""

from __future__ import annotations

import ast
import os
import re
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


def contracts() -> dict[str, list[list[str]]]:
    """Each layers contract's container and its layers, each a list of rooms or modules."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {
        c["containers"][0]: [[name.strip() for name in layer.split("|")] for layer in c["layers"]]
        for c in config["tool"]["importlinter"]["contracts"]
    }


def top_level_layers() -> list[str]:
    return [room for layer in contracts()["hss_inspect"] for room in layer]


def rooms_on_disk(folder: Path = PACKAGE) -> set[str]:
    modules = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return modules | packages


def rooms() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)


def docstring(folder: Path) -> str:
    return ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""


def package_map() -> str:
    """The package docstring from the sample's path to the end: the map."""
    text = docstring(PACKAGE)
    return text[text.index("One sample's path through the rooms") :]


def mapped_layers(text: str) -> list[list[str]]:
    """The layers the map lists: each line indented by four spaces under "The layers"
    starts with its rooms, joined by `|`; deeper lines continue a description."""
    block = text[text.index("The layers, top to bottom") :]
    layers = []
    for line in block.splitlines():
        found = re.match(r"^ {4}(\S.*?)(?: {2,}|$)", line)
        if found:
            layers.append([name.strip() for name in found.group(1).split("|")])
    return layers


def listed_modules(folder: Path) -> list[str]:
    """The modules a room's docstring lists: one `- `name`:` line each (`name/` a room)."""
    return re.findall(r"^- `(\w+)/?`:", docstring(folder), flags=re.MULTILINE)


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


def test_the_map_lists_the_layers_the_contracts_enforce() -> None:
    assert mapped_layers(package_map()) == contracts()["hss_inspect"]


def test_every_room_lists_its_modules_and_nothing_else() -> None:
    for folder in rooms():
        listed = listed_modules(folder)
        where = folder.relative_to(PACKAGE)
        assert sorted(listed) == sorted(rooms_on_disk(folder)), where
        assert len(listed) == len(set(listed)), where


def test_every_room_with_a_contract_gives_each_module_a_layer() -> None:
    for container, layers in contracts().items():
        folder = PACKAGE.joinpath(*container.split(".")[1:])
        assert sorted(name for layer in layers for name in layer) == sorted(
            rooms_on_disk(folder)
        ), container


def test_the_path_of_a_sample_names_only_modules_that_exist() -> None:
    path = package_map()[: package_map().index("The layers, top to bottom")]
    named = re.findall(r"`(\w+/\w*)`", path)  # a room (`data/`) or one of its modules
    assert named, "the path names no module"
    for name in named:
        target = PACKAGE / name
        assert target.with_suffix(".py").is_file() or (target / "__init__.py").is_file(), name
    steps = re.findall(r"^\d+\. (\w[\w ]*):", path, flags=re.MULTILINE)
    assert steps == [
        "task", "solver", "user turn", "media", "generate", "scorer", "judge", "metrics",
        "log", "report",
    ]  # fmt: skip


def test_the_development_guide_opens_with_the_same_map() -> None:
    guide = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    fenced = re.search(r"```text\n(.*?)```", guide, flags=re.DOTALL)
    assert fenced is not None, "docs/development.md has no ```text block holding the map"
    assert fenced.group(1).strip() == package_map().strip()
