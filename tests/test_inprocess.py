"""In-process end to end: `inspect_ai.eval()` per condition with `mockllm/model` in both roles.

The candidate and the judge are `mockllm/model` with a callable `custom_outputs` that
answers from the request it is given (so the results do not depend on the order Inspect
runs the samples in), and every output carries a usage (so no tokenizer is fetched).
Expected results are computed here from the verdict table, not read from the package.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ContentImage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.solver import generate
from inspect_ai.tool import ToolChoice, ToolInfo

from hss_inspect.conditions.prompt import BLIND_SYSTEM_MESSAGE, IMAGE_NOTE
from hss_inspect.conditions.solver import ORACLE_MODEL_NAME, hss_input, oracle_answer
from hss_inspect.core.settings import MediaSettings
from hss_inspect.data.dataset import build_dataset
from hss_inspect.data.release import open_release
from hss_inspect.grading.scorer import rubric_judge
from hss_inspect.task import hss
from tests.support.fixture_repo import write_image, write_video

pytestmark = pytest.mark.inspect_api

EPOCHS = 2
ANSWER = "A scripted candidate answer."
SILENT = "[say nothing]"  # in a question: the candidate returns no text
UNREADABLE = "[judge confused]"  # in a question: the judge never replies readably
REFUSED = "[against policy]"  # in a question: the provider's policy filter stops the answer
POLICY_MESSAGE = "Error code: 400 - the request was rejected by the safety system"


@dataclass(frozen=True)
class Case:
    task_id: str
    media_type: str
    domain: str
    subdomain: str
    media_path: str
    verdicts: dict[str, tuple[bool, float]]  # criterion id -> (met, weight)
    note: str = ""

    def row(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "domain": self.domain,
            "subdomain": self.subdomain,
            "media_type": self.media_type,
            "media_path": self.media_path,
            "prompt": f"What does {self.task_id} show? {self.note}".strip(),
            "golden_response": f"Reference answer of {self.task_id}.",
            "rubric_criteria": [
                {"id": i, "title": f"Criterion {i}", "weight": w}
                for i, (_, w) in self.verdicts.items()
            ],
        }


CASES = (
    Case(
        "img-met",
        "image",
        "Temporal & Causal Dynamics",
        "Retrodiction",
        "media/a.png",
        {"a1": (True, 1), "a2": (True, 3)},
    ),
    Case(
        "img-half",
        "image",
        "Physical & Spatial Logic",
        "Hidden & Invisible",
        "media/b.jpg",
        {"b1": (True, 1), "b2": (False, 3)},
    ),
    Case(
        "img-ungradable",
        "image",
        "Abstract & Contextual Inference",
        "Patterns & Pareidolia",
        "media/a.png",
        {"g1": (True, 1)},
        UNREADABLE,
    ),
    Case(
        "vid-met",
        "video",
        "Social Understanding",
        "Theory of Mind",
        "media/c.mp4",
        {"c1": (True, 1)},
    ),
    Case(
        "vid-silent",
        "video",
        "Abstract & Contextual Inference",
        "Change & Consequence",
        "media/c.mp4",
        {"e1": (True, 1)},
        SILENT,
    ),
    Case(
        "img-refused",
        "image",
        "Social Understanding",
        "Theory of Mind",
        "media/b.jpg",
        {"r1": (True, 1)},
        REFUSED,
    ),
)
CLIP_SECONDS = 3.0  # at 2 fps: 6 frames, labelled 0.00 s to 2.50 s


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inprocess-release")
    write_image(root / "media" / "a.png", (64, 48), "PNG")
    write_image(root / "media" / "b.jpg", (48, 64), "JPEG")
    write_video(root / "media" / "c.mp4", fps=10, seconds=CLIP_SECONDS)
    (root / "data").mkdir()
    rows = "".join(json.dumps(case.row()) + "\n" for case in CASES)
    (root / "data" / "test.jsonl").write_text(rows)
    return root


# ---- Scripted mockllm models ------------------------------------------------------

Responder = Callable[[list[ChatMessage], list[ToolInfo], ToolChoice, GenerateConfig], ModelOutput]


def reply(text: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    if text == POLICY_MESSAGE:  # as Inspect's providers report a policy refusal
        output.choices[0].stop_reason = "content_filter"
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def mock(respond: Callable[[list[ChatMessage]], str], calls: list[list[ChatMessage]]) -> Model:
    def outputs(
        messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, cfg: GenerateConfig
    ) -> ModelOutput:
        calls.append(messages)
        return reply(respond(messages))

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def candidate_answer(messages: list[ChatMessage]) -> str:
    question = messages[-1].text
    return "" if SILENT in question else POLICY_MESSAGE if REFUSED in question else ANSWER


def judge_from_table(messages: list[ChatMessage]) -> str:
    """Verdicts from CASES for the ids the request lists; unreadable for UNREADABLE tasks."""
    request = messages[1].text
    if UNREADABLE in request:
        return "I would rather not say."
    table = {i: met for case in CASES for i, (met, _) in case.verdicts.items()}
    ids = re.findall(r"\[id: ([^\]]+)\]", request)
    criteria = [{"id": i, "met": table[i], "justification": "as scripted"} for i in ids]
    return json.dumps({"criteria": criteria, "overall_comment": "scripted"})


def judge_answer_is_reference(messages: list[ChatMessage]) -> str:
    """Every criterion met exactly when the quoted answer is the reference answer."""
    request = messages[1].text
    reference = re.search(r"Reference answer of [\w-]+\.", request)
    answer = re.search(r"<<<ANSWER-\w+>>>\n(.*)\n<<<END-ANSWER-\w+>>>", request, re.DOTALL)
    met = bool(reference and answer and answer.group(1).strip() == reference.group(0))
    ids = re.findall(r"\[id: ([^\]]+)\]", request)
    return json.dumps({"criteria": [{"id": i, "met": met, "justification": "-"} for i in ids]})


def run(task: Task, candidate: Model | str, judge: Model, log_dir: Path) -> EvalLog:
    (log,) = eval(
        task,
        model=candidate,
        model_roles={"grader": judge},
        epochs=EPOCHS,
        log_dir=str(log_dir),
        display="none",
    )
    assert log.status == "success", log.error
    return log


def metrics_of(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


# ---- What the results should be, computed from the table ----------------------------


def expected_value(case: Case) -> dict[str, float]:
    """The Score.value of every attempt at `case`: pass and rubric are NaN when left out."""
    value = {"no_answer": 0, "grading_failure": 0, "model_error": 0, "refusal": 0}
    if UNREADABLE in case.note:
        return {"pass": math.nan, "rubric": math.nan, **value, "grading_failure": 1}
    if SILENT in case.note:
        return {"pass": 0, "rubric": 0.0, **value, "no_answer": 1}
    if REFUSED in case.note:  # a zero and a no-answer, never shown to the judge
        return {"pass": 0, "rubric": 0.0, **value, "no_answer": 1, "refusal": 1}
    weights = [w for _, w in case.verdicts.values()]
    met_weight = sum(w for met, w in case.verdicts.values() if met)
    all_met = int(all(met for met, _ in case.verdicts.values()))
    return {"pass": all_met, "rubric": met_weight / sum(weights), **value}


def expected_metrics(cases: tuple[Case, ...]) -> dict[str, float]:
    values = {case.task_id: expected_value(case) for case in cases}
    graded = [c for c in cases if not math.isnan(values[c.task_id]["pass"])]
    expected = {
        "pass_at_1": statistics.mean(values[c.task_id]["pass"] for c in graded),
        "rubric": statistics.mean(values[c.task_id]["rubric"] for c in graded),
        "tasks": len(cases),
        "ungraded_tasks": len(cases) - len(graded),
        # Every attempt of a case behaves alike, so a rate is the share of such cases.
        "grading_failure_rate": statistics.mean(v["grading_failure"] for v in values.values()),
        "no_answer_rate": statistics.mean(v["no_answer"] for v in values.values()),
        "model_error_rate": 0.0,
        "refusal_rate": statistics.mean(v["refusal"] for v in values.values()),
    }
    for media in ("image", "video"):
        expected[media] = statistics.mean(
            values[c.task_id]["pass"] for c in graded if c.media_type == media
        )
    return expected


def same_value(actual: Any, expected: dict[str, float]) -> bool:
    if not isinstance(actual, dict) or set(actual) != set(expected):
        return False
    return all(
        (math.isnan(want) and math.isnan(actual[key])) or actual[key] == pytest.approx(want)
        for key, want in expected.items()
    )


def test_expected_metrics_are_not_trivial() -> None:
    expected = expected_metrics(CASES)
    assert 0 < expected["pass_at_1"] < 1 and expected["rubric"] != expected["pass_at_1"]
    assert 0 < expected["refusal_rate"] < expected["no_answer_rate"]


# ---- One eval per condition ---------------------------------------------------------


@pytest.mark.parametrize("condition", ["standard", "blind"])
def test_condition_results_match_the_verdict_table(
    repo: Path, tmp_path: Path, condition: str
) -> None:
    asked: list[list[ChatMessage]] = []
    judged: list[list[ChatMessage]] = []
    log = run(
        hss(dataset=str(repo), condition=condition),
        mock(candidate_answer, asked),
        mock(judge_from_table, judged),
        tmp_path,
    )
    metrics = metrics_of(log)
    for name, value in expected_metrics(CASES).items():
        assert metrics[name] == pytest.approx(value), name
    by_id = {case.task_id: case for case in CASES}
    assert log.samples is not None and len(log.samples) == EPOCHS * len(CASES)
    for sample in log.samples:
        score = (sample.scores or {})["rubric_judge"]
        assert same_value(score.value, expected_value(by_id[str(sample.id)])), sample.id
        if REFUSED in by_id[str(sample.id)].note:
            assert score.metadata is not None
            assert score.metadata["refusal"]["message"] == POLICY_MESSAGE
    retries = 2  # the default judge_retries: an unreadable task is asked three times
    ungradable = sum(UNREADABLE in c.note for c in CASES)
    unanswered = sum(SILENT in c.note or REFUSED in c.note for c in CASES)
    assert len(asked) == EPOCHS * len(CASES)
    assert len(judged) == EPOCHS * (len(CASES) - unanswered + retries * ungradable)
    assert not any(POLICY_MESSAGE in m.text for request in judged for m in request)
    assert log.eval.metadata is not None and log.eval.metadata["hss_condition"] == condition
    images_sent = [any(isinstance(c, ContentImage) for c in m[-1].content) for m in asked]
    if condition == "blind":
        assert not any(images_sent)
        for messages in asked:
            assert isinstance(messages[0], ChatMessageSystem)
            assert messages[0].text == BLIND_SYSTEM_MESSAGE
            assert messages[-1].text.startswith("Question: What does ")
    else:
        assert all(images_sent)
        assert not any(isinstance(m, ChatMessageSystem) for ms in asked for m in ms)


def test_oracle_condition_grades_the_reference_answers_without_a_candidate(
    repo: Path, tmp_path: Path
) -> None:
    asked: list[list[ChatMessage]] = []
    judged: list[list[ChatMessage]] = []
    log = run(
        hss(dataset=str(repo), condition="oracle"),
        mock(candidate_answer, asked),
        mock(judge_answer_is_reference, judged),
        tmp_path,
    )
    metrics = metrics_of(log)
    assert asked == []
    assert len(judged) == EPOCHS * len(CASES)
    assert metrics["pass_at_1"] == 1.0 and metrics["rubric"] == 1.0
    assert metrics["tasks"] == len(CASES) and metrics["grading_failure_rate"] == 0


# ---- The solvers by name ------------------------------------------------------------


def solver_task(repo: Path, task_ids: set[str], solver: list[Any]) -> Task:
    release = open_release(str(repo), "main")
    rows = [r for r in release.read_rows() if r.task_id in task_ids]
    return Task(dataset=build_dataset(release, rows), solver=solver, scorer=rubric_judge())


def test_hss_input_sends_the_image_bytes_and_records_their_hash(repo: Path, tmp_path: Path) -> None:
    release = open_release(str(repo), "main")
    task = solver_task(repo, {"img-met"}, [hss_input(release, MediaSettings()), generate()])
    asked: list[list[ChatMessage]] = []
    log = run(task, mock(candidate_answer, asked), mock(judge_from_table, []), tmp_path)
    image = (repo / "media" / "a.png").read_bytes()
    for messages in asked:
        (turn,) = messages
        note, picture, question = turn.content  # type: ignore[misc]
        assert note.text == IMAGE_NOTE  # type: ignore[union-attr]
        assert isinstance(picture, ContentImage)
        assert base64.b64decode(picture.image.split(",", 1)[1]) == image
        assert question.text == "Question: What does img-met show?"  # type: ignore[union-attr]
    assert log.samples is not None
    for sample in log.samples:
        assert sample.metadata["sent_media"]["media_sha256"] == hashlib.sha256(image).hexdigest()


def test_hss_input_sends_a_clip_as_labelled_frames(repo: Path, tmp_path: Path) -> None:
    release = open_release(str(repo), "main")
    task = solver_task(repo, {"vid-met"}, [hss_input(release, MediaSettings()), generate()])
    asked: list[list[ChatMessage]] = []
    run(task, mock(candidate_answer, asked), mock(judge_from_table, []), tmp_path)
    frames = round(2.0 * CLIP_SECONDS)  # the default 2 fps, well under the frame cap
    labels = [f"Frame at {i / 2:.2f} s:" for i in range(frames)]
    for (turn,) in asked:
        parts = turn.content
        texts = [p.text for p in parts if not isinstance(p, ContentImage)]  # type: ignore[union-attr]
        assert [t for t in texts if t.startswith("Frame at")] == labels
        assert sum(isinstance(p, ContentImage) for p in parts) == frames
        assert texts[-1] == "Question: What does vid-met show?"


def test_oracle_answer_submits_the_reference_and_calls_no_model(repo: Path, tmp_path: Path) -> None:
    asked: list[list[ChatMessage]] = []
    task = solver_task(repo, {"img-half", "vid-met"}, [oracle_answer()])
    log = run(task, mock(candidate_answer, asked), mock(judge_answer_is_reference, []), tmp_path)
    assert asked == []
    assert log.samples is not None
    for sample in log.samples:
        assert sample.output.completion == f"Reference answer of {sample.id}."
        assert sample.output.model == ORACLE_MODEL_NAME
    assert metrics_of(log)["pass_at_1"] == 1.0


def test_the_labeller_labels_a_refusal_no_committed_answer_without_a_call(
    repo: Path, tmp_path: Path
) -> None:
    labelled: list[list[ChatMessage]] = []
    (log,) = eval(
        hss(dataset=str(repo), labeler=True),
        model=mock(candidate_answer, []),
        model_roles={
            "grader": mock(judge_from_table, []),
            "labeler": mock(lambda _: '{"cause": "missed_cue", "explanation": "-"}', labelled),
        },
        epochs=1,
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    causes = {
        str(s.id): s.scores["failure_cause"].metadata["cause"]
        for s in log.samples or []
        if s.scores and s.scores.get("failure_cause")
    }
    # the failed attempts the judge graded: img-half (asked), the silent and refused ones
    assert causes == {
        "img-half": "missed_cue",
        "vid-silent": "no_committed_answer",
        "img-refused": "no_committed_answer",
    }
    assert len(labelled) == 1 and POLICY_MESSAGE not in labelled[0][-1].text
