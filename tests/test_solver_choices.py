"""Per-model limits and the native-video decision, from task_configs/model_limits.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from hss_inspect.conditions.turn import native_video_choice
from hss_inspect.core.settings import FrameSettings, MediaSettings
from hss_inspect.providers.limits import applied_limits, frame_settings_for, limits_for


def test_paper_frame_caps_apply_only_when_no_cap_is_given() -> None:
    def cap(media: MediaSettings, model: str) -> int | None:
        return frame_settings_for(media, applied_limits(media, model)).max_images

    media = MediaSettings()
    assert cap(media, "openai-api/proxy/qwen3.8-max") == 250
    assert cap(media, "openai-api/proxy/gpt-6-astra") is None
    # OpenAI's own API documents 1,500 images per request: above the paper's 500 frames
    assert cap(media, "openai/gpt-6-astra") == 1500
    explicit = MediaSettings(frames=FrameSettings(max_images=7))
    assert cap(explicit, "openai-api/proxy/qwen3.8-max") == 7


def use_native_video(media: MediaSettings, model: str, path: Path) -> bool:
    return native_video_choice(media, applied_limits(media, model), model, path)[0]


def test_native_video_follows_the_option_the_provider_and_the_file(tmp_path: Path) -> None:
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"0" * 1000)
    webm = tmp_path / "clip.webm"
    webm.write_bytes(b"0" * 1000)
    auto = MediaSettings()
    assert use_native_video(auto, "google/gemini-3.8-flash", clip)
    assert not use_native_video(auto, "openai/gpt-6-astra", clip)
    # `true` for a provider that takes no video is refused when the task is built; a
    # sample reaching the solver anyway gets frames
    assert not use_native_video(MediaSettings(native_video="true"), "openai/gpt-6-astra", clip)
    assert use_native_video(MediaSettings(native_video="true"), "google/gemini-x", clip)
    assert not use_native_video(
        MediaSettings(native_video="false"), "google/gemini-3.8-flash", clip
    )
    assert not use_native_video(auto, "google/gemini-3.8-flash", webm)
    too_big = MediaSettings(native_video_max_bytes=999)
    assert not use_native_video(too_big, "google/gemini-3.8-flash", clip)


@pytest.mark.parametrize("name", ["google/gemini-3.6-flash", "GOOGLE/Gemini-X"])
def test_limits_match_case_insensitively(name: str) -> None:
    assert limits_for(name).native_video


def test_native_video_is_sent_whole_as_a_data_uri(tmp_path: Path) -> None:
    import asyncio
    import base64

    from hss_inspect.conditions.turn import native_video_content
    from tests.support.fixture_repo import write_video

    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=10, seconds=2.0)
    content, record = asyncio.run(native_video_content(clip))
    note, video_part = content
    assert "2.00 seconds" in note.text  # type: ignore[union-attr]
    assert video_part.type == "video" and video_part.format == "mp4"  # type: ignore[union-attr]
    prefix = "data:video/mp4;base64,"
    assert video_part.video.startswith(prefix)  # type: ignore[union-attr]
    assert base64.b64decode(video_part.video[len(prefix) :]) == clip.read_bytes()  # type: ignore[union-attr]
    assert record == {"kind": "native_video", "duration": 2.0, "bytes": clip.stat().st_size}
