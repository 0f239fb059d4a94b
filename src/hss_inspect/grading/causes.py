"""The failure-cause taxonomy and the labeller's words, as pure functions (paper Sec. 3.2,
App. D). The causes live in `scorers/failure_causes.yaml`, the prompt in
`scorers/labeler.yaml`; this module fills the prompt in and reads the label back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from hss_inspect.core.config import PromptSet, load_yaml, prompt_set
from hss_inspect.data.rows import GradedTask
from hss_inspect.grading.judge import UnreadableReply, answer_fence, extract_json_object

FAMILIES: tuple[str, ...] = ("perception", "latent", "reasoning")
NO_ANSWER_FAMILY = "no_answer"


@dataclass(frozen=True)
class Cause:
    id: str
    family: str
    name: str
    definition: str
    inferred: bool = False


@dataclass(frozen=True)
class Taxonomy:
    causes: tuple[Cause, ...]
    no_answer: Cause
    version: str

    @property
    def all(self) -> tuple[Cause, ...]:
        return (*self.causes, self.no_answer)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.all)

    def family_of(self, cause_id: str) -> str:
        return next(c.family for c in self.all if c.id == cause_id)

    def name_of(self, cause_id: str) -> str:
        return next(c.name for c in self.all if c.id == cause_id)


LabelerPrompts = PromptSet


@cache
def taxonomy(filename: str = "failure_causes.yaml") -> Taxonomy:
    loaded = load_yaml("scorers", filename)
    causes = tuple(_cause(entry) for entry in loaded["causes"])
    unknown = {c.family for c in causes} - set(FAMILIES)
    if unknown:
        raise ValueError(f"scorers/{filename}: unknown families {sorted(unknown)}")
    no_answer = _cause({**loaded["no_answer"], "family": NO_ANSWER_FAMILY})
    return Taxonomy(causes, no_answer, str(loaded.get("version", "")))


def _cause(entry: dict[str, object]) -> Cause:
    return Cause(
        id=str(entry["id"]),
        family=str(entry["family"]),
        name=str(entry["name"]),
        definition=" ".join(str(entry["definition"]).split()),
        inferred=bool(entry.get("inferred", False)),
    )


def labeler_prompts(filename: str = "labeler.yaml") -> LabelerPrompts:
    return prompt_set(filename)


def render_causes(causes: Taxonomy) -> str:
    lines = []
    for family in (*FAMILIES, NO_ANSWER_FAMILY):
        lines.append(f"{family}:")
        lines += [f"- {c.id} ({c.name}): {c.definition}" for c in causes.all if c.family == family]
    return "\n".join(lines)


def expected_ids_text(causes: Taxonomy) -> str:
    return ", ".join(json.dumps(i) for i in causes.ids)


def render_label_request(
    prompts: LabelerPrompts,
    causes: Taxonomy,
    task: GradedTask,
    answer: str,
) -> str:
    opening, closing = answer_fence(answer)
    return prompts.user.substitute(
        causes=render_causes(causes),
        question=task.question,
        media_type=task.media_type,
        reference=task.reference,
        answer_open=opening,
        answer=answer,
        answer_close=closing,
        expected_ids=expected_ids_text(causes),
    )


def render_label_retry(prompts: LabelerPrompts, causes: Taxonomy, problem: str) -> str:
    return prompts.retry.substitute(problem=problem, expected_ids=expected_ids_text(causes))


@dataclass(frozen=True)
class Label:
    cause: str
    explanation: str


def parse_label(text: str, causes: Taxonomy) -> Label:
    """The cause named in a labeller reply; UnreadableReply when there is no valid one."""
    payload = extract_json_object(text)
    cause = payload.get("cause")
    if not isinstance(cause, str) or not cause.strip():
        raise UnreadableReply('the JSON object has no string named "cause"')
    cause_id = cause.strip()
    if cause_id not in causes.ids:
        raise UnreadableReply(f"{cause_id!r} is not one of the cause ids")
    return Label(cause_id, str(payload.get("explanation") or ""))
