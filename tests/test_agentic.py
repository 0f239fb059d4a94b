"""The agentic condition end to end: the real `inspect eval` command, a scripted agent that
calls every tool with good and bad arguments, the scripted judge, and the written log."""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ContentImage, ContentText
from PIL import Image

from tests.support.agent_server import (
    OUTPUT_TOKENS,
    POLICY_MESSAGE,
    REASONING_TOKENS,
    WORDY_OUTPUT_TOKENS,
)
from tests.support.fixture_repo import FixtureTask, read_index, write_video
from tests.support.runs import run_eval
from tests.support.servers import scripted_models

pytestmark = pytest.mark.slow

AGENT = "openai-api/scripted/agent"
ONE = ({"id": "c1", "title": "States the key fact"},)
TWO = ({"id": "c1", "title": "Names it"}, {"id": "c2", "title": "Says where"})
TASKS = (
    FixtureTask("agent-img", "AGENT-IMG", "Abstract & Contextual Inference",
                "Patterns & Pareidolia", "image", "media/texture.png", ONE),
    FixtureTask("agent-vid", "AGENT-VID", "Temporal & Causal Dynamics", "Retrodiction",
                "video", "media/numbered.mp4", ONE),
    FixtureTask("agent-loop", "AGENT-LOOP", "Physical & Spatial Logic", "Hidden & Invisible",
                "image", "media/texture.png", TWO),
    FixtureTask("agent-greedy", "AGENT-GREEDY", "Social Understanding", "Theory of Mind",
                "video", "media/numbered.mp4", ONE),
    FixtureTask("agent-wordy", "AGENT-WORDY", "Physical & Spatial Logic",
                "Spatial Reachability", "image", "media/texture.png", ONE),
    FixtureTask("agent-broken", "AGENT-BROKEN", "Temporal & Causal Dynamics",
                "Mechanistic Causality", "image", "media/texture.png", ONE),
    FixtureTask("agent-text", "AGENT-TEXT", "Physical & Spatial Logic",
                "Affordance & Feasibility", "image", "media/texture.png", ONE),
    FixtureTask("agent-refused", "AGENT-REFUSED", "Social Understanding",
                "Theory of Mind", "image", "media/texture.png", ONE),
)  # fmt: skip
IMAGE_SIZE = (160, 120)
IMAGE_MAX_SIDE = 64  # the image is shown at 64x48: crops are cut from the 160x120 original
CLIP_SIZE, CLIP_FPS, CLIP_SECONDS = (96, 64), 30, 3.0
FRAME_SIDE = 48  # frames are shown at 48x32: crops come from the 96x64 source frame
STEPS = 10
# 9 steps of 5 tokens (agent-vid) and 10 (agent-loop, stopped by the step limit) fit;
# 3 steps of 20 (agent-wordy) do not.
TOKENS = 52
ZOOM_SIDE = 768


def texture(size: tuple[int, int]) -> np.ndarray:
    """Random 8-px blocks: any misplaced crop shows up as a large pixel difference."""
    rng = np.random.default_rng(7)
    blocks = rng.integers(0, 256, (size[1] // 8 + 1, size[0] // 8 + 1, 3), dtype=np.uint8)
    return np.kron(blocks, np.ones((8, 8, 1), np.uint8))[: size[1], : size[0]]


def build_release(root: Path) -> Path:
    (root / "media").mkdir(parents=True)
    Image.fromarray(texture(IMAGE_SIZE)).save(root / "media" / "texture.png")
    write_video(root / "media" / "numbered.mp4", fps=CLIP_FPS, seconds=CLIP_SECONDS,
                size=CLIP_SIZE, numbered=True)  # fmt: skip
    (root / "data").mkdir()
    rows = "".join(json.dumps(task.row()) + "\n" for task in TASKS)
    (root / "data" / "test.jsonl").write_text(rows)
    return root


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EvalLog, Path, list]]:
    release = build_release(tmp_path_factory.mktemp("agent-release"))
    with scripted_models(tmp_path_factory.mktemp("agent-server"), "agent_server.py") as served:
        base_url, request_log = served
        log, _ = run_eval(
            "hss_inspect/hss_agentic",
            tmp_path_factory.mktemp("agent-logs"),
            base_url,
            "--max-retries",
            "0",  # agent-broken's outage is not retried
            model=AGENT,
            epochs=1,
            env={"HSS_INSPECT_CACHE": str(tmp_path_factory.mktemp("agent-cache"))},
            task_args={
                "dataset": release,
                "frame_side": FRAME_SIDE,
                "image_max_side": IMAGE_MAX_SIDE,
                "agent_steps": STEPS,
                "agent_tokens": TOKENS,
                # opt-in: agent-broken's provider error leaves its attempt out
                "model_errors": "omit",
            },
        )
        requests = [json.loads(line) for line in request_log.read_text().splitlines()]
        # Images are stored once as attachments; resolve them to read the pixels back.
        yield read_eval_log(log.location, resolve_attachments=True), release, requests


def sample_of(log: EvalLog, task_id: str) -> EvalSample:
    assert log.samples is not None
    return next(s for s in log.samples if s.id == task_id)


def tool_messages(sample: EvalSample) -> list[ChatMessageTool]:
    return [m for m in sample.messages if isinstance(m, ChatMessageTool)]


def tool_images(message: ChatMessageTool) -> list[Image.Image]:
    if isinstance(message.content, str):
        return []
    return [
        Image.open(io.BytesIO(base64.b64decode(c.image.partition(",")[2]))).convert("RGB")
        for c in message.content
        if isinstance(c, ContentImage)
    ]


def tool_texts(message: ChatMessageTool) -> list[str]:
    if isinstance(message.content, str):
        return [message.content]
    return [c.text for c in message.content if isinstance(c, ContentText)]


def mean_difference(a: Image.Image, b: Image.Image) -> float:
    assert a.size == b.size
    return float(np.abs(np.asarray(a, float) - np.asarray(b, float)).mean())


def decoded_frames(path: Path) -> tuple[list[float], list[np.ndarray]]:
    """Every frame of the clip and its time from the first frame, decoded independently."""
    times, pixels = [], []
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            times.append(float(frame.pts * frame.time_base))
            pixels.append(frame.to_ndarray(format="rgb24"))
    return [t - times[0] for t in times], pixels


def rule_choice(times: list[float], slot: int, rate: float) -> int:
    """The protocol's rule: the last source frame before (slot + 1/2) / rate."""
    return max(i for i, t in enumerate(times) if t < (slot + 0.5) / rate)


def test_the_log_holds_every_tool_call_and_its_result(agent_run) -> None:
    log, _, _ = agent_run
    assert log.status == "success"
    sample = sample_of(log, "agent-vid")
    calls = [
        call.function
        for m in sample.messages
        if isinstance(m, ChatMessageAssistant)
        for call in m.tool_calls or []
    ]
    assert calls == [
        "frames", "frames", "crop", "crop", "compare", "compare", "frames", "frames", "submit",
    ]  # fmt: skip
    results = tool_messages(sample)
    assert [m.function for m in results] == calls
    failed = [i for i, m in enumerate(results) if m.error is not None]
    assert failed == [1, 3, 5, 6, 7]
    assert "past the clip's end at 3.00 s" in str(results[1].error.message)
    assert "no frame labelled 0.25 s" in str(results[3].error.message)
    assert "no frame labelled 7.00 s" in str(results[5].error.message)
    assert results[6].error.type == "parsing"  # "soon" is not a number
    assert "at most 60 frames per second" in str(results[7].error.message)
    assert [len(tool_images(m)) for m in results] == [10, 0, 1, 0, 1, 0, 0, 0, 0]
    agent = sample.metadata["agent"]
    assert agent["ended_by"] == "submitted"
    assert agent["steps"] == 9 and agent["tool_errors"] == 5 and agent["tool_images"] == 12
    assert agent["tool_calls"] == {"frames": 4, "crop": 2, "compare": 2, "submit": 1}
    assert agent["output_tokens"] == 9 * OUTPUT_TOKENS
    assert agent["reasoning_tokens"] == 9 * REASONING_TOKENS


def test_image_task_crop_errors_and_submission(agent_run) -> None:
    log, release, _ = agent_run
    sample = sample_of(log, "agent-img")
    results = tool_messages(sample)
    assert [m.function for m in results] == ["crop", "crop", "crop", "submit"]
    assert results[0].error is None
    assert "reaches outside the image: the image is 64x48 px" in str(results[1].error.message)
    assert "leave frame_time empty" in str(results[2].error.message)
    # The box (20, 10)-(52, 34) of the 64x48 image as shown is (50, 25)-(130, 85) of the
    # 160x120 original, scaled so its longer side is 768 px.
    (returned,) = tool_images(results[0])
    original = Image.open(release / "media" / "texture.png").convert("RGB")
    resample = Image.Resampling.LANCZOS
    expected = original.crop((50, 25, 130, 85)).resize((768, 576), resample)
    shifted = original.crop((58, 25, 138, 85)).resize((768, 576), resample)
    assert mean_difference(returned, expected) < 4
    assert mean_difference(returned, shifted) > 5 * mean_difference(returned, expected)


def test_crop_of_a_fetched_frame_is_cut_from_the_source_frame(agent_run) -> None:
    log, release, _ = agent_run
    results = tool_messages(sample_of(log, "agent-vid"))
    (returned,) = tool_images(results[2])
    times, pixels = decoded_frames(release / "media" / "numbered.mp4")
    # Frame time 1.3 s was fetched at 10 fps: slot 13.
    chosen = rule_choice(times, 13, 10.0)
    # (6, 4)-(30, 20) of the 48x32 frame as shown is (12, 8)-(60, 40) of the 96x64 source.
    region = (12, 8, 60, 40)
    resample = Image.Resampling.LANCZOS
    expected = Image.fromarray(pixels[chosen]).crop(region).resize((768, 512), resample)
    assert mean_difference(returned, expected) < 6
    neighbour = Image.fromarray(pixels[chosen - 3]).crop(region).resize((768, 512), resample)
    assert mean_difference(returned, neighbour) > 3 * mean_difference(returned, expected)


def test_the_window_follows_the_sampling_rule(agent_run) -> None:
    log, release, _ = agent_run
    window = tool_messages(sample_of(log, "agent-vid"))[0]
    rate, slots = 10.0, range(10, 20)  # 1.0..2.0 s at 10 frames per second
    labels = [t for t in tool_texts(window) if t.startswith("Frame at")]
    assert labels == [f"Frame at {slot / rate:.2f} s:" for slot in slots]
    times, _ = decoded_frames(release / "media" / "numbered.mp4")
    shown = [read_index(np.asarray(image)) for image in tool_images(window)]
    assert shown == [rule_choice(times, slot, rate) for slot in slots]
    assert all(image.size == (48, 32) for image in tool_images(window))


def test_compare_puts_two_shown_frames_side_by_side(agent_run) -> None:
    log, release, _ = agent_run
    (joined,) = tool_images(tool_messages(sample_of(log, "agent-vid"))[4])
    assert joined.size == (48 + 8 + 48, 32)
    times, _ = decoded_frames(release / "media" / "numbered.mp4")
    left = read_index(np.asarray(joined.crop((0, 0, 48, 32))))
    right = read_index(np.asarray(joined.crop((56, 0, 104, 32))))
    # 0.50 s is a frame of the first turn (2 fps, slot 1); 1.50 s a fetched one (10 fps, slot 15).
    assert (left, right) == (rule_choice(times, 1, 2.0), rule_choice(times, 15, 10.0))


def test_limits_end_the_conversation_with_what_was_said(agent_run) -> None:
    log, _, _ = agent_run
    looping = sample_of(log, "agent-loop")
    assert looping.metadata["agent"]["ended_by"] == "step_limit"
    assert looping.metadata["agent"]["steps"] == STEPS
    assert looping.output.completion == "Still unsure; for now I say FAIL."
    greedy = sample_of(log, "agent-greedy").metadata["agent"]
    # 16 frames a call against 40 tool images: the third call would pass the limit.
    assert (greedy["ended_by"], greedy["steps"], greedy["tool_images"]) == ("image_limit", 3, 32)
    wordy = sample_of(log, "agent-wordy").metadata["agent"]
    assert (wordy["ended_by"], wordy["steps"]) == ("token_limit", 3)
    assert wordy["output_tokens"] == 3 * WORDY_OUTPUT_TOKENS >= TOKENS
    text = sample_of(log, "agent-text")
    assert text.metadata["agent"]["ended_by"] == "answered_without_submit"
    assert text.output.completion == "Plainly, my answer is PASS."


def test_the_judge_grades_the_submitted_answer(agent_run) -> None:
    log, _, requests = agent_run
    grades = {
        str(s.id): s.scores["rubric_judge"].value["pass"]
        for s in log.samples or []
        if s.id != "agent-broken"
    }
    assert grades == {
        "agent-img": 1, "agent-vid": 1, "agent-loop": 0, "agent-greedy": 0, "agent-wordy": 0,
        "agent-text": 1, "agent-refused": 0,
    }  # fmt: skip
    judged = [r for r in requests if r["model"] == "judge"]
    answers = [r["messages"][1]["content"] for r in judged]
    assert any("After the closer look, my answer is PASS." in a for a in answers)
    assert log.eval.metadata["hss_condition"] == "agentic"


def test_chat_completions_receive_tool_images_in_a_following_user_turn(agent_run) -> None:
    _, _, requests = agent_run

    def images(message: dict[str, Any]) -> int:
        content = message.get("content")
        return (
            sum(1 for p in content if p.get("type") == "image_url")
            if isinstance(content, list)
            else 0
        )

    after_window = next(
        r for r in requests
        if r["model"] == "agent" and "[AGENT-VID]" in json.dumps(r["messages"][1])
        and sum(m["role"] == "assistant" for m in r["messages"]) == 1
    )  # fmt: skip
    roles = [m["role"] for m in after_window["messages"]]
    assert roles[-2:] == ["tool", "user"]
    assert images(after_window["messages"][-1]) == 10
    assert {t["function"]["name"] for t in after_window["tools"]} == {
        "crop", "frames", "compare", "submit",
    }  # fmt: skip


def test_a_policy_refusal_mid_conversation_is_a_zero_the_judge_never_sees(agent_run) -> None:
    log, _, requests = agent_run
    refused = sample_of(log, "agent-refused")
    assert refused.output.stop_reason == "content_filter"
    value = refused.scores["rubric_judge"].value
    assert (value["pass"], value["no_answer"], value["refusal"]) == (0, 1, 1)
    agent = refused.metadata["agent"]
    assert (agent["ended_by"], agent["steps"], agent["tool_calls"]) == ("refused", 2, {"crop": 1})
    judged = [json.dumps(r["messages"]) for r in requests if r["model"] == "judge"]
    assert not any("agent-refused" in text or POLICY_MESSAGE in text for text in judged)


def test_a_provider_error_mid_conversation_leaves_the_attempt_out(agent_run) -> None:
    log, _, _ = agent_run
    broken = sample_of(log, "agent-broken")
    assert broken.error is None  # the sample itself did not fail (model_errors=omit)
    value = broken.scores["rubric_judge"].value
    assert value["model_error"] == 1 and math.isnan(value["pass"])
    assert "scripted provider failure" in broken.metadata["model_error"]["message"]
    agent = broken.metadata["agent"]
    assert (agent["ended_by"], agent["steps"], agent["tool_calls"]) == (
        "model_error", 1, {"crop": 1},
    )  # fmt: skip


# ---- the tools' images within a fitted context window ---------------------------------


def _jpeg(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (90, 120, 150)).save(buffer, format="JPEG")
    return buffer.getvalue()


def test_tool_images_stop_where_the_fitted_window_is_full(tmp_path: Path) -> None:
    from hss_inspect.conditions.agentic.loop import (
        CONVERSATION_TEXT_TOKENS,
        image_cost_of,
        tool_token_budget,
    )
    from hss_inspect.conditions.agentic.tools import AgentMedia
    from hss_inspect.core.settings import DEFAULT_AGENT, DEFAULT_FRAMES

    # a Qwen2.5-VL record: a 768x432 frame is resized to 756x420, 27 x 15 blocks of 28 px,
    # plus the two tokens around the image
    rule = {
        "name": "Qwen2.5-VL",
        "formula": "qwen_smart_resize",
        "factor": 28,
        "min_pixels": 3136,
        "max_pixels": 12845056,
        "wrapper_tokens": 2,
        "source": "card",
    }
    fit = {"input_tokens": 30_000, "estimated_tokens": 20_000, "rule": rule}
    left = 30_000 - 20_000 - CONVERSATION_TEXT_TOKENS
    assert tool_token_budget(fit) == left
    assert tool_token_budget({"input_tokens": None, "estimated_tokens": 5}) is None
    cost = image_cost_of(fit)
    assert cost is not None and cost(768, 432) == 27 * 15 + 2
    media = AgentMedia(
        "video", tmp_path / "clip.mp4", DEFAULT_FRAMES, DEFAULT_AGENT, 40,
        token_budget=left, image_cost=cost,
    )  # fmt: skip
    frame = _jpeg(768, 432)
    fitting = left // (27 * 15 + 2)
    assert media.take_images([frame] * fitting)
    assert not media.take_images([frame])  # one more would overrun the window
    assert media.image_limit_reached and media.tokens_returned == fitting * (27 * 15 + 2)
