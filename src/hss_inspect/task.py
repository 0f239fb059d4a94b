"""The HSS tasks: `hss` with every option, and one explicit task per preset.

A preset is `hss` with a few options fixed by default (still overridable with `-T`).
Each is a plain `@task` function so that `inspect list tasks` and the register's tools,
which read tasks from source, see every one of them.
"""

from __future__ import annotations

import logging
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.model import get_model
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from hss_inspect import options as opt
from hss_inspect.agentic.loop import hss_agent
from hss_inspect.answer import DEFAULT_MODEL_ERRORS, MODEL_ERRORS, answer
from hss_inspect.audit.task import build_audit_task
from hss_inspect.dataset import build_dataset
from hss_inspect.errors import SetupError
from hss_inspect.judge import judge_prompts
from hss_inspect.labeler import DEFAULT_LABELER_RETRIES, failure_cause
from hss_inspect.limits import applied_limits, clamp_warnings, native_video_refusal
from hss_inspect.release import Release, open_release
from hss_inspect.rows import OptionList, TaskRow, as_list, select_rows
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
    MEDIA_CHOICES,
    NATIVE_VIDEO_CHOICES,
    AgentSettings,
    FrameSettings,
    MediaSettings,
    NativeVideo,
)
from hss_inspect.solver import hss_input, limits_record, oracle_answer
from hss_inspect.versioning import comparability_version, task_version

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
    model_errors: str = DEFAULT_MODEL_ERRORS,
) -> Task:
    """Humanity's Sixth Sense: free-form visual reasoning graded by a rubric judge."""
    condition = opt.choice("condition", condition, CONDITIONS)
    media = opt.choice("media", media, MEDIA_CHOICES)
    media_settings = media_settings_from(
        fps, max_frames, frame_side, max_images, frame_bytes_budget,
        image_max_side, image_max_bytes, native_video, media_timeout,
    )  # fmt: skip
    retries = opt.whole_number("judge_retries", judge_retries, 0)
    agent = AgentSettings(
        max_steps=opt.whole_number("agent_steps", agent_steps, 1),
        max_output_tokens=opt.whole_number("agent_tokens", agent_tokens, 1),
        max_tool_images=opt.whole_number("agent_images", agent_images, 0),
        window_fps=opt.positive_number("agent_window_fps", agent_window_fps),
        window_max_frames=opt.whole_number("agent_window_frames", agent_window_frames, 1),
        zoom_side=opt.whole_number("agent_zoom_side", agent_zoom_side, 64),
    )
    model_errors = opt.choice("model_errors", model_errors, MODEL_ERRORS)
    labelled = opt.choice("labeler", labeler, ("true", "false")) == "true"
    provider_limits = check_model_limits(media_settings, condition)
    release = open_release(dataset, revision)
    rows = selected_rows(release, media, domains, subdomains)
    return Task(
        dataset=build_dataset(release, rows),
        solver=conditioned_solver(
            condition, release, media_settings, agent, model_errors, labelled
        ),
        scorer=scorers(retries, labelled, opt.whole_number("labeler_retries", labeler_retries, 0)),
        epochs=Epochs(DEFAULT_EPOCHS, "mean"),
        version=comparability_version(),
        metadata={
            "hss_task_version": task_version(),
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
                "videos": sum(row.media_type == "video" for row in rows),
            },
            "hss_media_settings": media_settings.as_dict(),
            "hss_provider_limits": provider_limits,
            "hss_model_errors": model_errors,
            "hss_judge_retries": retries,
            "hss_judge_prompt_sha256": judge_prompts().sha256,
            **({"hss_agent_settings": agent.as_dict()} if condition == "agentic" else {}),
        },
    )


# Presets. `kwargs` (by that name, which every supported Inspect passes through) takes
# any option of `hss`; the preset's own values are defaults a user may still override.


@task
def hss_image(**kwargs: Any) -> Task:
    """HSS image tasks only: the image column of the paper's Table 1."""
    return hss(**{"media": "image", **kwargs})


@task
def hss_video(**kwargs: Any) -> Task:
    """HSS video tasks only: the video column of Table 1 and the frame sweep of App. H."""
    return hss(**{"media": "video", **kwargs})


@task
def hss_blind(**kwargs: Any) -> Task:
    """The blind control (Sec. 3.1): the question alone, no media, no media note."""
    return hss(**{"condition": "blind", **kwargs})


@task
def hss_agentic(**kwargs: Any) -> Task:
    """The agentic condition (Sec. 3.3, App. D and F): inspection tools, then one answer."""
    return hss(**{"condition": "agentic", **kwargs})


@task
def hss_demo(**kwargs: Any) -> Task:
    """The eight-task demo set shipped in the package: checks a setup in a minute, offline."""
    return hss(**{"dataset": "demo", **kwargs})


@task
def hss_oracle(**kwargs: Any) -> Task:
    """Reference answers graded by the judge (run with --model none): the judge's error bound."""
    return hss(**{"condition": "oracle", **kwargs})


def scorers(judge_retries: int, labeler: bool, labeler_retries: int) -> list[Scorer]:
    """The rubric judge, then (optionally) the failure-cause labeller, which reads its score."""
    chosen = [rubric_judge(retries=judge_retries)]
    if labeler:
        chosen.append(failure_cause(retries=labeler_retries))
    return chosen


def media_settings_from(
    fps: Any,
    max_frames: Any,
    frame_side: Any,
    max_images: Any,
    frame_bytes_budget: Any,
    image_max_side: Any,
    image_max_bytes: Any,
    native_video: Any,
    media_timeout: Any,
) -> MediaSettings:
    """The media options, each checked and named in the error when wrong."""
    return MediaSettings(
        frames=FrameSettings(
            fps=opt.positive_number("fps", fps),
            max_frames=opt.whole_number("max_frames", max_frames, 1),
            frame_side=opt.whole_number("frame_side", frame_side, 16),
            max_images=opt.optional_whole_number("max_images", max_images, 1),
        ),
        frame_bytes_budget=opt.whole_number("frame_bytes_budget", frame_bytes_budget, 1),
        image_max_side=opt.whole_number("image_max_side", image_max_side, 16),
        image_max_bytes=opt.whole_number("image_max_bytes", image_max_bytes, 1),
        native_video=native_video_option(native_video),
        media_timeout=opt.positive_number("media_timeout", media_timeout),
    )


def native_video_option(value: Any) -> NativeVideo:
    return opt.choice("native_video", value, NATIVE_VIDEO_CHOICES)  # type: ignore[return-value]


def selected_rows(
    release: Release, media: str, domains: OptionList, subdomains: OptionList
) -> list[TaskRow]:
    rows = release.read_rows()
    try:
        return select_rows(rows, media, domains, subdomains)
    except ValueError as exc:
        raise SetupError(f"-T domains/subdomains: {exc}") from None


def conditioned_solver(
    condition: str,
    release: Release,
    media: MediaSettings,
    agent: AgentSettings,
    model_errors: str = DEFAULT_MODEL_ERRORS,
    labeler: bool = False,
) -> list[Solver]:
    """The solvers of `condition`; the first refuses to start without the roles needed."""
    if condition == "oracle":
        return [oracle_answer(labeler)]
    if condition == "agentic":
        return [
            hss_input(release, media, "standard", labeler),
            hss_agent(release, media, agent, model_errors),  # type: ignore[arg-type]
        ]
    return [
        hss_input(release, media, condition, labeler),
        answer(model_errors),  # type: ignore[arg-type]
    ]


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
        raise SetupError(refusal)
    limits = applied_limits(media, model)
    for warning in clamp_warnings(limits):
        logger.warning(warning)
    return limits_record(limits)


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
    media = opt.choice("media", media, MEDIA_CHOICES)
    release = open_release(dataset, revision)
    return build_audit_task(
        release,
        selected_rows(release, media, domains, subdomains),
        requested={"dataset": dataset, "revision": revision},
        selection={"media": media, "domains": as_list(domains), "subdomains": as_list(subdomains)},
        kinds=kinds,
        sample_tasks=sample_tasks,
        judge_retries=judge_retries,
        perturber_retries=perturber_retries,
    )
