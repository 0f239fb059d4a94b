"""End to end: the `inspect eval` command line, scripted candidate and judge, the written log."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from hss_inspect.grading.metrics import attempt_value
from tests.support.fixture_repo import EXPECTED_ATTEMPTS, TASKS
from tests.support.runs import INSPECT, run_eval, run_refused

pytestmark = [pytest.mark.slow, pytest.mark.inspect_api]

SHORT_DOMAIN = {
    "Temporal & Causal Dynamics": "temporal",
    "Physical & Spatial Logic": "physical",
    "Social Understanding": "social",
    "Abstract & Contextual Inference": "abstract",
}
# Frames at 2 fps per fixture clip: floor(2 * duration) for 3.0 s, 2.48 s and 2.0 s clips.
EXPECTED_FRAMES = {"vid-pass": 6, "vid-rot-flaky": 4, "vid-garble": 4}


def expected_pass_at_1() -> tuple[float, dict[str, float]]:
    per_task: dict[str, float] = {}
    for task in TASKS:
        graded = [a for a in EXPECTED_ATTEMPTS[task.behaviour] if a is not None]
        if graded:
            per_task[task.task_id] = statistics.mean(p for p, _ in graded)
    groups: dict[str, list[float]] = {}
    for task in TASKS:
        if task.task_id in per_task:
            for key in (task.media_type, SHORT_DOMAIN[task.domain]):
                groups.setdefault(key, []).append(per_task[task.task_id])
    return statistics.mean(per_task.values()), {k: statistics.mean(v) for k, v in groups.items()}


def metrics_of(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def test_pass_at_1_and_breakdowns_match_independent_computation(standard_run) -> None:
    log, _ = standard_run
    assert log.status == "success"
    metrics = metrics_of(log)
    overall, groups = expected_pass_at_1()
    assert metrics["pass_at_1"] == pytest.approx(overall)
    for key, value in groups.items():
        assert metrics[key] == pytest.approx(value), key
    assert metrics["theory_of_mind"] == pytest.approx(1 / 3)
    assert metrics["pass_at_1_ci95"] > 0
    assert metrics["tasks"] == len(TASKS)
    # One task's three attempts are grading failures, another's three are no answers.
    assert metrics["grading_failure_rate"] == pytest.approx(1 / len(TASKS))
    assert metrics["ungraded_tasks"] == 1
    assert metrics["no_answer_rate"] == pytest.approx(1 / len(TASKS))
    assert metrics["model_error_rate"] == 0
    assert log.eval.config.epochs == 3


def test_every_attempt_keeps_its_own_verdicts(standard_run) -> None:
    log, _ = standard_run
    assert log.samples is not None and len(log.samples) == 3 * len(TASKS)
    by_task: dict[str, list] = {}
    for sample in log.samples:
        by_task.setdefault(str(sample.id), []).append(sample.scores["rubric_judge"])
    once = sorted(s.value["pass"] for s in by_task["img-exif-once"])
    assert once == [0, 0, 1]
    garbled = by_task["vid-garble"][0]
    assert garbled.value["grading_failure"] == 1
    assert math.isnan(garbled.value["pass"]) and math.isnan(garbled.value["rubric"])
    assert garbled.metadata["judge_attempts"] == 3  # the first call and two re-asks
    assert garbled.metadata["judge_replies"][0] == "I am not sure how to grade this one."
    flaky = by_task["vid-rot-flaky"][0]
    assert flaky.value == attempt_value(passed=1, rubric=1.0)
    assert flaky.metadata["judge_attempts"] == 2
    assert [v["id"] for v in flaky.metadata["verdicts"]] == ["a", "b"]
    assert "| a | Gives the direction | met |" in flaky.explanation
    empty = by_task["img-empty"][0]
    assert empty.value == attempt_value(passed=0, rubric=0.0, no_answer=True)


def test_messages_follow_the_protocol(standard_run) -> None:
    log, _ = standard_run
    for sample in log.samples or []:
        roles = [m.role for m in sample.messages]
        assert roles[:2] == ["user", "assistant"], sample.id
        user = sample.messages[0]
        parts = user.content
        assert isinstance(parts, list)
        assert parts[-1].text == f"Question: {sample.metadata['prompt']}"
        images = [p for p in parts if p.type == "image"]
        sent = sample.metadata["sent_media"]
        assert len(sent["media_sha256"]) == 64 and len(sent["question_sha256"]) == 64
        if sample.metadata["media_type"] == "image":
            assert len(images) == 1
            continue
        count = EXPECTED_FRAMES[str(sample.id)]
        assert len(images) == count == sent["frame_count"]
        labels = [p.text for p in parts if p.type == "text" and p.text.startswith("Frame at")]
        assert labels == [f"Frame at {i / 2:.2f} s:" for i in range(count)]
        assert f"following {count} frames" in parts[0].text
        assert "2.00 frames per second" in parts[0].text
        # every frame directly follows its own label
        for index, part in enumerate(parts):
            if part.type == "image":
                assert parts[index - 1].text.startswith("Frame at")


def test_judge_sees_text_only_and_no_system_message_reaches_the_candidate(standard_run) -> None:
    _, requests = standard_run
    judge = [r for r in requests if r["model"] == "judge"]
    candidate = [r for r in requests if r["model"] == "candidate"]
    assert len(candidate) == 3 * len(TASKS)
    # One judge call per answered attempt, two re-asks per GARBLE and one per FLAKY attempt.
    answered = [t for t in TASKS if t.behaviour != "EMPTY"]
    extra = {"GARBLE": 2, "FLAKY": 1}
    assert len(judge) == 3 * sum(1 + extra.get(t.behaviour, 0) for t in answered)
    assert all(r["messages"][0]["role"] == "user" for r in candidate)
    assert judge
    for request in judge:
        for message in request["messages"]:
            content = message["content"]
            assert isinstance(content, str) or all(p["type"] == "text" for p in content)
        assert request["messages"][0]["role"] == "system"


def test_blind_condition_sends_the_question_alone(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    log, _ = run_eval(
        "hss_inspect/hss_blind",
        tmp_path / "logs",
        model_server[0],
        task_args={"dataset": hss_repo},
        epochs=1,
    )
    assert log.status == "success"
    assert log.eval.metadata["hss_condition"] == "blind"
    for sample in log.samples or []:
        system, user = sample.messages[0], sample.messages[1]
        assert system.role == "system" and "cannot tell" in system.text
        assert user.text == f"Question: {sample.metadata['prompt']}"
        assert sample.metadata["sent_media"] == {"kind": "none"}
    metrics = metrics_of(log)
    assert metrics["pass_at_1"] == 0.0
    assert metrics["tasks"] == len(TASKS)


def test_oracle_grades_the_reference_answers_without_a_candidate(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, request_log = model_server
    start = len(request_log.read_text().splitlines())
    log, _ = run_eval(
        "hss_inspect/hss_oracle",
        tmp_path / "logs",
        base_url,
        model="none",
        task_args={"dataset": hss_repo},
        epochs=1,
    )
    assert log.status == "success"
    models = {json.loads(line)["model"] for line in request_log.read_text().splitlines()[start:]}
    assert models == {"judge"}
    assert metrics_of(log)["pass_at_1"] == 1.0
    for sample in log.samples or []:
        assert sample.output.completion == sample.metadata["golden_response"]


def test_refuses_to_run_without_a_bound_grader(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, request_log = model_server
    start = len(request_log.read_text().splitlines())
    done = run_refused(
        "hss_inspect/hss", tmp_path / "logs", base_url, grader=None, task_args={"dataset": hss_repo}
    )
    assert "--model-role grader=" in done.stdout + done.stderr
    assert request_log.read_text().splitlines()[start:] == []


def test_inspect_score_regrades_the_same_answers_with_another_judge(
    standard_run, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    log, _ = standard_run
    out = tmp_path / "regraded.eval"
    command = [
        INSPECT,
        "score",
        log.location,
        "--scorer",
        "hss_inspect/rubric_judge",
        "--model-role",
        "grader=openai-api/scripted/judge-two",
        "--action",
        "append",
        "--output-file",
        str(out),
        "--display",
        "plain",
    ]
    env = {**os.environ, "SCRIPTED_API_KEY": "k", "SCRIPTED_BASE_URL": model_server[0]}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    regraded = read_eval_log(str(out))
    assert regraded.results is not None
    first, second = regraded.results.scores
    assert second.metrics["pass_at_1"].value == pytest.approx(first.metrics["pass_at_1"].value)
    judges = {
        s.scores[second.name].metadata.get("judge_model")
        for s in regraded.samples or []
        if s.scores and not s.scores[second.name].value["no_answer"]
    }
    assert judges == {"openai-api/scripted/judge-two"}
