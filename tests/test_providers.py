"""Requests through Inspect's real provider clients to local stand-ins of each provider's
own API (tests/support/provider_server.py), asserted on the wire: image count, image
dimensions, encoded bytes per image and per request, each within the provider's rules
from task_configs/model_limits.yaml."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog

from hss_inspect.providers.limits import encoded_size, provider_rules
from tests.support.fixture_repo import build_repo, one_criterion_task, write_noise_video
from tests.support.runs import run_eval
from tests.support.servers import provider_stand_in

pytestmark = [pytest.mark.slow, pytest.mark.inspect_api]

NOISE_FRAMES = 100  # at 2 fps, 768x432 noise: about 29 MB of JPEG frames, the case


TASKS = (
    one_criterion_task("img-large", "PASS", "image", "media/img_large.png"),
    one_criterion_task("img-emptyonce", "EMPTYONCE", "image", "media/img_pass.png"),
    one_criterion_task("img-empty", "EMPTY", "image", "media/img_pass.png"),
    one_criterion_task("img-broken", "BROKEN", "image", "media/img_pass.png"),
    one_criterion_task("vid-noise", "PASS", "video", "media/vid_noise.mp4"),
    one_criterion_task("vid-small", "PASS", "video", "media/vid_cfr.mp4"),
    one_criterion_task("vid-toobig", "TOOBIG", "video", "media/vid_cfr.mp4"),
)


@pytest.fixture(scope="module")
def provider_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = build_repo(tmp_path_factory.mktemp("provider-release"), TASKS)
    write_noise_video(root / "media" / "vid_noise.mp4", NOISE_FRAMES)
    return root


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("provider-cache")


def wire(log_file: Path, start: int = 0) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_file.read_text().splitlines()[start:]]


def run_against(
    model: str,
    samples: str,
    repo: Path,
    cache: Path,
    model_server: tuple[str, Path],
    workdir: Path,
    env: dict[str, str],
    *args: str,
    task_args: dict[str, object] | None = None,
) -> EvalLog:
    judge_url = model_server[0]
    log, _ = run_eval(
        "hss_inspect/hss",
        workdir / "logs",
        judge_url,
        "--sample-id",
        samples,
        "--max-tokens",
        "1000",
        "--no-fail-on-error",
        "--no-log-images",  # keeps these runs fast: the wire log holds what was sent
        *args,
        model=model,
        epochs=1,
        task_args={"dataset": repo, **(task_args or {})},
        env={"HSS_INSPECT_CACHE": str(cache), **env},
    )
    return log


ANTHROPIC_WIRE_RULES = {  # the direct Messages API's documented rules (vision guide, API overview)
    "request_max_bytes": 32_000_000,
    "images_per_request": 600,
    "image_max_encoded": 10_000_000,
    "image_max_side": 8000,
}


@pytest.fixture(scope="module")
def anthropic_run(
    provider_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[EvalLog, list[dict[str, Any]]]]:
    workdir = tmp_path_factory.mktemp("anthropic")
    with provider_stand_in(workdir / "server", ANTHROPIC_WIRE_RULES) as (url, log_file):
        log = run_against(
            "anthropic/claude-opus-5",
            "img-large,img-emptyonce,img-empty,img-broken,vid-noise,vid-toobig",
            provider_repo,
            shared_cache,
            model_server,
            workdir,
            {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
            "-M",
            "streaming=false",
        )
        yield log, wire(log_file)


def by_behaviour(entries: list[dict[str, Any]], behaviour: str) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("behaviour") == behaviour]


def sample(log: EvalLog, sample_id: str) -> Any:
    found = [s for s in log.samples or [] if s.id == sample_id]
    assert len(found) == 1, sample_id
    return found[0]


def assert_within(entry: dict[str, Any], rules: dict[str, int | None]) -> None:
    """One request on the wire obeys the documented rules (numbers typed in this test)."""
    assert entry["status"] == 200
    if rules.get("request_max_bytes") is not None:
        assert entry["body_bytes"] <= rules["request_max_bytes"]
    if rules.get("images_per_request") is not None:
        assert len(entry["images"]) <= rules["images_per_request"]
    for image in entry["images"]:
        # base64 with padding, or without it (google-genai): 4/3 of the raw bytes
        assert encoded_size(image["raw"]) - 2 <= image["encoded"] <= encoded_size(image["raw"])
        if rules.get("image_max_encoded") is not None:
            assert image["encoded"] <= rules["image_max_encoded"]
        if rules.get("image_max_side") is not None:
            assert max(image["width"], image["height"]) <= rules["image_max_side"]


def assert_refused(refused: Any, provider_words: str) -> None:
    """A refusal is an error on the sample, with the provider's words, never a score."""
    assert not refused.scores
    assert refused.error is not None
    assert "refused the request for its size or count" in refused.error.message
    assert provider_words in refused.error.message


def test_anthropic_requests_fit_the_messages_api(
    anthropic_run: tuple[EvalLog, list[dict[str, Any]]], provider_repo: Path
) -> None:
    log, entries = anthropic_run
    assert log.status == "success"
    for entry in entries:
        if entry["behaviour"] != "TOOBIG":
            assert_within(entry, ANTHROPIC_WIRE_RULES)
    # the case: 100 high-entropy 768 px frames whose JPEGs total well over 24 MB,
    # i.e. over 32 MB once base64-encoded; today's 32 MB raw budget would have let them
    # through as one oversize request
    (noise,) = by_behaviour(entries, "PASS")[-1:]
    sent = sample(log, "vid-noise").metadata["sent_media"]
    assert len(noise["images"]) == NOISE_FRAMES == sent["frame_count"]
    assert encoded_size(sent["bytes_before_budget"]) > ANTHROPIC_WIRE_RULES["request_max_bytes"]
    assert sent["bytes_before_budget"] < 32_000_000  # under the old raw budget
    assert sent["shrunk_to_budget"] and sent["frame_size_sent"] != sent["frame_size"]
    assert [noise["images"][0]["width"], noise["images"][0]["height"]] == sent["frame_size_sent"]
    assert sum(i["raw"] for i in noise["images"]) == sent["bytes"] <= sent["byte_budget"]
    assert noise["body_bytes"] <= sent["payload"]["estimated_request_bytes"]
    assert sample(log, "vid-noise").scores["rubric_judge"].value["pass"] == 1
    # the paper's 4096 px image limit fits Anthropic's 8000 px: used unchanged
    (large,) = [e for e in entries if e["images"] and e["images"][0]["width"] == 4096]
    assert large["images"][0]["height"] == round(300 * 4096 / 4200)


def test_anthropic_413_is_a_sample_error_not_an_answer(
    anthropic_run: tuple[EvalLog, list[dict[str, Any]]],
) -> None:
    log, entries = anthropic_run
    (refused,) = by_behaviour(entries, "TOOBIG")
    assert refused["status"] == 413
    toobig = sample(log, "vid-toobig")
    assert not toobig.scores  # never graded: no answer, no zero
    message = toobig.error.message
    assert "refused the request for its size or count" in message
    assert "request_too_large" in message and "request 32.0 MB (32000000 bytes)" in message
    estimate = toobig.metadata["sent_media"]["payload"]["estimated_request_bytes"]
    assert f"({estimate} bytes) encoded" in message and "6 image(s)" in message


def test_empty_answer_is_retried_once_with_double_the_budget(
    anthropic_run: tuple[EvalLog, list[dict[str, Any]]],
) -> None:
    log, entries = anthropic_run
    assert [e["max_tokens"] for e in by_behaviour(entries, "EMPTYONCE")] == [1000, 2000]
    once = sample(log, "img-emptyonce")
    assert once.scores["rubric_judge"].value["pass"] == 1
    assert once.metadata["empty_answer_retry"]["max_tokens"] == 2000
    assert [e["max_tokens"] for e in by_behaviour(entries, "EMPTY")] == [1000, 2000]
    empty = sample(log, "img-empty")
    assert empty.metadata["empty_answer_retry"]["still_empty"] is True
    value = empty.scores["rubric_judge"].value
    assert value["pass"] == 0 and value["no_answer"] == 1


def test_provider_error_fails_the_sample_by_default(
    anthropic_run: tuple[EvalLog, list[dict[str, Any]]],
) -> None:
    log, entries = anthropic_run
    assert len(by_behaviour(entries, "BROKEN")) == 1
    broken = sample(log, "img-broken")
    # an error on the sample, for `inspect eval-retry`; never a score, never left out
    assert broken.error is not None and "temperature: unsupported" in broken.error.message
    assert not broken.scores and "model_error" not in broken.metadata
    assert log.results is not None
    (score,) = log.results.scores
    metrics = {name: m.value for name, m in score.metrics.items()}
    assert metrics["model_error_rate"] == 0 and metrics["grading_failure_rate"] == 0


OPENAI_WIRE_RULES = {  # images and vision guide
    "request_max_bytes": 512_000_000,
    "images_per_request": 1500,
    "image_max_encoded": 20_000_000,
}


def test_openai_responses_api_gets_the_paper_defaults_unchanged(
    provider_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    with provider_stand_in(tmp_path / "server", OPENAI_WIRE_RULES) as (url, log_file):
        log = run_against(
            "openai/gpt-6-astra",
            "img-large,vid-noise,vid-toobig",
            provider_repo,
            shared_cache,
            model_server,
            tmp_path,
            {"OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": "test-key"},
        )
        entries = wire(log_file)
    assert log.status == "success"
    assert {e["api"] for e in entries} == {"responses"}
    for entry in entries:
        if entry["behaviour"] != "TOOBIG":
            assert_within(entry, OPENAI_WIRE_RULES)
    assert_refused(sample(log, "vid-toobig"), "Error code: 413")
    noise = max(entries, key=lambda e: len(e["images"]))
    sent = sample(log, "vid-noise").metadata["sent_media"]
    # 4.5 MB images, 768 px frames, 500 frames and the 32 MB frame budget all fit OpenAI's
    # documented limits: nothing is shrunk
    assert not sent["shrunk_to_budget"]
    assert len(noise["images"]) == NOISE_FRAMES
    assert {(i["width"], i["height"]) for i in noise["images"]} == {(768, 432)}
    assert sum(i["raw"] for i in noise["images"]) == sent["bytes_before_budget"] == sent["bytes"]
    assert sample(log, "vid-noise").scores["rubric_judge"].value["pass"] == 1


GEMINI_WIRE_RULES = {"request_max_bytes": 20_000_000, "images_per_request": 3600}


def test_gemini_api_inline_cap_and_native_video_through_files_api(
    provider_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    env = {
        "GOOGLE_BASE_URL": "",
        "GOOGLE_API_KEY": "test-key",
        "XDG_DATA_HOME": str(tmp_path / "data"),  # Inspect's record of uploaded files
    }
    with provider_stand_in(tmp_path / "server", GEMINI_WIRE_RULES) as (url, log_file):
        env["GOOGLE_BASE_URL"] = url
        native = run_against(
            "google/gemini-3.8-flash",
            "img-large,vid-small,vid-toobig",
            provider_repo,
            shared_cache,
            model_server,
            tmp_path / "native",
            env,
        )
        native_entries = wire(log_file)
        frames = run_against(
            "google/gemini-3.8-flash",
            "vid-noise",
            provider_repo,
            shared_cache,
            model_server,
            tmp_path / "frames",
            env,
            task_args={"native_video": "false"},
        )
        frame_entries = wire(log_file, len(native_entries))
    assert native.status == frames.status == "success"
    uploads = [e for e in native_entries if e["api"] == "google-files"]
    clip = provider_repo / "media" / "vid_cfr.mp4"
    assert uploads and {u["uploaded_bytes"] for u in uploads} == {clip.stat().st_size}
    (video_request,) = [e for e in native_entries if e.get("videos") and e["behaviour"] == "PASS"]
    assert video_request["videos"][0]["uploaded_bytes"] == clip.stat().st_size
    assert sample(native, "vid-small").metadata["sent_media"]["kind"] == "native_video"
    for entry in native_entries + frame_entries:
        if entry["api"] == "google" and entry["behaviour"] != "TOOBIG":
            assert_within(entry, GEMINI_WIRE_RULES)
    # Gemini's refusal reaches Inspect as a 400 that its provider turns into a stop
    assert_refused(sample(native, "vid-toobig"), "payload size exceeds the limit")
    (noise,) = [e for e in frame_entries if e["api"] == "google"]
    sent = sample(frames, "vid-noise").metadata["sent_media"]
    assert len(noise["images"]) == NOISE_FRAMES and sent["shrunk_to_budget"]
    assert noise["body_bytes"] <= 20_000_000 < encoded_size(sent["bytes_before_budget"])


def test_openai_compatible_server_gets_the_paper_defaults(
    provider_repo: Path,
    shared_cache: Path,
    model_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    with provider_stand_in(tmp_path / "server", {}) as (url, log_file):
        log = run_against(
            "openai-api/standin/some-vlm",
            "img-large,vid-noise,vid-toobig",
            provider_repo,
            shared_cache,
            model_server,
            tmp_path,
            {"STANDIN_BASE_URL": url + "/v1", "STANDIN_API_KEY": "test-key"},
        )
        entries = wire(log_file)
    assert {e["api"] for e in entries} == {"chat"}
    assert provider_rules("openai-api/standin/some-vlm").request_max_bytes is None
    noise = max(entries, key=lambda e: len(e["images"]))
    assert {(i["width"], i["height"]) for i in noise["images"]} == {(768, 432)}
    assert not sample(log, "vid-noise").metadata["sent_media"]["shrunk_to_budget"]
    assert_refused(sample(log, "vid-toobig"), "Error code: 413")


def claude_tokens(width: int, height: int) -> int:
    """The vision guide's rule, computed here on its own: scaled to a 1568 px edge and
    ~1,600 tokens (1.2 MP) at most, then width x height / 750."""
    scale = min(1.0, 1568 / max(width, height), (1_200_000 / (width * height)) ** 0.5)
    return math.ceil(width * scale * height * scale / 750)


def test_estimate_matches_the_payload_then_sent(
    anthropic_run: tuple[EvalLog, list[dict[str, Any]]],
    provider_repo: Path,
    shared_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hss_inspect.commands.cli import main

    log, entries = anthropic_run
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(shared_cache))
    args = ["estimate", "--model", "anthropic/claude-opus-5", "--dataset", str(provider_repo)]
    assert main([*args, "--epochs", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    per_task = {t["task_id"]: t for t in result["per_task"]}
    assert result["requests"] == len(TASKS) and result["request_max_bytes"] == 32_000_000
    sent_by_task = {s.id: s.metadata["sent_media"] for s in log.samples or []}
    # each request on the wire, matched to its task by the task's own record
    for task_id, sent in sent_by_task.items():
        estimate = per_task[str(task_id)]
        behaviour = next(t.behaviour for t in TASKS if t.task_id == task_id)
        wire_entries = [
            e
            for e in entries
            if len(e["images"]) == sent["payload"]["images"] and e["behaviour"] == behaviour
        ]
        assert wire_entries, task_id
        for entry in wire_entries:
            assert estimate["images"] == len(entry["images"])
            assert entry["body_bytes"] <= estimate["request_bytes"]
            slack = estimate["request_bytes"] - entry["body_bytes"]
            assert slack < 20_000 + 250 * len(entry["images"])  # the margin, no more
            expected = sum(claude_tokens(i["width"], i["height"]) for i in entry["images"])
            assert estimate["image_tokens"] == expected
    assert main(args) == 0
    text = capsys.readouterr().out
    assert f"requests:            {3 * len(TASKS)}" in text and "image input tokens:" in text
