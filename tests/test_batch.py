"""`inspect eval --batch` through Inspect's real batchers and the real SDKs, against the
batch endpoints of the provider stand-in (tests/support/batch_endpoints.py): every request
of the model under evaluation goes through a batch that fits the provider's documented
batch limits (task_configs/model_limits.yaml `batch:`), a batch that fails fails its
samples (never graded), and `inspect eval-retry` re-runs exactly those."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog

from hss_inspect.conditions import answer
from hss_inspect.media.uri import data_uri
from hss_inspect.providers.batching import batch_rules_for
from tests.support.fixture_repo import TASKS, FixtureTask, build_repo, jpeg_bytes, write_video
from tests.support.runs import INSPECT, retry_eval, run_eval
from tests.support.servers import provider_stand_in, scripted_models

pytestmark = [pytest.mark.slow, pytest.mark.inspect_api]

FIRST_IMAGE = TASKS[0]
FIRST_VIDEO = next(t for t in TASKS if t.media_type == "video")


def _task(task_id: str, behaviour: str, like: FixtureTask) -> FixtureTask:
    return FixtureTask(
        task_id,
        behaviour,
        like.domain,
        like.subdomain,
        like.media_type,
        like.media_path,
        like.criteria,
    )


BATCH_TASKS = (
    _task("t-pass", "PASS", FIRST_IMAGE),
    _task("t-fail", "FAIL", FIRST_IMAGE),
    _task("v-pass", "PASS", FIRST_VIDEO),
)
PASSES = {"t-pass": 1, "t-fail": 0, "v-pass": 1}  # what the scripted judge says
JSONL = "application/jsonl"  # the Gemini batcher's upload of a batch's input file
EPOCHS = 2
MODELS: dict[str, tuple[str, dict[str, str], tuple[str, ...]]] = {
    "anthropic": (
        "anthropic/claude-opus-5",
        {"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "test-key"},
        ("--max-tokens", "1000"),
    ),
    "openai": ("openai/gpt-6-astra", {"OPENAI_BASE_URL": "{url}/v1", "OPENAI_API_KEY": "k"}, ()),
    "google": ("google/gemini-3.8-flash", {"GOOGLE_BASE_URL": "{url}", "GOOGLE_API_KEY": "k"}, ()),
}


@pytest.fixture(scope="module")
def judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with scripted_models(tmp_path_factory.mktemp("judge")) as served:
        yield served


def batch_limits(provider: str) -> dict[str, Any]:
    """The stand-in refuses a batch over the provider's documented limits."""
    rules = batch_rules_for(MODELS[provider][0])
    return {"batch_max_bytes": rules.max_batch_bytes, "batch_max_requests": rules.max_requests}


def batched_run(
    provider: str,
    url: str,
    judge_url: str,
    release: Path,
    tmp_path: Path,
    *args: str,
    task: str = "hss_inspect/hss",
    batch: str = "send_delay: 1\ntick: 0.5\n",
) -> tuple[EvalLog, str]:
    """The log and the command's standard error."""
    model, _, extra = MODELS[provider]
    config = tmp_path / "batch.yaml"
    config.write_text(batch)
    log, done = run_eval(
        task,
        tmp_path / "logs",
        judge_url,
        "--batch",
        str(config),
        "--no-log-images",
        *extra,
        *args,
        model=model,
        epochs=EPOCHS,
        task_args={"dataset": release},
        env=run_env(provider, url, tmp_path),
    )
    return log, done.stderr


def run_env(provider: str, url: str, tmp_path: Path) -> dict[str, str]:
    own = {k: v.format(url=url) for k, v in MODELS[provider][1].items()}
    return {
        **own,
        "HSS_INSPECT_CACHE": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


def wire(log_file: Path, start: int = 0) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_file.read_text().splitlines()[start:]]


def batches_in(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["api"].endswith("-batch")]


def hss_requests(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The requests answered for the model under evaluation (HSS's carry the question;
    Inspect's own start-up probe does not)."""
    return [
        e
        for e in entries
        if not e["api"].endswith(("-batch", "-files"))
        and e["behaviour"] in {"PASS", "FAIL", "OUTAGE"}
        and e["body_bytes"] > 300
    ]


def metrics_of(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


@pytest.mark.parametrize(
    ("provider", "task"),
    [
        ("anthropic", "hss_inspect/hss"),
        ("openai", "hss_inspect/hss"),
        # Gemini: the image by Files API reference, the clip whole (native video)
        ("google", "hss_inspect/hss"),
        ("google", "hss_inspect/hss_blind"),
    ],
)
def test_a_batched_run_sends_every_request_in_batches_that_fit(
    judge: tuple[str, Path], tmp_path: Path, provider: str, task: str
) -> None:
    release = build_repo(tmp_path / "release", BATCH_TASKS)
    with provider_stand_in(tmp_path / "server", {"batch_seconds": 1, **batch_limits(provider)}) as (
        url,
        log_file,
    ):
        log, _ = batched_run(provider, url, judge[0], release, tmp_path, task=task)
        entries = wire(log_file)
    assert log.status == "success", log.error
    samples = log.samples or []
    assert len(samples) == len(BATCH_TASKS) * EPOCHS and all(s.scores for s in samples)
    batches = batches_in(entries)
    answered = hss_requests(entries)
    # every attempt's request went through a batch, once, and each batch fits the API
    assert len(answered) == len(samples) == sum(b["requests"] for b in batches)
    rules = batch_rules_for(MODELS[provider][0])
    for batch in batches:
        assert batch["status"] == "ended"
        assert batch["body_bytes"] <= (rules.max_batch_bytes or 0)
        assert batch["requests"] <= (rules.max_requests or 50_000)
    if task == "hss_inspect/hss":
        assert {len(e["images"] + e["videos"]) > 0 for e in answered} == {True}
        assert metrics_of(log)["pass_at_1"] == pytest.approx(sum(PASSES.values()) / 3)
    if provider == "google" and task == "hss_inspect/hss":
        # nothing inline: the image and the clip are uploads the request refers to
        media = [m for e in answered for m in e["images"] + e["videos"]]
        assert media and all(m["file_uri"] for m in media)
        kinds = {s.id: (s.metadata or {})["sent_media"]["kind"] for s in samples}
        assert kinds == {"t-pass": "image", "t-fail": "image", "v-pass": "native_video"}


def long_clip_release(root: Path) -> Path:
    """An image task and a 250-second clip, which HSS samples at 2 fps to 500 frames."""
    release = build_repo(root, (BATCH_TASKS[0], BATCH_TASKS[2]))
    write_video(release / FIRST_VIDEO.media_path, fps=2, seconds=250, size=(192, 108))
    return release


def images_per_request(entries: list[dict[str, Any]]) -> list[list[tuple[Any, ...]]]:
    """Each request's images as the model got them, in their order (requests sorted)."""
    return sorted(
        [(i["sha256"], i["width"], i["height"], i["mime"]) for i in entry["images"]]
        for entry in hss_requests(entries)
    )


def test_gemini_gets_in_a_batch_the_images_and_500_frames_it_gets_directly(
    judge: tuple[str, Path], tmp_path: Path
) -> None:
    """Inspect's Gemini batcher cannot write an inline image (pinned below), so in batch
    mode each image is uploaded and referenced: the same bytes, sizes, MIME types and
    order as a direct run sends inline, in batches that fit the Batch API."""
    release = long_clip_release(tmp_path / "release")
    frames = ("-T", "native_video=false")
    with provider_stand_in(tmp_path / "server", {"batch_seconds": 1, **batch_limits("google")}) as (
        url,
        log_file,
    ):
        direct, _ = run_eval(
            "hss_inspect/hss",
            tmp_path / "direct",
            judge[0],
            "--no-log-images",
            *frames,
            model=MODELS["google"][0],
            epochs=EPOCHS,
            task_args={"dataset": release},
            env=run_env("google", url, tmp_path),
        )
        start = len(wire(log_file))
        batched, _ = batched_run("google", url, judge[0], release, tmp_path, *frames)
        sent_direct, sent_batched = wire(log_file)[:start], wire(log_file, start)
    assert direct.status == batched.status == "success", (direct.error, batched.error)
    assert metrics_of(batched)["pass_at_1"] == metrics_of(direct)["pass_at_1"] == 1
    # the model got the same images, each request's in the same order
    assert images_per_request(sent_batched) == images_per_request(sent_direct)
    counts = sorted(len(images) for images in images_per_request(sent_batched))
    assert counts == [1] * EPOCHS + [500] * EPOCHS
    # directly inline and no batch; batched by reference only, each attempt once in a batch
    assert batches_in(sent_direct) == []
    assert all("file_uri" not in i for e in hss_requests(sent_direct) for i in e["images"])
    answered = hss_requests(sent_batched)
    assert all(i["file_uri"] for e in answered for i in e["images"])
    rules = batch_rules_for(MODELS["google"][0])
    batches = batches_in(sent_batched)
    assert sum(b["requests"] for b in batches) == len(answered) == 2 * EPOCHS
    assert all(b["body_bytes"] <= (rules.max_batch_bytes or 0) for b in batches)
    # each distinct image (as the direct run sent them) is uploaded once: the next attempt
    # refers to the same upload
    uploads = [e for e in sent_batched if e["api"] == "google-files" and e["mime"] != JSONL]
    distinct = {i["sha256"] for e in hss_requests(sent_direct) for i in e["images"]}
    assert len(uploads) == len(distinct) > 400
    for sample in batched.samples or []:
        assert (sample.metadata or {})["sent_media"]["image_transport"] == "files_api"
    for sample in direct.samples or []:
        assert "image_transport" not in (sample.metadata or {})["sent_media"]


@pytest.mark.parametrize(
    ("model", "task", "refusal"),
    [
        (
            "google/gemini-3.8-flash",
            "hss_inspect/hss_agentic",
            "google/gemini-3.8-flash with --batch: the agentic tools return frames and crops "
            "as inline images, which Inspect's batcher for the Gemini Batch API cannot write "
            "(an Inspect bug: TypeError: Object of type bytes is not JSON serializable, which "
            "ends the eval); run hss_agentic on this model without --batch",
        ),
        (
            "google/vertex/gemini-3.8-flash",
            "hss_inspect/hss",
            "google/vertex/gemini-3.8-flash with --batch: Inspect cannot batch this "
            "provider's requests (it fails them once the run has started); run without --batch",
        ),
    ],
)
def test_a_batched_run_inspect_would_end_midway_is_refused_before_any_request(
    tmp_path: Path, model: str, task: str, refusal: str
) -> None:
    release = build_repo(tmp_path / "release", BATCH_TASKS)
    with provider_stand_in(tmp_path / "server", {}) as (url, log_file):
        command = [INSPECT, "eval", task, "--model", model, "--batch", "--display", "plain"]
        command += ["-T", f"dataset={release}", "--model-role", f"grader={model}"]
        done = subprocess.run(
            [*command, "--log-dir", str(tmp_path / "logs")],
            env={
                **os.environ,
                **run_env("google", url, tmp_path),
                "GOOGLE_CLOUD_PROJECT": "hss-test",
                "GOOGLE_CLOUD_LOCATION": "us-central1",
                "COLUMNS": "400",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        entries = wire(log_file)
    assert done.returncode == 1
    assert refusal in done.stdout + done.stderr and "Traceback" not in done.stdout + done.stderr
    assert entries == []  # nothing was uploaded or asked
    assert not list((tmp_path / "logs").glob("*.eval"))  # no sample started


# A task of our own, outside HSS, for the pin below: one inline image to the model.
INLINE_IMAGE_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText

IMAGE = "{image}"


@task
def inline_image():
    message = ChatMessageUser(
        content=[ContentText(text="Question: What is here? [PASS]"), ContentImage(image=IMAGE)]
    )
    return Task(dataset=[Sample(input=[message], target="x")])
"""


def test_geminis_batcher_still_cannot_write_an_inline_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Inspect bug HSS works around (`inline_images: false` for the Gemini Batch API in
    model_limits.yaml): its batcher sizes each request with json.dumps, and a request with
    an inline image holds bytes. When Inspect fixes it this test fails: set
    `inline_images: true` (or drop it) and the images go inline again."""
    image = data_uri(jpeg_bytes((32, 24)), "image/jpeg")
    (tmp_path / "inline_image.py").write_text(INLINE_IMAGE_TASK.format(image=image))
    with provider_stand_in(tmp_path / "server", {}) as (url, log_file):
        monkeypatch.chdir(tmp_path)  # Inspect finds a task file by a relative path
        log, done = run_eval(
            "inline_image.py",
            tmp_path / "logs",
            url,
            "--batch",
            model=MODELS["google"][0],
            grader=None,
            env=run_env("google", url, tmp_path),
        )
        entries = wire(log_file)
    # the batch worker's exception ends the whole eval, not a sample
    assert log.status in ("error", "cancelled") and not any(
        s.output.completion for s in log.samples or []
    )
    assert "Object of type bytes is not JSON serializable" in done.stderr
    assert batches_in(entries) == [] and hss_requests(entries) == []


@pytest.mark.parametrize(
    ("provider", "failure", "raised"),
    [
        # Anthropic ends a batch past its window with every request `expired`
        ("anthropic", "expired", "APITimeoutError"),
        # OpenAI's rejected batch reaches the sample as Inspect's RuntimeError
        ("openai", "failed", "RuntimeError"),
        # OpenAI's expired batch: Inspect 0.3.285 fails reading the error file (a bug of
        # Inspect's, so the sample fails as one, with its traceback)
        ("openai", "expired", "TypeError"),
    ],
)
def test_a_failed_batch_fails_its_samples_and_eval_retry_reruns_exactly_those(
    judge: tuple[str, Path], tmp_path: Path, provider: str, failure: str, raised: str
) -> None:
    judge_url, judge_log = judge
    judged_before = len(judge_log.read_text().splitlines())
    release = build_repo(tmp_path / "release", BATCH_TASKS)
    rules = {"batch_seconds": 0.5, "fail_batches": 1, "batch_failure": failure}
    # all of the first epoch's requests go in one batch (send_delay), which fails
    config = "size: 3\nmax_size: 3\nsend_delay: 2\ntick: 0.5\n"
    with provider_stand_in(tmp_path / "server", rules) as (url, log_file):
        first, _ = batched_run(
            provider,
            url,
            judge_url,
            release,
            tmp_path,
            "--max-retries",
            "0",
            "--continue-on-fail",
            batch=config,
        )
        during = wire(log_file)
        retried, done = retry_eval(first, judge_url, env=run_env(provider, url, tmp_path))
        after = wire(log_file, len(during))
    assert first.status == "error"
    failed = [s for s in first.samples or [] if s.error is not None]
    assert failed and all(not s.scores for s in failed)  # never graded: no zero
    assert {b["status"] for b in batches_in(during)} >= {failure}
    failed_batch = next(b for b in batches_in(during) if b["status"] == failure)
    assert len(failed) == failed_batch["requests"] == 3
    for sample in failed:
        assert raised in sample.error.message or raised in sample.error.traceback
        provider_failure = "eval-retry runs it again" in sample.error.message
        assert provider_failure == (raised != "TypeError")
    # eval-retry sends exactly the failed attempts, in batches, and completes the run
    assert retried.status == "success", done.stderr
    assert len(hss_requests(after)) == len(failed) == sum(b["requests"] for b in batches_in(after))
    samples = retried.samples or []
    assert len(samples) == len(BATCH_TASKS) * EPOCHS and all(s.scores for s in samples)
    assert metrics_of(retried)["pass_at_1"] == pytest.approx(sum(PASSES.values()) / 3)
    judged = len(judge_log.read_text().splitlines()) - judged_before
    assert judged == len(samples)  # each attempt judged exactly once across both runs


def test_the_batcher_frame_answer_looks_for_is_inspects() -> None:
    """answer.py names the frame where Inspect's batchers raise a batched request's error."""
    import importlib

    module_name, function = answer._BATCH_RESULT_FRAME
    batcher = importlib.import_module(module_name).Batcher
    assert getattr(batcher, function).__code__.co_name == function


def test_a_runtime_error_raised_elsewhere_is_still_a_bug() -> None:
    try:
        raise RuntimeError("not from a batch")
    except RuntimeError as error:
        assert not answer.is_provider_error(error)
