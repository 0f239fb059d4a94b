"""A bug is never an outage, and an outage never leaves holes.

Which exceptions are the provider's is decided by type (first tests). Then through the
real command line: a bug injected into generation and into a tool fails its sample and
the eval, even with `-T model_errors=omit`; an HTTP 500 outage on one task through
Inspect's `anthropic` and `openai-api` providers ends the run in error, and
`inspect eval-retry` completes it with every attempt judged exactly once; a rate-limited
run (HTTP 429) completes on Inspect's retries; a labeller option without its role is
refused before any model is called.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google.genai import errors as genai_errors
from inspect_ai.log import EvalLog
from tenacity import Future, RetryError

from hss_inspect.conditions.answer import (
    _PROVIDER_ERROR_CLASSES,
    is_provider_error,
    is_transient,
)
from hss_inspect.media.errors import MediaError
from tests.support.faulty_inspect import INJECTED
from tests.support.fixture_repo import TASKS, FixtureTask, build_repo
from tests.support.provider_server import POLICY_MESSAGE
from tests.support.runs import JUDGE, retry_eval, run_eval, run_refused
from tests.support.servers import provider_stand_in, scripted_models

pytestmark = pytest.mark.inspect_api

FAULTY_INSPECT = (sys.executable, "-m", "tests.support.faulty_inspect")
EPOCHS = 2
_REFERENCE = re.compile(r"The reference answer for ([\w-]+)\.")


# ---- which exceptions are the provider's ----------------------------------------------

REQUEST = httpx.Request("POST", "https://api.example/v1/chat/completions")


def _status(code: int) -> httpx.Response:
    return httpx.Response(code, request=REQUEST)


def _raised_from(cause: BaseException, error: BaseException) -> BaseException:
    try:
        raise error from cause
    except BaseException as raised:
        return raised


def _raised_while_handling(context: BaseException, error: BaseException) -> BaseException:
    try:
        try:
            raise context
        except BaseException:
            raise error  # noqa: B904 -- the point: a bug inside an except block
    except BaseException as raised:
        return raised


def test_provider_failures_are_recognised_by_type() -> None:
    from inspect_ai.model._model import (  # pinned: answer.py looks these up by name
        AttemptTimeoutError,
        ModelGenerateError,
    )

    outage = openai.InternalServerError("down", response=_status(500), body=None)
    last_attempt = Future(attempt_number=2)
    last_attempt.set_exception(outage)
    failures: list[BaseException] = [
        outage,
        openai.RateLimitError("slow down", response=_status(429), body=None),
        openai.APITimeoutError(request=REQUEST),
        openai.APIConnectionError(request=REQUEST),
        anthropic.APIStatusError("overloaded", response=_status(529), body=None),
        anthropic.APIConnectionError(request=REQUEST),
        genai_errors.ServerError(503, {"error": {"message": "unavailable"}}),
        httpx.ConnectError("refused", request=REQUEST),
        httpx.ReadTimeout("timed out", request=REQUEST),
        TimeoutError(),
        AttemptTimeoutError("attempt timed out"),
        # Inspect wraps a provider error returned as output, raised from it
        _raised_from(
            openai.BadRequestError("bad", response=_status(400), body=None),
            ModelGenerateError("Request: ...", status_code=400),
        ),
        # Inspect's retries give up with tenacity's RetryError, raised from the last error
        _raised_from(outage, RetryError(last_attempt)),
    ]
    for failure in failures:
        assert is_provider_error(failure), repr(failure)


def test_with_omit_only_a_failure_a_later_request_may_not_meet_is_left_out() -> None:
    from inspect_ai.model._model import ModelGenerateError  # pinned above

    outage = openai.InternalServerError("down", response=_status(500), body=None)
    transient: list[BaseException] = [
        outage,
        _raised_from(outage, RuntimeError("retries exhausted")),
        openai.RateLimitError("slow down", response=_status(429), body=None),
        openai.APITimeoutError(request=REQUEST),
        anthropic.APIStatusError("overloaded", response=_status(529), body=None),
        genai_errors.ServerError(503, {"error": {"message": "unavailable"}}),
        httpx.ReadTimeout("timed out", request=REQUEST),
    ]
    # the provider answered the request itself: the same request fails the same way
    final: list[BaseException] = [
        openai.BadRequestError("bad image part", response=_status(400), body=None),
        openai.NotFoundError("no such model", response=_status(404), body=None),
        openai.UnprocessableEntityError("bad schema", response=_status(422), body=None),
        _raised_from(
            openai.BadRequestError("bad", response=_status(400), body=None),
            ModelGenerateError("Request: ...", status_code=400),
        ),
    ]
    assert [is_transient(e) for e in transient] == [True] * len(transient)
    assert [is_transient(e) for e in final] == [False] * len(final)
    assert all(is_provider_error(e) for e in transient + final)


def test_bugs_are_not_provider_failures() -> None:
    outage = openai.InternalServerError("down", response=_status(500), body=None)
    bugs: list[BaseException] = [
        KeyError("answer"),
        TypeError("'NoneType' object is not subscriptable"),
        AssertionError(),
        ValueError("bad value"),
        AttributeError("no attribute 'text'"),
        MediaError("cannot decode"),
        # a bug in code that handles a provider error is still a bug
        _raised_while_handling(outage, KeyError("status")),
    ]
    for bug in bugs:
        assert not is_provider_error(bug), repr(bug)


def test_inspects_own_model_errors_are_where_answer_looks_them_up() -> None:
    import importlib

    for module_name, class_name in _PROVIDER_ERROR_CLASSES:
        if module_name.startswith("inspect_ai"):
            found = getattr(importlib.import_module(module_name), class_name)
            assert issubclass(found, Exception), class_name


# ---- fixtures for the command-line runs -----------------------------------------------


def image_task(task_id: str, behaviour: str) -> FixtureTask:
    first = TASKS[0]
    return FixtureTask(
        task_id, behaviour, first.domain, first.subdomain, "image", first.media_path,
        first.criteria,
    )  # fmt: skip


def judged_tasks(request_log: Path, start: int = 0) -> Counter[str]:
    """How many times the judge was asked about each task (by its reference answer)."""
    judged: Counter[str] = Counter()
    for line in request_log.read_text().splitlines()[start:]:
        body = json.loads(line)
        if "judge" in body["model"]:
            found = _REFERENCE.search(json.dumps(body["messages"]))
            judged[found.group(1) if found else "?"] += 1
    return judged


def metrics_of(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def sample_errors(log: EvalLog) -> dict[tuple[str, int], str]:
    return {(str(s.id), s.epoch): s.error.message for s in log.samples or [] if s.error}


@pytest.fixture(scope="module")
def judge_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with scripted_models(tmp_path_factory.mktemp("judge")) as served:
        yield served


# ---- a bug fails its sample -----------------------------------------------------------

BUG_TASKS = (image_task("t-pass", "PASS"), image_task("t-fail", "FAIL"),
             image_task("t-bug", "PASS BUG-GEN"))  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("on_error", ["default", "--no-fail-on-error"])
def test_a_bug_in_generation_fails_its_sample_even_with_model_errors_omit(
    judge_server: tuple[str, Path], tmp_path: Path, on_error: str
) -> None:
    base_url, request_log = judge_server
    start = len(request_log.read_text().splitlines())
    release = build_repo(tmp_path / "release", BUG_TASKS)
    log, _ = run_eval(
        "hss_inspect/hss",
        tmp_path / "logs",
        base_url,
        *([] if on_error == "default" else [on_error]),
        epochs=1,
        task_args={"dataset": release, "model_errors": "omit"},
        env={"HSS_FAULT": "generate:BUG-GEN", "HSS_INSPECT_CACHE": str(tmp_path / "cache")},
        program=FAULTY_INSPECT,
    )
    (bug,) = [s for s in log.samples or [] if s.id == "t-bug"]
    assert bug.error is not None and f"KeyError('{INJECTED}')" == bug.error.message
    assert "faulty_inspect.py" in bug.error.traceback and "answer.py" in bug.error.traceback
    assert not bug.scores and "model_error" not in bug.metadata  # never left out as "model"
    assert judged_tasks(request_log, start)["t-bug"] == 0
    if on_error == "default":
        assert log.status == "error" and log.error is not None
        assert INJECTED in log.error.message
        return
    assert log.status == "success"  # --no-fail-on-error: the other samples are graded
    assert set(sample_errors(log)) == {("t-bug", 1)}
    metrics = metrics_of(log)
    assert (metrics["tasks"], metrics["pass_at_1"], metrics["model_error_rate"]) == (2, 0.5, 0)


def run_faulty_agent(tmp_path: Path, fault: str) -> tuple[EvalLog, list[dict[str, Any]]]:
    """The agentic condition with `fault` injected (HSS_FAULT) and `model_errors=omit`; the
    log and the requests the model stand-in received."""
    release = build_repo(tmp_path / "release", (image_task("agent-buggy", "AGENT-BUGGY"),))
    with scripted_models(tmp_path / "server", "agent_server.py") as (base_url, request_log):
        log, _ = run_eval(
            "hss_inspect/hss_agentic",
            tmp_path / "logs",
            base_url,
            model="openai-api/scripted/agent",
            epochs=1,
            task_args={"dataset": release, "model_errors": "omit"},
            env={"HSS_FAULT": fault, "HSS_INSPECT_CACHE": str(tmp_path / "cache")},
            program=FAULTY_INSPECT,
        )
        requests = [json.loads(line) for line in request_log.read_text().splitlines()]
    return log, requests


@pytest.mark.slow
def test_a_bug_in_a_tool_fails_its_sample_even_with_model_errors_omit(
    tmp_path: Path,
) -> None:
    log, requests = run_faulty_agent(tmp_path, "crop:1,2,33,34")
    assert log.status == "error" and log.error is not None and INJECTED in log.error.message
    (buggy,) = log.samples or []
    assert buggy.error is not None and buggy.error.message == f"KeyError('{INJECTED}')"
    assert "tools.py" in buggy.error.traceback  # raised inside the crop tool's work
    assert not buggy.scores and "model_error" not in buggy.metadata
    # the model was asked once (it called crop); the judge never was
    assert [r["model"] for r in requests] == ["agent"]


@pytest.mark.slow
def test_a_tool_failing_on_this_machine_fails_its_sample_not_the_models_turn(
    tmp_path: Path,
) -> None:
    """Inspect hands a tool's FileNotFoundError (or timeout, permission error) back to the
    model as a tool result; from HSS's tools it is this machine's failure."""
    log, requests = run_faulty_agent(tmp_path, "crop-io:1,2,33,34")
    assert log.status == "error"
    (broken,) = log.samples or []
    assert (
        broken.error is not None
        and "task agent-buggy: the crop tool failed" in broken.error.message
    )
    assert "file_not_found" in broken.error.message and not broken.scores
    assert [r["model"] for r in requests] == ["agent"]  # not asked again, judge never asked


@pytest.mark.slow
def test_a_provider_error_mid_conversation_fails_the_sample_by_default(tmp_path: Path) -> None:
    release = build_repo(tmp_path / "release", (image_task("agent-broken", "AGENT-BROKEN"),))
    with scripted_models(tmp_path / "server", "agent_server.py") as (base_url, request_log):
        log, _ = run_eval(
            "hss_inspect/hss_agentic",
            tmp_path / "logs",
            base_url,
            "--max-retries",
            "0",
            model="openai-api/scripted/agent",
            epochs=1,
            task_args={"dataset": release},
            env={"HSS_INSPECT_CACHE": str(tmp_path / "cache")},
        )
        requests = [json.loads(line) for line in request_log.read_text().splitlines()]
    assert log.status == "error"
    (broken,) = log.samples or []
    assert broken.error is not None and "scripted provider failure" in broken.error.message
    assert not broken.scores and "model_error" not in broken.metadata
    # the first step answered; the second met the outage (the SDK retries it itself); the
    # judge was never asked
    assert len(requests) >= 2 and {r["model"] for r in requests} == {"agent"}
    assert "task agent-broken" in broken.error.message and "eval-retry" in broken.error.message


# ---- an outage fails the sample; eval-retry completes the run --------------------------

OUTAGE_TASKS = (image_task("t-pass", "PASS"), image_task("t-fail", "FAIL"),
                image_task("t-outage", "OUTAGE"))  # fmt: skip
PASSES = {"t-pass": 1, "t-fail": 0, "t-outage": 1}  # what the scripted judge will say
PROVIDERS: dict[str, tuple[str, dict[str, str], tuple[str, ...]]] = {
    "anthropic": (
        "anthropic/claude-opus-5",
        {"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": "test-key"},
        ("-M", "streaming=false"),
    ),
    "openai-api": (
        "openai-api/standin/some-vlm",
        {"STANDIN_BASE_URL": "{url}/v1", "STANDIN_API_KEY": "test-key"},
        (),
    ),
}


def provider_env(provider: str, url: str, tmp_path: Path) -> dict[str, str]:
    _, env, _ = PROVIDERS[provider]
    cache = {"HSS_INSPECT_CACHE": str(tmp_path / "cache")}
    return {**{k: v.format(url=url) for k, v in env.items()}, **cache}


def provider_run(
    provider: str, url: str, release: Path, tmp_path: Path, judge_url: str, *args: str
) -> EvalLog:
    model, _, extra = PROVIDERS[provider]
    log, _ = run_eval(
        "hss_inspect/hss",
        tmp_path / "logs",
        judge_url,
        # the SDK's own retries off, so every attempt on the wire is one of Inspect's
        "-M",
        "max_retries=0",
        "--max-tokens",  # without it the Anthropic SDK insists on streaming
        "1000",
        *extra,
        *args,
        model=model,
        epochs=EPOCHS,
        task_args={"dataset": release},
        env=provider_env(provider, url, tmp_path),
    )
    return log


def wire(log_file: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log_file.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("provider", "on_error"),
    [("anthropic", "default"), ("openai-api", "default"), ("openai-api", "--continue-on-fail")],
)
def test_an_outage_ends_in_error_and_eval_retry_completes_the_run(
    judge_server: tuple[str, Path], tmp_path: Path, provider: str, on_error: str
) -> None:
    judge_url, request_log = judge_server
    start = len(request_log.read_text().splitlines())
    release = build_repo(tmp_path / "release", OUTAGE_TASKS)
    outage = tmp_path / "outage"
    outage.touch()
    rules = {"outage_file": str(outage)}
    with provider_stand_in(tmp_path / "server", rules) as (url, wire_log):
        flags = ["--max-retries", "1", *([] if on_error == "default" else [on_error])]
        first = provider_run(provider, url, release, tmp_path, judge_url, *flags)
        during = wire(wire_log)
        outage.unlink()  # the provider is back
        retried, done = retry_eval(first, judge_url, env=provider_env(provider, url, tmp_path))
        after = wire(wire_log)[len(during) :]
    # the incident: Inspect retried, then the sample failed and so did the run
    assert first.status == "error"
    errors = sample_errors(first)
    assert errors and {task for task, _ in errors} == {"t-outage"}
    # after Inspect's retries (by default the run stops there, cancelling what is in flight)
    assert any("InternalServerError" in e for e in errors.values())
    failed = [e for e in during if e["status"] == 500]
    assert failed and {e["behaviour"] for e in failed} == {"OUTAGE"}
    assert len(failed) >= 2  # at least one attempt and one of Inspect's retries
    assert not any(s.scores for s in first.samples or [] if s.id == "t-outage")
    if on_error == "--continue-on-fail":  # every other attempt finished in the first run
        assert all("InternalServerError" in e for e in errors.values())
        assert len(errors) == EPOCHS and len(failed) == 2 * EPOCHS
        assert sum(bool(s.scores) for s in first.samples or []) == 2 * EPOCHS
    # the recovery: every attempt graded, nothing left out
    assert retried.status == "success", done.stderr
    samples = retried.samples or []
    assert sorted((str(s.id), s.epoch) for s in samples) == sorted(
        (t, e) for t in PASSES for e in range(1, EPOCHS + 1)
    )
    assert all(s.error is None and s.scores for s in samples)
    # only what had not finished went to the provider again, once each
    unfinished = (
        sum(not s.scores for s in first.samples or [])
        + EPOCHS * len(PASSES)
        - len(first.samples or [])
    )
    assert [e["status"] for e in after] == [200] * unfinished
    metrics = metrics_of(retried)
    assert metrics["pass_at_1"] == pytest.approx(statistics.mean(PASSES.values()))
    assert (metrics["tasks"], metrics["model_error_rate"]) == (len(PASSES), 0)
    # each attempt judged exactly once across both runs
    assert judged_tasks(request_log, start) == {t: EPOCHS for t in PASSES}


@pytest.mark.slow
def test_a_rate_limited_run_completes_on_inspects_retries(
    judge_server: tuple[str, Path], tmp_path: Path
) -> None:
    judge_url, request_log = judge_server
    start = len(request_log.read_text().splitlines())
    tasks = (image_task("t-pass", "PASS"), image_task("t-fail", "FAIL"))
    release = build_repo(tmp_path / "release", tasks)
    attempts = len(tasks) * EPOCHS
    # every sample-epoch's first request is refused (they all start at once); Inspect's
    # retries, unlimited by default, back off and succeed
    rules = {"rate_limited_requests": attempts}
    with provider_stand_in(tmp_path / "server", rules) as (url, wire_log):
        log = provider_run("anthropic", url, release, tmp_path, judge_url)
        entries = wire(wire_log)
    assert log.status == "success"
    assert [e["status"] for e in entries].count(429) == attempts
    assert [e["status"] for e in entries].count(200) == attempts
    assert all(s.error is None and s.scores for s in log.samples or [])
    assert metrics_of(log)["pass_at_1"] == pytest.approx(0.5)
    assert judged_tasks(request_log, start) == {"t-pass": EPOCHS, "t-fail": EPOCHS}


# ---- a policy refusal is a zero, never graded ------------------------------------------


@pytest.mark.slow
def test_a_policy_refusal_is_a_no_answer_zero_the_judge_never_sees(
    judge_server: tuple[str, Path], tmp_path: Path
) -> None:
    judge_url, request_log = judge_server
    start = len(request_log.read_text().splitlines())
    tasks = (image_task("t-pass", "PASS"), image_task("t-policy", "POLICY"))
    release = build_repo(tmp_path / "release", tasks)
    with provider_stand_in(tmp_path / "server", {}) as (url, wire_log):
        log = provider_run("openai-api", url, release, tmp_path, judge_url)
        entries = wire(wire_log)
    assert log.status == "success"
    assert [e["status"] for e in entries if e["behaviour"] == "POLICY"] == [400] * EPOCHS
    for sample in log.samples or []:
        if sample.id != "t-policy":
            continue
        # Inspect's provider turned the 400 into a content_filter stop holding its message
        assert sample.output.stop_reason == "content_filter"
        assert POLICY_MESSAGE in sample.output.completion
        score = sample.scores["rubric_judge"]
        assert score.value == {"pass": 0, "rubric": 0, "no_answer": 1, "grading_failure": 0,
                               "model_error": 0, "refusal": 1}  # fmt: skip
        assert POLICY_MESSAGE in score.metadata["refusal"]["message"]
    metrics = metrics_of(log)
    assert (metrics["pass_at_1"], metrics["refusal_rate"], metrics["no_answer_rate"]) == (
        0.5, 0.5, 0.5,
    )  # fmt: skip
    assert judged_tasks(request_log, start) == {"t-pass": EPOCHS}


# ---- a role a chosen option needs is checked before any model is called ----------------


@pytest.mark.slow
def test_labeler_option_without_a_labeler_role_is_refused_before_any_request(
    judge_server: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, request_log = judge_server
    start = len(request_log.read_text().splitlines())
    release = build_repo(tmp_path / "release", (image_task("t-pass", "PASS"),))
    refused = run_refused(
        "hss_inspect/hss",
        tmp_path / "logs",
        base_url,
        grader=JUDGE,
        task_args={"dataset": release, "labeler": "true"},
    )
    assert "--model-role labeler=" in refused.stdout + refused.stderr
    assert request_log.read_text().splitlines()[start:] == []


@pytest.mark.slow
def test_with_omit_an_outage_is_left_out_and_a_request_refused_as_such_still_fails(
    judge_server: tuple[str, Path], tmp_path: Path
) -> None:
    release = build_repo(tmp_path / "release", (*OUTAGE_TASKS, image_task("t-broken", "BROKEN")))
    outage = tmp_path / "outage"
    outage.touch()  # for the whole run: the attempts can only be left out
    with provider_stand_in(tmp_path / "server", {"outage_file": str(outage)}) as (url, _):
        log = provider_run(
            "openai-api", url, release, tmp_path, judge_server[0],
            "--max-retries", "0", "--no-fail-on-error", "-T", "model_errors=omit",
        )  # fmt: skip
    by_task: dict[str, list[Any]] = {}
    for sample in log.samples or []:
        by_task.setdefault(str(sample.id), []).append(sample)
    for left_out in by_task["t-outage"]:  # an outage: left out, for good
        assert left_out.error is None
        value = left_out.scores["rubric_judge"].value
        assert value["model_error"] == 1 and value["pass"] != value["pass"]  # NaN
        assert left_out.metadata["model_error"]["status"] == 500
    for refused in by_task["t-broken"]:  # HTTP 400 answers the request itself: it fails
        assert refused.error is not None and not refused.scores
        assert "task t-broken" in refused.error.message
        assert "refused the request itself" in refused.error.message
    assert log.results is not None
    (score,) = log.results.scores
    metrics = {name: m.value for name, m in score.metrics.items()}
    # t-pass and t-fail graded, t-outage's attempts left out, t-broken failed (no score)
    assert metrics["tasks"] == 3 and metrics["ungraded_tasks"] == 1
    assert metrics["model_error_rate"] == pytest.approx(1 / 3)
    assert metrics["pass_at_1"] == pytest.approx(PASSES["t-pass"] / 2 + PASSES["t-fail"] / 2)
