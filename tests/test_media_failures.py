"""Hostile media through a real in-process eval: every failure names the task and file.

The release holds a clip cut short after its index (faststart: still sampled, the
shortfall recorded), a clip cut short before its index (moov at the end: unreadable),
a decompression bomb, bytes that are no image, and one good image. The models are
`mockllm/model` in both roles; samples run with `fail_on_error=False` so each one's own
outcome is in the log.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import av
import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessage, ContentImage, Model, ModelOutput, ModelUsage, get_model
from PIL import Image

from hss_inspect.media.image import upright_image
from hss_inspect.task import hss
from tests.support.fixture_repo import write_image, write_video

MEDIA = {
    "vid-cut": "media/cut.mp4",
    "vid-moov-lost": "media/moov_lost.mp4",
    "img-bomb": "media/bomb.png",
    "img-garbage": "media/garbage.jpg",
    "img-good": "media/good.png",
}
FAILING = {"vid-moov-lost", "img-bomb", "img-garbage"}
BOMB_SIZE = (120, 100)
PIXEL_LIMIT = 5_000  # Pillow refuses past twice its limit: 12,000 pixels is a bomb here
KEPT_FRAMES = 40  # of 90: the data ends at 40/30 s, where the fps filter emits 3 frames


def packet_offsets(path: Path) -> list[int]:
    with av.open(str(path)) as container:
        return sorted(p.pos for p in container.demux(video=0) if p.size and p.pos is not None)


def write_release(root: Path) -> Path:
    media = root / "media"
    whole = root / "whole.mp4"
    write_video(
        whole,
        fps=30,
        seconds=3.0,
        options={"bf": "0"},  # decode order is display order: a cut keeps a prefix
        container_options={"movflags": "faststart"},
        numbered=True,
    )
    (media / "cut.mp4").parent.mkdir(parents=True)
    (media / "cut.mp4").write_bytes(whole.read_bytes()[: packet_offsets(whole)[KEPT_FRAMES]])
    write_video(root / "plain.mp4", fps=30, seconds=3.0)
    plain = (root / "plain.mp4").read_bytes()
    (media / "moov_lost.mp4").write_bytes(plain[: len(plain) * 9 // 10])
    write_image(media / "bomb.png", BOMB_SIZE, "PNG")
    (media / "garbage.jpg").write_bytes(b"\xff\xd8 this is not a JPEG")
    write_image(media / "good.png", (40, 30), "PNG")
    rows = [
        {
            "task_id": task_id,
            "domain": "Temporal & Causal Dynamics",
            "subdomain": "Retrodiction",
            "media_type": "video" if path.endswith(".mp4") else "image",
            "media_path": path,
            "prompt": f"What does {task_id} show?",
            "golden_response": "Something.",
            "rubric_criteria": [{"id": "c1", "title": "Says something"}],
            "num_criteria": 1,
        }
        for task_id, path in MEDIA.items()
    ]
    (root / "data").mkdir()
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def reply(text: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def scripted(text: str, asked: list[list[ChatMessage]]) -> Model:
    def outputs(messages: list[ChatMessage], *_: object) -> ModelOutput:
        asked.append(messages)
        return reply(text)

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def judged_met() -> str:
    return json.dumps({"criteria": [{"id": "c1", "met": True, "justification": "-"}]})


def run(root: Path, log_dir: Path, **task_args: object) -> tuple[EvalLog, list[list[ChatMessage]]]:
    asked: list[list[ChatMessage]] = []
    (log,) = eval(
        hss(dataset=str(root), **task_args),  # type: ignore[arg-type]
        model=scripted("An answer.", asked),
        model_roles={"grader": scripted(judged_met(), [])},
        epochs=1,
        fail_on_error=False,
        log_dir=str(log_dir),
        display="none",
    )
    return log, asked


def by_id(log: EvalLog) -> dict[str, EvalSample]:
    assert log.samples is not None
    return {str(sample.id): sample for sample in log.samples}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_release(tmp_path_factory.mktemp("hostile"))


@pytest.fixture
def low_bomb_limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", PIXEL_LIMIT)
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(tmp_path / "cache"))


@pytest.mark.slow
@pytest.mark.usefixtures("low_bomb_limit")
def test_each_failure_names_its_task_and_file_and_the_cut_clip_is_sampled(
    release: Path, tmp_path: Path
) -> None:
    log, asked = run(release, tmp_path / "logs")
    samples = by_id(log)
    for task_id in FAILING:
        error = samples[task_id].error
        assert error is not None, task_id
        assert f"task {task_id}:" in error.message
        assert MEDIA[task_id] in error.message
    assert "decompression bomb" in samples["img-bomb"].error.message  # type: ignore[union-attr]
    assert "cut short" in samples["vid-moov-lost"].error.message  # type: ignore[union-attr]
    assert samples["img-good"].error is None

    cut = samples["vid-cut"]
    assert cut.error is None
    sent = cut.metadata["sent_media"]
    expected_frames = round(KEPT_FRAMES / 30 * 2)  # the fps filter's count at 2 fps
    assert sent["frame_count"] == expected_frames == 3
    assert sent["source_times"] == pytest.approx([7 / 30, 22 / 30, 37 / 30])
    assert sent["truncation"]["declared_duration"] == pytest.approx(3.0)
    assert sent["truncation"]["decodable_duration"] == pytest.approx(KEPT_FRAMES / 30)
    assert sent["truncation"]["frames_dropped"] == 6 - expected_frames
    assert sent["duration"] == sent["truncation"]["decodable_duration"]
    (turn,) = next(m for m in asked if "vid-cut" in m[-1].text)
    images = [part for part in turn.content if isinstance(part, ContentImage)]  # type: ignore[union-attr]
    assert len(images) == expected_frames
    assert f"lasting {sent['duration']:.2f} seconds" in turn.text


@pytest.mark.slow
def test_media_time_limit_is_an_option_and_its_error_says_what_to_do(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(tmp_path / "cache"))
    log, _ = run(release, tmp_path / "logs", media_timeout=1e-9)
    assert log.eval.metadata is not None
    assert log.eval.metadata["hss_media_settings"]["media_timeout"] == 1e-9
    error = by_id(log)["vid-cut"].error
    assert error is not None
    assert "task vid-cut:" in error.message and MEDIA["vid-cut"] in error.message
    assert "1e-09 s media time limit" in error.message
    assert "-T media_timeout=" in error.message
    # the remedy is a command to paste: the same data and model, the default time limit
    prepare = (
        f"`hss-inspect prepare --dataset {(release / 'data' / 'test.jsonl').resolve()} --model"
    )
    assert prepare in error.message and "--media-timeout" not in error.message


def test_bomb_error_and_warning_name_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", PIXEL_LIMIT)
    bomb = tmp_path / "bomb.png"
    write_image(bomb, BOMB_SIZE, "PNG")  # 12,000 px: over twice the limit
    with pytest.raises(Exception, match=r"bomb\.png: refused as a possible decompression bomb"):
        upright_image(bomb.read_bytes(), bomb)
    large = tmp_path / "large.png"
    write_image(large, (80, 75), "PNG")  # 6,000 px: over the limit, under twice it
    with caplog.at_level(logging.WARNING):
        image, _ = upright_image(large.read_bytes(), large)
    assert image.size == (80, 75)
    assert any("large.png" in r.getMessage() and "80x75" in r.getMessage() for r in caplog.records)
