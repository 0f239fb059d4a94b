"""The HSS tasks: `hss` with every option, and one task per preset in `task_configs/`."""

from __future__ import annotations

import inspect as pyinspect
import logging
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai._util.error import PrerequisiteError  # no public home; as scorer.py
from inspect_ai.model import get_model
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from hss_inspect.agentic.loop import hss_agent
from hss_inspect.answer import MODEL_ERRORS, answer
from hss_inspect.audit.task import build_audit_task
from hss_inspect.config import Preset, presets
from hss_inspect.dataset import build_dataset
from hss_inspect.judge import judge_prompts
from hss_inspect.labeler import DEFAULT_LABELER_RETRIES, failure_cause
from hss_inspect.limits import applied_limits, clamp_warnings, native_video_refusal
from hss_inspect.metrics import hss_mean
from hss_inspect.release import open_release
from hss_inspect.rows import OptionList, as_list, select_rows
from hss_inspect.scorer import rubric_judge
from hss_inspect.settings import (
    CONDITIONS,
    DEFAULT_AGENT,
    DEFAULT_DATASET,
    DEFAULT_EPOCHS,
    DEFAULT_FRAMES,
    DEFAULT_JUDGE_RETRIES,
    DEFAULT_MEDIA,
    DEFAULT_PERTURBER_RETRIES,
    DEFAULT_REVISION,
    AgentSettings,
    FrameSettings,
    MediaSettings,
    NativeVideo,
)
from hss_inspect.solver import hss_input, limits_record, oracle_answer

logger = logging.getLogger(__name__)


@task
def hss(
    dataset: str = DEFAULT_DATASET,
    revision: str = DEFAULT_REVISION,
    media: str = "all",
    domains: OptionList = None,
    subdomains: OptionList = None,
    condition: str = "standard",
    fps: float = DEFAULT_FRAMES.fps,
    max_frames: int = DEFAULT_FRAMES.max_frames,
    frame_side: int = DEFAULT_FRAMES.frame_side,
    max_images: int | None = DEFAULT_FRAMES.max_images,
    frame_bytes_budget: int = DEFAULT_MEDIA.frame_bytes_budget,
    image_max_side: int = DEFAULT_MEDIA.image_max_side,
    image_max_bytes: int = DEFAULT_MEDIA.image_max_bytes,
    native_video: str | bool = DEFAULT_MEDIA.native_video,
    media_timeout: float = DEFAULT_MEDIA.media_timeout,
    judge_retries: int = DEFAULT_JUDGE_RETRIES,
    agent_steps: int = DEFAULT_AGENT.max_steps,
    agent_tokens: int = DEFAULT_AGENT.max_output_tokens,
    agent_images: int = DEFAULT_AGENT.max_tool_images,
    agent_window_fps: float = DEFAULT_AGENT.window_fps,
    agent_window_frames: int = DEFAULT_AGENT.window_max_frames,
    agent_zoom_side: int = DEFAULT_AGENT.zoom_side,
    labeler: bool = False,
    labeler_retries: int = DEFAULT_LABELER_RETRIES,
    model_errors: str = "omit",
) -> Task:
    """Humanity's Sixth Sense: free-form visual reasoning graded by a rubric judge."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {', '.join(CONDITIONS)}, not {condition!r}")
    media_settings = MediaSettings(
        frames=FrameSettings(
            fps=float(fps),
            max_frames=int(max_frames),
            frame_side=int(frame_side),
            max_images=None if max_images is None else int(max_images),
        ),
        frame_bytes_budget=int(frame_bytes_budget),
        image_max_side=int(image_max_side),
        image_max_bytes=int(image_max_bytes),
        native_video=native_video_option(native_video),
        media_timeout=float(media_timeout),
    )
    agent = AgentSettings(
        max_steps=int(agent_steps),
        max_output_tokens=int(agent_tokens),
        max_tool_images=int(agent_images),
        window_fps=float(agent_window_fps),
        window_max_frames=int(agent_window_frames),
        zoom_side=int(agent_zoom_side),
    )
    if model_errors not in MODEL_ERRORS:
        raise ValueError(f"model_errors must be omit or fail, not {model_errors!r}")
    provider_limits = check_model_limits(media_settings, condition)
    release = open_release(dataset, revision)
    rows = select_rows(release.read_rows(), media, domains, subdomains)
    return Task(
        dataset=build_dataset(release, rows),
        solver=conditioned_solver(condition, release, media_settings, agent, model_errors),
        scorer=scorers(int(judge_retries), as_bool(labeler, "labeler"), int(labeler_retries)),
        epochs=Epochs(DEFAULT_EPOCHS, hss_mean()),
        version=version("hss-inspect"),
        metadata={
            "hss_condition": condition,
            "hss_dataset": release.description,
            "hss_dataset_requested": {"dataset": dataset, "revision": revision},
            "hss_dataset_revision": release.revision,
            "hss_dataset_pinned": release.revision is not None and release.revision == revision,
            "hss_selection": {
                "media": media,
                "domains": as_list(domains),
                "subdomains": as_list(subdomains),
                "tasks": len(rows),
            },
            "hss_media_settings": media_settings.as_dict(),
            "hss_provider_limits": provider_limits,
            "hss_model_errors": model_errors,
            "hss_judge_retries": int(judge_retries),
            "hss_judge_prompt_sha256": judge_prompts().sha256,
            **({"hss_agent_settings": agent.as_dict()} if condition == "agentic" else {}),
        },
    )


def scorers(judge_retries: int, labeler: bool, labeler_retries: int) -> list[Scorer]:
    """The rubric judge, then (optionally) the failure-cause labeller, which reads its score."""
    chosen = [rubric_judge(retries=judge_retries)]
    if labeler:
        chosen.append(failure_cause(retries=labeler_retries))
    return chosen


def as_bool(value: str | bool, option: str) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"{option} must be true or false, not {value!r}")
    return text == "true"


def native_video_option(value: str | bool) -> NativeVideo:
    text = str(value).strip().lower()
    if text not in ("auto", "true", "false"):
        raise ValueError(f"native_video must be auto, true or false, not {value!r}")
    return text  # type: ignore[return-value]


def conditioned_solver(
    condition: str,
    release: Any,
    media: MediaSettings,
    agent: AgentSettings,
    model_errors: str = "omit",
) -> list[Solver]:
    if condition == "oracle":
        return [oracle_answer()]
    if condition == "agentic":
        return [hss_input(release, media, "standard"), hss_agent(release, media, agent)]
    return [hss_input(release, media, condition), answer(model_errors)]  # type: ignore[arg-type]


def model_under_evaluation() -> str | None:
    """The model Inspect is creating this task for (None outside an eval)."""
    try:
        return str(get_model())
    except Exception:  # no active model: the task was built outside `inspect eval`
        return None


def check_model_limits(media: MediaSettings, condition: str) -> dict[str, Any] | None:
    """Refuse native video the provider cannot take; warn about clamped options; the
    limits that will apply, for the eval's metadata."""
    model = model_under_evaluation()
    if model is None or condition not in ("standard", "agentic"):
        return None
    refusal = native_video_refusal(media, model)
    if refusal is not None:
        raise PrerequisiteError(refusal)  # printed as one line by Inspect, no traceback
    limits = applied_limits(media, model)
    for warning in clamp_warnings(limits):
        logger.warning(warning)
    return limits_record(limits)


def _preset_task(preset: Preset) -> Callable[..., Task]:
    """A task that is `hss` with the preset's options as defaults (still overridable)."""

    def preset_task(**overrides: Any) -> Task:
        return hss(**{**preset.task_args, **overrides})

    signature = pyinspect.signature(hss)
    preset_task.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[
            p.replace(default=preset.task_args.get(name, p.default))
            for name, p in signature.parameters.items()
        ]
    )
    preset_task.__name__ = preset.name
    preset_task.__doc__ = preset.description or hss.__doc__
    return task(name=preset.name)(preset_task)


PRESET_TASKS = {preset.name: _preset_task(preset) for preset in presets()}


@task
def hss_judge_audit(
    dataset: str = DEFAULT_DATASET,
    revision: str = DEFAULT_REVISION,
    media: str = "all",
    domains: OptionList = None,
    subdomains: OptionList = None,
    kinds: OptionList = None,
    sample_tasks: int | None = None,
    judge_retries: int = DEFAULT_JUDGE_RETRIES,
    perturber_retries: int = DEFAULT_PERTURBER_RETRIES,
) -> Task:
    """The judge audit: answers with verdicts known by construction, graded by the `grader`."""
    return build_audit_task(
        dataset,
        revision,
        media,
        domains,
        subdomains,
        kinds,
        sample_tasks,
        judge_retries,
        perturber_retries,
    )
