"""Provider payload rules (task_configs/model_limits.yaml), the limits they impose on the
media, refusal detection and the image-token formulas, as pure functions."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from inspect_ai.model import ModelOutput

from hss_inspect.conditions.answer import looks_like_size_refusal, refusal_in_output
from hss_inspect.core.config import data_dir
from hss_inspect.core.settings import FrameSettings, MediaSettings
from hss_inspect.providers.limits import (
    applied_limits,
    clamp_warnings,
    encoded_size,
    native_video_refusal,
    provider_rules,
    raw_for_encoded,
)
from hss_inspect.providers.tokens import anthropic_tokens, gemini_tokens, openai_patch_tokens

PAPER = MediaSettings()


def test_every_provider_value_in_the_rules_file_cites_its_source() -> None:
    text = (data_dir("task_configs") / "model_limits.yaml").read_text()
    loaded = yaml.safe_load(text)
    numeric = ("image_max_bytes", "image_max_side", "images_per_request", "request_max_bytes")
    for entry in loaded["providers"]:
        assert entry["docs"], entry["name"]
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if any(line.strip().startswith(f"{key}:") for key in numeric) and "#" not in line:
            # else a comment block above it, within the same provider entry
            above = number - 1
            while not lines[above].strip().startswith(("#", "- match")):
                above -= 1
            assert lines[above].strip().startswith("#"), line


def test_base64_arithmetic() -> None:
    assert encoded_size(3) == 4 and encoded_size(4) == 8
    assert raw_for_encoded(5_000_000) == 3_750_000
    assert encoded_size(raw_for_encoded(10_000_000)) <= 10_000_000


@pytest.mark.parametrize(
    ("model", "request_bytes", "images", "image_raw"),
    [
        # 10 MB base64 per image = 7.5 MB raw: the paper's 4.5 MB fits, unchanged
        ("anthropic/claude-opus-5", 32_000_000, 600, 4_500_000),
        # 5 MB base64 = 3.75 MB raw: the paper's 4.5 MB does not fit on Bedrock / Vertex
        ("anthropic/bedrock/claude-opus-5", 20_000_000, 600, 3_750_000),
        ("anthropic/vertex/claude-opus-5", 20_000_000, 600, 3_750_000),
        ("anthropic/claude-3-7-sonnet-latest", 32_000_000, 100, 4_500_000),
        ("openai/gpt-6-astra", 512_000_000, 1500, 4_500_000),
        ("google/gemini-3.8-flash", 20_000_000, 3600, 4_500_000),
        ("google/vertex/gemini-3.8-flash", None, 3000, 4_500_000),
        ("bedrock/us.moonshotai.kimi-k3", 20_000_000, 20, 3_750_000),
        ("fireworks/accounts/fireworks/models/glm-5p3-flash", 10_000_000, 30, 4_500_000),
        ("groq/llama-4-scout", 4_000_000, None, None),
        ("openai-api/proxy/anything", None, None, 4_500_000),
    ],
)
def test_applied_limits_per_provider(
    model: str, request_bytes: int | None, images: int | None, image_raw: int | None
) -> None:
    limits = applied_limits(PAPER, model)
    assert limits.request_max_bytes == request_bytes
    assert limits.max_images == images
    if image_raw is not None:
        assert limits.image_max_raw_bytes == image_raw
    else:  # one image must fit the 4 MB request once encoded, with the margin
        assert encoded_size(limits.image_max_raw_bytes) < 4_000_000 * 0.95


def test_frame_budget_counts_the_encoded_request() -> None:
    limits = applied_limits(PAPER, "anthropic/claude-opus-5")
    budget = limits.media_raw_budget(500, 30_000)
    # 500 frames within budget, once base64-encoded with text and JSON, stay under 32 MB
    assert encoded_size(budget) + 30_000 + 500 * 200 < 32_000_000 * 0.95
    assert budget < PAPER.frame_bytes_budget  # the paper's 32 MB raw does not fit here
    assert applied_limits(PAPER, "openai/gpt-6-astra").media_raw_budget(500, 30_000) == (
        PAPER.frame_bytes_budget
    )


def test_table5_caps_meet_the_provider_caps() -> None:
    # Table 5 ran GLM-5.3 on Fireworks at 60 frames; Fireworks documents 30: the safe 30
    limits = applied_limits(PAPER, "fireworks/accounts/fireworks/models/glm-5p3-flash")
    assert limits.max_images == 30 and limits.clamps[0].option == "max_images"
    assert not clamp_warnings(limits)  # not the user's choice: recorded, not warned
    assert applied_limits(PAPER, "openai-api/proxy/kimi-k3").max_images == 100


def test_user_options_above_a_limit_are_clamped_with_a_warning() -> None:
    media = MediaSettings(frames=FrameSettings(max_images=900), image_max_bytes=9_000_000)
    limits = applied_limits(media, "anthropic/bedrock/claude-opus-5")
    assert limits.max_images == 600 and limits.image_max_raw_bytes == 3_750_000
    warnings = clamp_warnings(limits)
    assert any("-T max_images=900" in w and "using 600" in w for w in warnings)
    assert any("-T image_max_bytes=9000000" in w and "using 3750000" in w for w in warnings)


def test_many_images_lower_the_side_limit() -> None:
    limits = applied_limits(MediaSettings(image_max_side=8000), "anthropic/claude-opus-5")
    assert limits.frame_side_for(20, 4000) == 4000
    assert limits.frame_side_for(21, 4000) == 2000


def test_native_video_true_is_refused_where_it_cannot_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wanted = MediaSettings(native_video="true")
    assert native_video_refusal(wanted, "google/gemini-3.8-flash") is None
    message = native_video_refusal(wanted, "anthropic/claude-opus-5")
    assert message is not None and "native_video=true" in message and "auto or false" in message
    assert native_video_refusal(wanted, "google/vertex/gemini-3.8-flash") is not None
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    assert provider_rules("google/gemini-3.8-flash").name == "Gemini on Vertex AI"
    assert native_video_refusal(MediaSettings(), "anthropic/claude-opus-5") is None


def test_refusals_dressed_as_answers_are_recognized() -> None:
    anthropic_413 = ModelOutput.from_content(
        model="claude",
        content="Error code: 413 - {'type': 'error', 'error': {'type': 'request_too_large'}}",
        stop_reason="model_length",
        error="Error code: 413",
    )
    assert refusal_in_output(anthropic_413) is not None
    gemini = ModelOutput.from_content(
        model="gemini",
        content="Request payload size exceeds the limit: 20971520 bytes.",
        stop_reason="model_length",
    )
    assert refusal_in_output(gemini) is not None
    real_answer = ModelOutput.from_content(model="m", content="The cup falls.")
    assert refusal_in_output(real_answer) is None
    truncated = ModelOutput.from_content(model="m", content="", stop_reason="max_tokens")
    assert refusal_in_output(truncated) is None
    assert looks_like_size_refusal("anything", status=413)
    assert not looks_like_size_refusal("rate limit exceeded", status=429)


def test_image_token_formulas_match_the_providers_worked_examples() -> None:
    claude = {"pixels_per_token": 750, "max_side": 1568, "max_pixels": 1_200_000}
    assert anthropic_tokens(1092, 1092, claude) == math.ceil(1092 * 1092 / 750)  # 1590
    assert anthropic_tokens(200, 200, claude) == 54
    # scaled to ~1,600 tokens first, whatever its size
    assert anthropic_tokens(4000, 3000, claude) == 1600
    gemini = {"small_side": 384, "tile": 768, "tokens_per_tile": 258}
    assert gemini_tokens(384, 384, gemini) == 258
    assert gemini_tokens(1000, 500, gemini) == 2 * 258
    openai = {"patch": 32, "max_patches": 1536, "multiplier": 1.0}
    assert openai_patch_tokens(1024, 1024, openai) == 1024
    # the guide's example: 1800x2400 is scaled to 1056x1408, 33 x 44 patches
    assert openai_patch_tokens(1800, 2400, openai) == 33 * 44
    # the guide's worked example, turned: the losing side is the width either way
    assert openai_patch_tokens(2400, 1800, openai) == 44 * 33
    # never over the budget, whatever the shape (float rounding once gave 31 x 51 = 1581)
    assert openai_patch_tokens(1000, 1678, openai) <= 1536
    assert (
        max(
            openai_patch_tokens(w, h, openai)
            for w in range(1000, 4097, 37)
            for h in range(1000, 4097, 41)
        )
        <= 1536
    )


@pytest.mark.slow
def test_native_video_true_stops_the_task_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai._util.error import PrerequisiteError

    monkeypatch.setenv("ANTHROPIC_API_KEY", "never-used")
    with pytest.raises(PrerequisiteError, match="native_video=true, but anthropic/claude-opus-5"):
        inspect_eval(
            "hss_inspect/hss",
            model="anthropic/claude-opus-5",
            task_args={"dataset": "demo", "native_video": True},
            model_roles={"grader": "mockllm/model"},
            display="none",
            log_dir=str(tmp_path),
        )


def test_a_clip_over_the_video_limit_goes_as_frames_and_says_why(tmp_path: Path) -> None:
    from hss_inspect.conditions.turn import native_video_choice

    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"0" * 5000)
    media = MediaSettings(native_video_max_bytes=4000)
    limits = applied_limits(media, "google/gemini-3.8-flash")
    native, why = native_video_choice(media, limits, "google/gemini-3.8-flash", clip)
    assert not native and why == "the clip's 5000 bytes exceed the video limit of 4000 bytes"
    fits = applied_limits(MediaSettings(), "google/gemini-3.8-flash")
    assert native_video_choice(MediaSettings(), fits, "google/gemini-3.8-flash", clip) == (
        True,
        None,
    )


def test_refusals_raised_as_errors_are_recognized_through_the_wrapping() -> None:
    from hss_inspect.conditions.answer import refusal_in_error, status_of

    class ProviderError(Exception):
        def __init__(self, message: str, status_code: int) -> None:
            super().__init__(message)
            self.status_code = status_code

    def wrapped(cause: Exception) -> RuntimeError:
        outer = RuntimeError("generate failed")  # as Inspect's ModelGenerateError wraps it
        outer.__cause__ = cause
        return outer

    too_large = wrapped(ProviderError("Request Entity Too Large", 413))
    assert status_of(too_large) == 413 and refusal_in_error(too_large) is not None
    too_many = wrapped(ProviderError("too many images: 700 > 600", 400))
    assert refusal_in_error(too_many) is not None
    unrelated = wrapped(ProviderError("temperature: unsupported value", 400))
    assert status_of(unrelated) == 400 and refusal_in_error(unrelated) is None
