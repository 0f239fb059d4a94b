"""Open-weight models behind a vLLM server: a 500-frame clip fitted to the served context
window, through Inspect's real `vllm/` and `openai-api/` providers, to a stand-in of
vLLM's OpenAI-compatible API (tests/support/vllm_server.py) that counts image tokens by
the served model's rule and refuses over its window with vLLM's own text.

The expected frame counts are worked out here from the documented constants
(task_configs/model_limits.yaml `token_fit`), the Qwen2.5-VL rule as the stand-in applies
it, and the text that went on the wire.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai.log import EvalLog
from inspect_ai.model import get_model_info

from tests.support.fixture_repo import FixtureTask, build_repo, write_video
from tests.support.runs import run_eval
from tests.support.servers import provider_stand_in

pytestmark = [pytest.mark.slow, pytest.mark.inspect_api]

ROOT = Path(__file__).resolve().parents[1]
SERVED = "Qwen/Qwen2.5-VL-7B-Instruct"
WINDOW = 32_768
MAX_TOKENS = 1000
QWEN25 = {"factor": 28, "min_pixels": 3136, "max_pixels": 12_845_056}
CLIP = (448, 252)  # 16 x 9 blocks of 28 px: 144 + 2 tokens a frame under Qwen2.5-VL
CLIP_SECONDS = 250  # 500 frames at 2 fps: the 500-frame cap exactly
TASK = FixtureTask(
    "vid-long",
    "PASS",
    "Temporal & Causal Dynamics",
    "Retrodiction",
    "video",
    "media/vid_long.mp4",
    ({"id": "c1", "title": "States the key fact"},),
)


def fit_constants() -> dict[str, Any]:
    rules = yaml.safe_load((ROOT / "task_configs" / "model_limits.yaml").read_text())
    return dict(rules["token_fit"])


@pytest.fixture(scope="module")
def long_clip_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_repo(tmp_path_factory.mktemp("open-weight-release"), (TASK,))
    write_video(root / TASK.media_path, fps=2, seconds=CLIP_SECONDS, size=CLIP)
    return root


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("open-weight-cache")


@pytest.fixture
def vllm_server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    config = {"model": SERVED, "max_model_len": WINDOW, "qwen": QWEN25}
    config.update(getattr(request, "param", {}))
    with provider_stand_in(tmp_path / "vllm", config, "vllm_server.py") as served:
        yield served


def run(
    model: str,
    repo: Path,
    cache: Path,
    judge: tuple[str, Path],
    workdir: Path,
    *args: str,
    env: dict[str, str] | None = None,
    task_args: dict[str, object] | None = None,
) -> EvalLog:
    log, _ = run_eval(
        "hss_inspect/hss",
        workdir / "logs",
        judge[0],
        "--max-tokens",
        str(MAX_TOKENS),
        "--no-fail-on-error",
        "--no-log-images",
        *args,
        model=model,
        epochs=1,
        task_args={"dataset": repo, **(task_args or {})},
        env={"HSS_INSPECT_CACHE": str(cache), **(env or {})},
    )
    return log


def chats(log_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_file.read_text().splitlines()]


def only_sample(log: EvalLog) -> Any:
    assert log.samples and len(log.samples) == 1
    return log.samples[0]


def largest_that_fits(entry: dict[str, Any], window: int) -> int:
    """Frames of the request's size that fit `window` by the documented rule: the window
    less the output (--max-tokens), the margin and the template allowance, less the note
    and question as sent, divided by a frame's tokens (its image, its label, and a
    separator either side of the label)."""
    constants = fit_constants()
    input_tokens = window - MAX_TOKENS
    room = input_tokens - math.ceil(constants["margin"] * input_tokens)
    room -= constants["template_tokens"]
    labels = [t for t in entry["texts"] if t.startswith("Frame at ")]
    others = [t for t in entry["texts"] if not t.startswith("Frame at ")]
    label = max(len(t.encode()) for t in labels) + constants["label_extra_tokens"]
    per_frame = entry["images"][0]["tokens"] + label
    return (room - sum(len(t.encode()) for t in others)) // per_frame


def assert_graded(sample: Any) -> None:
    assert sample.error is None, sample.error
    score = next(iter(sample.scores.values()))
    assert score.value["pass"] == 1


@pytest.fixture(scope="module")
def server_run(
    long_clip_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, EvalLog, Path]]:
    """The 500-frame clip through `vllm/` to a 32k server; yields (server URL, log, the
    server's request log), the server still up."""
    workdir = tmp_path_factory.mktemp("server-run")
    config = {"model": SERVED, "max_model_len": WINDOW, "qwen": QWEN25}
    with provider_stand_in(workdir / "vllm", config, "vllm_server.py") as (url, wire):
        log = run(
            f"vllm/{SERVED}",
            long_clip_repo,
            shared_cache,
            model_server,
            workdir,
            "--model-base-url",
            f"{url}/v1",
        )
        yield url, log, wire


def test_a_500_frame_clip_reaches_a_32k_vllm_server_as_the_most_frames_that_fit(
    server_run: tuple[str, EvalLog, Path],
) -> None:
    _, log, wire = server_run
    [entry] = chats(wire)
    sample = only_sample(log)
    assert_graded(sample)
    assert entry["status"] == 200 and entry["max_tokens"] == MAX_TOKENS
    assert entry["prompt_tokens"] + MAX_TOKENS <= WINDOW
    sent = len(entry["images"])
    assert {(i["width"], i["height"], i["tokens"]) for i in entry["images"]} == {(*CLIP, 146)}
    # the most that fit, and far fewer than the 500 planned (146 + 20 tokens each)
    expected = largest_that_fits(entry, WINDOW)
    assert sent in (expected, expected - 1)  # the fit's note is the planned one: digits may differ
    assert 150 < sent < 200
    fit = sample.metadata["sent_media"]["token_fit"]
    assert fit["window"] == WINDOW and fit["window_source"] == "server"
    assert "max_model_len" in fit["window_detail"]
    assert fit["output_reserve"] == MAX_TOKENS and fit["output_reserve_source"] == "--max-tokens"
    assert fit["frames_planned"] == 500 and fit["frames_sent"] == sent
    assert fit["thinned_to_fit"] and not fit["shrunk_to_fit"] and fit["frame_side"] == 448
    assert fit["rule"]["name"] == "Qwen2-VL / Qwen2.5-VL"
    assert fit["estimated_image_tokens"] == 146 * sent
    assert fit["estimated_tokens"] >= entry["prompt_tokens"] - 5  # the stand-in's template
    note = entry["texts"][0]
    assert f"The following {sent} frames" in note and "thinned from 500 frames" in note
    assert "0.00, " in note and "249.50" in note  # both ends kept
    assert sample.metadata["frames_received"]["frames"] == sent


def test_estimate_shows_the_fit_the_run_then_sent(
    server_run: tuple[str, EvalLog, Path],
    long_clip_repo: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hss_inspect.commands.cli import main

    url, log, wire = server_run
    [entry] = chats(wire)
    args = ["estimate", "--model", f"vllm/{SERVED}", "--dataset", str(long_clip_repo)]
    args += ["--model-base-url", f"{url}/v1", "--max-tokens", str(MAX_TOKENS), "--epochs", "1"]
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["token_budget"]["window"] == WINDOW
    assert result["token_budget"]["source"] == "server"
    [clip] = result["per_task"]
    fit = only_sample(log).metadata["sent_media"]["token_fit"]
    assert clip["frames_sent"] == len(entry["images"]) == fit["frames_sent"]
    assert (clip["frames_planned"], clip["frame_side"], clip["fit"]) == (500, 448, "thinned")
    assert clip["image_tokens"] == sum(i["tokens"] for i in entry["images"])
    assert clip["estimated_tokens"] == fit["estimated_tokens"]
    assert main(args) == 0
    assert len(chats(wire)) == 1  # the estimate asked the server its window, sent nothing
    text = capsys.readouterr().out
    assert "context window:      32,768 tokens (server: max_model_len" in text
    assert re.search(rf"vid-long\s+500\s+{clip['frames_sent']}\s+448\s+[\d,]+\s+thinned", text)


def test_the_report_shows_the_frames_each_model_received(
    server_run: tuple[str, EvalLog, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from hss_inspect.commands.cli import main

    _, log, wire = server_run
    [entry] = chats(wire)
    sent = len(entry["images"])
    assert main(["report", log.location, "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert row["frames_received"] == {
        "attempts": 1,
        "median": sent,
        "min": sent,
        "max": sent,
        "fitted_to_window": 1,
    }
    assert main(["report", log.location]) == 0
    markdown = capsys.readouterr().out
    line = f"- vllm/{SERVED}: median {sent} (min {sent}, max {sent}) over 1 attempt(s); 1 thinned"
    assert line in markdown


def test_a_context_window_given_with_T_wins_over_the_servers(
    long_clip_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    vllm_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    url, wire = vllm_server
    log = run(
        f"openai-api/vllmx/{SERVED}",
        long_clip_repo,
        shared_cache,
        model_server,
        tmp_path,
        env={"VLLMX_BASE_URL": f"{url}/v1", "VLLMX_API_KEY": "test-key"},
        task_args={"context_window": 16_384},
    )
    sample = only_sample(log)
    assert_graded(sample)
    [entry] = chats(wire)
    expected = largest_that_fits(entry, 16_384)
    assert len(entry["images"]) in (expected, expected - 1)
    assert entry["prompt_tokens"] + MAX_TOKENS <= 16_384
    fit = sample.metadata["sent_media"]["token_fit"]
    assert (fit["window"], fit["window_source"]) == (16_384, "option")
    assert fit["window_detail"] == "-T context_window=16384"


@pytest.mark.parametrize(
    "vllm_server",
    [{"model": "Qwen/Qwen2.5-VL-72B-Instruct", "max_model_len": None, "true_window": WINDOW}],
    indirect=True,
)
def test_a_model_in_inspects_model_info_gets_its_window_from_there(
    long_clip_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    vllm_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    info = get_model_info("Qwen/Qwen2.5-VL-72B-Instruct")
    assert info is not None and info.context_length is not None
    url, wire = vllm_server
    log = run(
        "openai-api/vllmx/Qwen/Qwen2.5-VL-72B-Instruct",
        long_clip_repo,
        shared_cache,
        model_server,
        tmp_path,
        env={"VLLMX_BASE_URL": f"{url}/v1", "VLLMX_API_KEY": "test-key"},
    )
    sample = only_sample(log)
    fit = sample.metadata["sent_media"]["token_fit"]
    assert (fit["window"], fit["window_source"]) == (info.context_length, "model info")
    assert "Qwen/Qwen2.5-VL-72B-Instruct" in fit["window_detail"]
    [entry] = chats(wire)
    expected = largest_that_fits(entry, info.context_length)
    assert len(entry["images"]) in (expected, expected - 1)
    if info.context_length <= WINDOW:
        assert_graded(sample)


def run_at_window(
    url: str,
    window: int,
    repo: Path,
    cache: Path,
    model_server: tuple[str, Path],
    tmp_path: Path,
) -> EvalLog:
    """The long clip through `vllm/` at the stand-in, with `-T context_window=window`."""
    return run(
        f"vllm/{SERVED}",
        repo,
        cache,
        model_server,
        tmp_path,
        "--model-base-url",
        f"{url}/v1",
        task_args={"context_window": window},
    )


def test_a_clip_that_cannot_fit_fails_before_any_request(
    long_clip_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    vllm_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    url, wire = vllm_server
    log = run_at_window(url, 1500, long_clip_repo, shared_cache, model_server, tmp_path)
    sample = only_sample(log)
    assert chats(wire) == []  # nothing was sent
    assert not sample.scores and sample.error is not None
    message = sample.error.message
    assert "task vid-long" in message and "even 8 frames at 128 px" in message
    assert "-T context_window=1500" in message and "--max-model-len" in message


def test_a_window_the_server_does_not_have_is_refused_as_a_sample_error_naming_both(
    long_clip_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    vllm_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    url, wire = vllm_server
    log = run_at_window(url, 65_536, long_clip_repo, shared_cache, model_server, tmp_path)
    sample = only_sample(log)
    [entry] = chats(wire)
    assert entry["status"] == 400 and entry["prompt_tokens"] > WINDOW
    assert not sample.scores and sample.error is not None
    message = sample.error.message
    assert "maximum model length of 32768" in message
    assert "The server's limit is a context window of 32,768 tokens (vLLM)" in message
    assert "a context window of 65,536 tokens (option: -T context_window=65536)" in message
    assert "-T context_window to the server's window" in message


def test_estimate_shows_a_shrunk_fit_and_a_clip_that_cannot_fit(
    long_clip_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hss_inspect.commands.cli import main

    args = ["estimate", "--model", f"vllm/{SERVED}", "--dataset", str(long_clip_repo)]
    args += ["--max-tokens", str(MAX_TOKENS), "--epochs", "1", "--json"]
    # 2,400 - 1,000 output = 1,400: 28 margin, 256 template, ~460 text leave ~650 for 8
    # frames, ~80 each with its 20-token label: about 60 for the image, under the 146 of
    # a 448 px frame: shrunk
    assert main([*args, "--context-window", "2400"]) == 0
    [clip] = json.loads(capsys.readouterr().out)["per_task"]
    assert (clip["frames_sent"], clip["fit"]) == (8, "thinned+shrunk")
    width, height = clip["sizes"][0]
    assert max(width, height) == clip["frame_side"] < 448
    # the Qwen2.5-VL tokens of the size sent, + 2, are within the share of one frame
    per_image = clip["image_tokens"] // 8
    assert per_image == round(height / 28) * round(width / 28) + 2 <= 60
    assert main([*args, "--context-window", "1500"]) == 0
    result = json.loads(capsys.readouterr().out)
    [clip] = result["per_task"]
    assert clip["frames_sent"] is None and "even 8 frames at 128 px" in clip["fit"]
    # the run fails that sample before sending it: no request, no judge call counted
    assert not clip["sent"] and result["requests"] == 0
    assert result["cost"]["judge_calls"] == 0
