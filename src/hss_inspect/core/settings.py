"""Defaults of the HSS protocol (paper App. C), each defined once."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

DEFAULT_DATASET = "ScaleAI/HSS"
DEFAULT_REVISION = "main"
DEFAULT_EPOCHS = 3
DEFAULT_JUDGE_RETRIES = 2
DEFAULT_PERTURBER_RETRIES = 2
DEFAULT_LABELER_RETRIES = 2

CONDITIONS: tuple[str, ...] = ("standard", "blind", "oracle", "agentic")
# The condition of a log of people's answers graded by the judge (`hss_human`).
HUMAN_CONDITION = "human"
MEDIA_CHOICES: tuple[str, ...] = ("all", "image", "video")
NativeVideo = Literal["auto", "true", "false"]
NATIVE_VIDEO_CHOICES: tuple[str, ...] = ("auto", "true", "false")
ModelErrors = Literal["fail", "omit"]
MODEL_ERRORS: tuple[str, ...] = ("fail", "omit")
DEFAULT_MODEL_ERRORS: ModelErrors = "fail"
# Who decides the prompt caching of the model under evaluation (conditions/cache_plan.py):
# the plan, Inspect's own defaults, or nobody (nothing written).
CachePlan = Literal["plan", "inspect", "off"]
CACHE_PLANS: tuple[str, ...] = ("plan", "inspect", "off")
DEFAULT_CACHE_PLAN: CachePlan = "plan"
# the sample metadata key of a sample's cache plan record, next to `sent_media`
CACHE_PLAN_RECORD = "cache_plan"
# Inspect's stop reason for an answer the provider's policy filter refused.
POLICY_STOP = "content_filter"

# the sample metadata key of what a person's answer records (hss_human): annotator,
# confidence, seconds, view
HUMAN_RECORD = "human"
# ... and the answer itself, apart: a long one would push the record out of Inspect's sample
# summaries, which keep only small metadata values
HUMAN_ANSWER = "human_answer"
# Set by the `hss-inspect` command in its process for a subcommand that runs no eval: the
# package then registers no Inspect hook there, and Inspect prints no hook banner.
NO_EVAL_ENV = "HSS_INSPECT_NO_EVAL"
# Set by an `hss-inspect` command that takes the task options as flags, for its process and
# its workers: a message then names `--frame-side`, not `-T frame_side` (options.spell).
OPTIONS_AS_FLAGS_ENV = "HSS_INSPECT_OPTIONS_AS_FLAGS"

# Pillow's JPEG quality closest to ffmpeg's `-q:v 3` on the reference pipeline's frames.
FRAME_JPEG_QUALITY = 90


@dataclass(frozen=True)
class FrameSettings:
    """How a clip becomes frames: the inputs of the sampling plan and of frame encoding."""

    fps: float = 2.0
    max_frames: int = 500
    frame_side: int = 768
    max_images: int | None = None
    jpeg_quality: int = FRAME_JPEG_QUALITY

    def __post_init__(self) -> None:
        if not self.fps > 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.max_frames < 1:
            raise ValueError(f"max_frames must be at least 1, got {self.max_frames}")
        if self.frame_side < 16:
            raise ValueError(f"frame_side must be at least 16 px, got {self.frame_side}")
        if self.max_images is not None and self.max_images < 1:
            raise ValueError(f"max_images must be at least 1, got {self.max_images}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class MediaSettings:
    """Everything that decides which bytes of media a model receives, and how long
    preparing them for one sample may take (each value checked by its option's declaration,
    `core/options.py`)."""

    frames: FrameSettings = FrameSettings()
    frame_bytes_budget: int = 32_000_000
    image_max_side: int = 4096
    image_max_bytes: int = 4_500_000
    native_video: NativeVideo = "auto"
    native_video_max_bytes: int = 60 * 1024 * 1024
    # Seconds per media file. The 28-minute clip takes ~11 s alone on 2 cores; ten
    # minutes leaves room for many samples decoding at once on a small machine.
    media_timeout: float = 600.0
    # The token budget frames are fitted to (providers/fit.py): the window (None: asked of
    # the server, else Inspect's model info), the output kept free when Inspect sends no
    # max_tokens, and a user's file of image-token rules.
    context_window: int | None = None
    output_reserve: int = 4096
    token_rules: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULT_FRAMES = FrameSettings()
DEFAULT_MEDIA = MediaSettings()


@dataclass(frozen=True)
class AgentSettings:
    """Limits and tool settings of the agentic condition (paper Sec. 3.3), per conversation.

    Reaching `max_steps` model calls, `max_output_tokens` output tokens (as the provider
    reports them) or more than `max_tool_images` images returned by tools ends the
    conversation; its answer is then the model's latest text. Each value is checked by its
    option's declaration (`core/options.py`).
    """

    max_steps: int = 30
    max_output_tokens: int = 100_000
    max_tool_images: int = 40
    window_fps: float = 8.0
    window_max_frames: int = 16
    zoom_side: int = 768
    min_crop_side: int = 8

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


DEFAULT_AGENT = AgentSettings()
