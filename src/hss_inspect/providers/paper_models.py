"""The paper's model registry (Table 5: each model and judge with its endpoint, effort and
output ceiling) and its request settings (App. C.1, C.4), read from
`task_configs/paper_models.yaml`. Native video and frame caps are not stored there: they are
whatever `task_configs/model_limits.yaml` gives the model's Inspect name, so the registry
and the eval never disagree about them. The published Table 1 rows are `report.paper`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from hss_inspect.core.config import load_yaml, release_commit
from hss_inspect.core.errors import InputError
from hss_inspect.core.names import unknown_text
from hss_inspect.core.settings import DEFAULT_FRAMES
from hss_inspect.providers.limits import limits_for

PAPER_FILE = "paper_models.yaml"


@dataclass(frozen=True)
class Deployment:
    """One model (or judge) as the paper called it."""

    name: str
    vendor: str
    endpoint: str
    api: str
    effort: str
    max_tokens: int | None
    inspect_model: str
    settings_published: bool = True

    @property
    def native_video(self) -> bool:
        return limits_for(self.inspect_model).native_video

    @property
    def frame_cap(self) -> int:
        cap = limits_for(self.inspect_model).max_images
        return DEFAULT_FRAMES.max_frames if cap is None else min(cap, DEFAULT_FRAMES.max_frames)


@cache
def paper_data() -> dict[str, Any]:
    return load_yaml("task_configs", PAPER_FILE)


def request_settings() -> dict[str, int]:
    """Timeout (s), retries and attempts of every request of the paper (App. C.1, C.4)."""
    return {k: int(v) for k, v in paper_data()["request"].items()}


@dataclass(frozen=True)
class PaperRelease:
    """What the paper's published rows measured: ScaleAI/HSS at its release commit (None
    until task_configs/release.yaml records it), and the N of the task versions whose
    results this package keeps comparable with them."""

    commit: str | None
    task_version: int


def paper_release() -> PaperRelease:
    return PaperRelease(release_commit(), int(paper_data()["release"]["comparable_task_version"]))


def release_tasks() -> int:
    """Tasks of the released benchmark (Sec. 2.4, Table 3)."""
    return int(paper_data()["release"]["tasks"])


def construction_funnel() -> tuple[int, tuple[int, ...]]:
    """Tasks authored, and the net survivors after each review round (Sec. 2.4, Fig. 8)."""
    funnel = paper_data()["construction"]
    after = [int(n) for n in funnel["after_rounds"]]
    return int(funnel["authored"]), (*after, release_tasks())


def release_media_tasks() -> dict[str, int]:
    """Tasks of the released benchmark by media type (Sec. 2.4, Table 3)."""
    return {media: int(n) for media, n in paper_data()["release"]["media"].items()}


def generate_settings(model: Deployment, effort: str | None = None) -> dict[str, Any]:
    """The generate options the paper ran `model` with (Table 5, App. C.1), at `effort`
    instead of its own where given."""
    request = request_settings()
    settings: dict[str, Any] = {
        "reasoning_effort": effort or model.effort,
        "timeout": request["timeout"],
        "max_retries": request["max_retries"],
    }
    if model.max_tokens is not None:
        settings["max_tokens"] = model.max_tokens
    return settings


def judge_settings(judge: Deployment) -> dict[str, Any]:
    """A judge as the paper ran it: its model and generate options (Table 5)."""
    settings: dict[str, Any] = {"model": judge.inspect_model, "reasoning_effort": judge.effort}
    if judge.max_tokens is not None:
        settings["max_tokens"] = judge.max_tokens
    return settings


def deployments() -> list[Deployment]:
    return [_deployment(entry, entry["model"]) for entry in paper_data()["models"]]


def judges() -> list[Deployment]:
    return [_deployment(entry, entry["name"]) for entry in paper_data()["judges"]]


# Where a user finds the names of Table 5: every model's run, as the recipe gives it.
TABLE5_LISTED = "`hss-inspect recipe table1 --dry-run` lists them"


def deployment(name: str) -> Deployment:
    """A model or judge of Table 5 by its name there, its Inspect name or its endpoint."""
    for found in deployments() + judges():
        if name in (found.name, found.inspect_model, found.endpoint):
            return found
    known = [d.name for d in deployments() + judges()]
    raise InputError(unknown_text(name, "a model of the paper's Table 5", known, TABLE5_LISTED))


def _deployment(entry: dict[str, Any], name: str) -> Deployment:
    return Deployment(
        name=name,
        vendor=str(entry.get("vendor", "Judge")),
        endpoint=str(entry["endpoint"]),
        api=str(entry["api"]),
        effort=str(entry["effort"]),
        max_tokens=entry.get("max_tokens"),
        inspect_model=str(entry["inspect_model"]),
        settings_published=bool(entry.get("settings_published", True)),
    )
