"""The YAML that ships with the package: provider limits, paper data, judge prompts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Any

import yaml


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
