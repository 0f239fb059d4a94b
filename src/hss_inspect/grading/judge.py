"""The rubric judge's words and the reading of its replies, as pure functions.

The texts live in `scorers/judge.yaml`; this module fills them in and reads the
JSON verdicts back, matching them to criteria by id only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hss_inspect.core.config import PromptSet, prompt_set
from hss_inspect.core.markdown import table
from hss_inspect.data.rows import Criterion, GradedTask

_FENCED_BLOCK = re.compile(r"```[a-zA-Z0-9_-]*\s*\n(.*?)```", re.DOTALL)
_TRUE_WORDS = {"true", "yes", "met"}
_FALSE_WORDS = {"false", "no", "unmet", "not met"}


class UnreadableReply(ValueError):
    """A judge reply with no usable verdict object; the message says what was wrong."""


@dataclass(frozen=True)
class Verdict:
    id: str
    met: bool
    justification: str


@dataclass(frozen=True)
class JudgeReply:
    verdicts: dict[str, Verdict]
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]
    comment: str


JudgePrompts = PromptSet


def judge_prompts(filename: str = "judge.yaml") -> JudgePrompts:
    return prompt_set(filename)


def answer_fence(answer: str) -> tuple[str, str]:
    """Opening and closing markers that the answer itself does not contain.

    The marker carries a digest of the answer, so an answer cannot know its own
    closing marker in advance; a salt is added in the (theoretical) case it does.
    """
    salt = 0
    while True:
        tag = hashlib.sha256(f"{salt}:{answer}".encode()).hexdigest()[:16]
        opening, closing = f"<<<ANSWER-{tag}>>>", f"<<<END-ANSWER-{tag}>>>"
        if tag not in answer:
            return opening, closing
        salt += 1


def criteria_of(metadata: dict[str, Any]) -> list[Criterion]:
    return [Criterion(str(c["id"]), str(c["title"]), c.get("weight")) for c in metadata["criteria"]]


def graded_task_of(metadata: dict[str, Any]) -> GradedTask:
    """The task as the judge reads it, from a sample's metadata."""
    return GradedTask(
        metadata["prompt"],
        metadata["media_type"],
        metadata["golden_response"],
        tuple(criteria_of(metadata)),
    )


def render_criteria(criteria: Sequence[Criterion]) -> str:
    return "\n".join(f"{n}. [id: {c.id}] {c.title}" for n, c in enumerate(criteria, start=1))


def render_judge_request(prompts: JudgePrompts, task: GradedTask, answer: str) -> str:
    opening, closing = answer_fence(answer)
    return prompts.user.substitute(
        question=task.question,
        media_type=task.media_type,
        reference=task.reference,
        criteria=render_criteria(task.criteria),
        expected_ids=expected_ids_text(task.criteria),
        answer_open=opening,
        answer=answer,
        answer_close=closing,
    )


def render_retry(prompts: JudgePrompts, problem: str, criteria: Sequence[Criterion]) -> str:
    return prompts.retry.substitute(problem=problem, expected_ids=expected_ids_text(criteria))


def expected_ids_text(criteria: Sequence[Criterion]) -> str:
    return ", ".join(json.dumps(c.id) for c in criteria)


def parse_judge_reply(text: str, expected_ids: Sequence[str]) -> JudgeReply:
    """Verdicts for the expected criterion ids from a judge reply, matched by id."""
    payload = extract_json_object(text)
    items = payload.get("criteria")
    if not isinstance(items, list):
        raise UnreadableReply('the JSON object has no list named "criteria"')
    verdicts: dict[str, Verdict] = {}
    unexpected: list[str] = []
    for item in items:
        verdict = _verdict_of(item)
        if verdict.id not in expected_ids:
            unexpected.append(verdict.id)
            continue
        earlier = verdicts.get(verdict.id)
        if earlier is not None and earlier.met != verdict.met:
            raise UnreadableReply(f"criterion {verdict.id} is given two opposite verdicts")
        verdicts[verdict.id] = verdict
    missing = tuple(i for i in expected_ids if i not in verdicts)
    comment = payload.get("overall_comment")
    return JudgeReply(verdicts, missing, tuple(unexpected), str(comment or ""))


def _verdict_of(item: Any) -> Verdict:
    if not isinstance(item, dict) or "id" not in item or "met" not in item:
        raise UnreadableReply('each entry of "criteria" needs an "id" and a "met"')
    return Verdict(str(item["id"]), _as_bool(item["met"]), str(item.get("justification") or ""))


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE_WORDS | _FALSE_WORDS:
        return value.strip().lower() in _TRUE_WORDS
    raise UnreadableReply(f'"met" must be true or false, not {value!r}')


def extract_json_object(text: str) -> dict[str, Any]:
    """The reply as JSON, else its first fenced JSON block, else its first balanced {...}."""
    candidates = [text.strip()]
    candidates += [block.strip() for block in _FENCED_BLOCK.findall(text)]
    balanced = first_balanced_object(text)
    if balanced is not None:
        candidates.append(balanced)
    for candidate in candidates:
        try:
            loaded = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(loaded, dict):
            return loaded
    raise UnreadableReply("no JSON object could be read from the reply")


def first_balanced_object(text: str) -> str | None:
    """The first {...} span whose braces balance, ignoring braces inside JSON strings."""
    start = text.find("{")
    while start != -1:
        end = _balanced_end(text, start)
        if end is not None:
            return text[start : end + 1]
        start = text.find("{", start + 1)
    return None


def _balanced_end(text: str, start: int) -> int | None:
    depth = 0
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def criterion_outcomes(
    criteria: Sequence[Criterion], verdicts: dict[str, Verdict]
) -> list[Verdict]:
    """One verdict per criterion, in rubric order; a criterion left without one is unmet."""
    return [
        verdicts.get(c.id) or Verdict(c.id, False, "The judge gave no verdict for this criterion.")
        for c in criteria
    ]


def pass_and_rubric(
    criteria: Sequence[Criterion], outcomes: Sequence[Verdict]
) -> tuple[int, float]:
    """Eq. 2 of the paper (all criteria met) and the weighted fraction of criteria met."""
    weights = [c.weight if c.weight is not None else 1.0 for c in criteria]
    met_weight = sum(w for w, v in zip(weights, outcomes, strict=True) if v.met)
    all_met = int(all(v.met for v in outcomes))
    return all_met, met_weight / sum(weights)


def verdict_table(criteria: Sequence[Criterion], outcomes: Sequence[Verdict]) -> str:
    """A markdown table of the verdicts, for the Scoring tab of `inspect view`."""
    rows = [
        [c.id, c.title, "met" if v.met else "**not met**", v.justification]
        for c, v in zip(criteria, outcomes, strict=True)
    ]
    return table(["id", "criterion", "verdict", "justification"], rows)
