"""The YAML that ships with the package: model limits and judge prompts."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml


def data_dir(name: str) -> Path:
    """`task_configs` or `scorers`: inside the installed wheel, else beside `src/` (editable)."""
    packaged = Path(str(files("hss_inspect"))) / name
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / name
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
class ModelLimits:
    max_images: int | None = None
    native_video: bool = False


@cache
def _limit_rules() -> tuple[tuple[str, ModelLimits], ...]:
    rules = load_yaml("task_configs", "model_limits.yaml")["models"]
    return tuple(
        (
            str(rule["match"]),
            ModelLimits(rule.get("max_images"), bool(rule.get("native_video", False))),
        )
        for rule in rules
    )


def limits_for(model_name: str) -> ModelLimits:
    """The first rule of `model_limits.yaml` matching the model, else no limits."""
    for pattern, limits in _limit_rules():
        if fnmatch.fnmatch(model_name.lower(), pattern.lower()):
            return limits
    return ModelLimits()
