"""The YAML that ships with the package: provider limits, paper data, judge prompts, the
release commit the package was validated against, and the package's own eval.yaml."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any

import yaml

RELEASE_FILE = "release.yaml"
FULL_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def data_dir(name: str) -> Path:
    """`task_configs` or `scorers`: inside the installed wheel, else beside `src/` (editable)."""
    packaged = Path(str(files("hss_inspect"))) / name
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"hss_inspect is installed without its {name}/ folder; reinstall it")


def load_yaml(folder: str, filename: str) -> dict[str, Any]:
    path = data_dir(folder) / filename
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return loaded


@dataclass(frozen=True)
class PromptSet:
    """A model's instructions from `scorers/`: system message, request and re-ask templates."""

    system: str
    user: Template
    retry: Template
    version: str

    @property
    def sha256(self) -> str:
        text = "\n".join([self.system, self.user.template, self.retry.template])
        return hashlib.sha256(text.encode()).hexdigest()


@cache
def prompt_set(filename: str) -> PromptSet:
    """The prompts of `scorers/<filename>` (keys system, user, retry, version)."""
    loaded = load_yaml("scorers", filename)
    return PromptSet(
        system=str(loaded["system"]).strip(),
        user=Template(str(loaded["user"]).strip()),
        retry=Template(str(loaded["retry"]).strip()),
        version=str(loaded.get("version", "")),
    )


@cache
def eval_metadata() -> dict[str, Any]:
    """The package's eval.yaml (the Inspect Evals register's format): title, description,
    tasks, the task version `N-X`, the external assets."""
    text = (files("hss_inspect") / "eval.yaml").read_text(encoding="utf-8")
    return dict(yaml.safe_load(text))


def comparable_part(version: str) -> str:
    """N of a task version `N-X`: results of two versions are comparable when it is equal
    (the Inspect Evals register's rule)."""
    return version.split("-")[0]


@cache
def release_commit() -> str | None:
    """The commit of the HSS release (the hub dataset `-T dataset` names by default) that
    this package was validated against, from task_configs/release.yaml; None until a
    maintainer sets it, and runs then read the branch `main` (docs/publishing.md)."""
    path = data_dir("task_configs") / RELEASE_FILE
    return commit_in(load_yaml("task_configs", RELEASE_FILE), str(path))


def commit_in(release: dict[str, Any], where: str) -> str | None:
    """The `commit` of a release file: None (not set) or a full commit id."""
    commit = release.get("commit")
    if commit is None:
        return None
    if not isinstance(commit, str) or not FULL_COMMIT.match(commit):
        raise ValueError(
            f"{where}: commit {commit!r} is not a full commit id; give the 40 lowercase hex "
            "digits of the dataset's commit as a quoted string, or null"
        )
    return commit
