"""The log-size warning: its arithmetic, and the real `inspect eval` printing it (or not)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hss_inspect.core.settings import DEFAULT_MEDIA, FrameSettings, MediaSettings
from hss_inspect.hooks.log_size import (
    FRAME_BYTES_AT_768,
    clip_bytes,
    frame_bytes,
    projected_frame_bytes,
    share_run,
)

pytestmark = pytest.mark.inspect_api

INSPECT = str(Path(sys.executable).with_name("inspect"))


def media(**frames: object) -> dict:
    return MediaSettings(frames=FrameSettings(**frames)).as_dict()  # type: ignore[arg-type]


def test_frame_bytes_scale_with_the_pixel_count() -> None:
    assert frame_bytes(768) == FRAME_BYTES_AT_768
    assert frame_bytes(384) == FRAME_BYTES_AT_768 / 4


def test_a_clip_is_capped_by_frames_images_and_the_byte_budget() -> None:
    assert clip_bytes(media()) == 500 * FRAME_BYTES_AT_768
    assert clip_bytes(media(max_images=50)) == 50 * FRAME_BYTES_AT_768
    assert clip_bytes(media(frame_side=4096)) == DEFAULT_MEDIA.frame_bytes_budget


def test_the_full_video_run_projects_tens_of_gb() -> None:
    metadata = {
        "hss_condition": "standard",
        "hss_selection": {"tasks": 234, "videos": 234},
        "hss_media_settings": media(),
    }
    assert projected_frame_bytes(metadata, 3, 1.0) == 234 * 3 * 500 * FRAME_BYTES_AT_768
    assert projected_frame_bytes({**metadata, "hss_condition": "blind"}, 3, 1.0) == 0


def test_limit_and_sample_id_shrink_the_share() -> None:
    assert share_run(522, None, None) == 1.0
    assert share_run(522, 10, None) == 10 / 522
    assert share_run(522, [2, 3], None) == 2 / 522
    assert share_run(522, None, ["a", "b", "c"]) == 3 / 522
    assert share_run(4, 100, None) == 1.0


def run_demo(tmp_path: Path, *extra: str) -> str:
    command = [INSPECT, "eval", "hss_inspect/hss", "--model", "hss/scripted"]
    command += ["--model-role", "grader=hss/scripted", "--log-dir", str(tmp_path / "logs")]
    command += ["-T", "dataset=demo", "-T", "media=video", "-T", "frame_side=3000"]
    command += ["-T", "frame_bytes_budget=900000000", "--limit", "2", "--display", "plain"]
    done = subprocess.run(
        [*command, *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.mark.slow
def test_inspect_warns_before_a_big_run_unless_images_are_off(tmp_path: Path) -> None:
    # 2 clips x 3 epochs x 500 frames at 3000 px (under the 900 MB budget per clip)
    expected_gb = 2 * 3 * 500 * FRAME_BYTES_AT_768 * (3000 / 768) ** 2 / 1e9
    output = " ".join(run_demo(tmp_path).split())
    assert f"this run may log up to {expected_gb:.1f} GB of video frames" in output
    assert "(2 clip(s) x 3 epoch(s))" in output
    assert "Add --no-log-images to keep them out of the log" in output
    quiet = run_demo(tmp_path, "--no-log-images")
    assert "may log up to" not in quiet
