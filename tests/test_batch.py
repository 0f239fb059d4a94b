"""`inspect eval --batch` through Inspect's real batchers and the real SDKs, against the
batch endpoints of the provider stand-in (tests/support/batch_endpoints.py): every request
of the model under evaluation goes through a batch that fits the provider's documented
batch limits (task_configs/model_limits.yaml `batch:`), a batch that fails fails its
samples (never graded), and `inspect eval-retry` re-runs exactly those."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog

from hss_inspect.conditions import answer
from hss_inspect.providers.batching import batch_rules_for
from tests.support.fixture_repo import TASKS, FixtureTask, build_repo
from tests.support.runs import retry_eval, run_eval
from tests.support.servers import provider_stand_in, scripted_models

pytestmark = pytest.mark.slow

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
        # Inspect 0.3.285's Gemini batcher cannot write image bytes (below): text only
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
        assert {len(e["images"]) > 0 for e in answered} == {True}
        assert metrics_of(log)["pass_at_1"] == pytest.approx(sum(PASSES.values()) / 3)


def test_geminis_batcher_cannot_send_images_on_this_inspect(
    judge: tuple[str, Path], tmp_path: Path
) -> None:
    """Pinned so the docs' warning goes when Inspect fixes it: its GoogleBatcher measures
    each request with json.dumps over the SDK's parts, and an image part holds bytes."""
    release = build_repo(tmp_path / "release", BATCH_TASKS[:1])
    with provider_stand_in(tmp_path / "server", {}) as (url, log_file):
        log, stderr = batched_run("google", url, judge[0], release, tmp_path)
        entries = wire(log_file)
    # the batch worker's exception ends the whole eval, not a sample
    assert log.status in ("error", "cancelled") and not any(s.scores for s in log.samples or [])
    assert "Object of type bytes is not JSON serializable" in stderr
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
