"""The perturber: the model bound to the role `perturber` rewrites a reference answer.

Rendering its request and reading its reply are pure; `perturb` is the thin loop that
calls the model and re-asks a bounded number of times. A reply is read strictly (one
JSON object with exactly `variant` and `target`, optionally in one fenced block): a
reply that cannot be used is never repaired or guessed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from string import Template

from inspect_ai.model import (
    Model,
)

from hss_inspect.audit.kinds import KIND_BY_NAME, PERTURBER_KINDS, Expectation
from hss_inspect.audit.variants import AUDIT_FILE, Variant, audit_data
from hss_inspect.data.rows import Criterion, GradedTask
from hss_inspect.grading.asking import Exchange, converse, model_reply
from hss_inspect.grading.judge import render_criteria

_ONLY_FENCED_BLOCK = re.compile(r"\A```[a-zA-Z]*\s*\n(.*)\n\s*```\Z", re.DOTALL)


class UnusableReply(ValueError):
    """A perturber reply that cannot be used; the message says why (sent back on re-ask)."""


@dataclass(frozen=True)
class PerturberPrompts:
    system: str
    user: Template
    retry: Template
    kinds: dict[str, str]

    def sha256(self, kind: str) -> str:
        """Fingerprint of everything the perturber is told for this kind."""
        text = "\n".join([self.system, self.user.template, self.retry.template, self.kinds[kind]])
        return hashlib.sha256(text.encode()).hexdigest()


@cache
def perturber_prompts(filename: str = AUDIT_FILE) -> PerturberPrompts:
    section = audit_data(filename)["perturber"]
    kinds = {str(k): str(v).strip() for k, v in section["kinds"].items()}
    if set(kinds) != set(PERTURBER_KINDS):
        raise ValueError(
            f"scorers/{filename}: perturber.kinds must describe exactly "
            f"{', '.join(PERTURBER_KINDS)}, not {', '.join(sorted(kinds))}"
        )
    return PerturberPrompts(
        system=str(section["system"]).strip(),
        user=Template(str(section["user"]).strip()),
        retry=Template(str(section["retry"]).strip()),
        kinds=kinds,
    )


def render_perturber_request(prompts: PerturberPrompts, kind: str, task: GradedTask) -> str:
    return prompts.user.substitute(
        media_type=task.media_type,
        question=task.question,
        reference=task.reference,
        criteria=render_criteria(task.criteria),
        kind=kind,
        instructions=prompts.kinds[kind],
    )


def target_rule(kind: str, criteria: Sequence[Criterion]) -> str:
    if KIND_BY_NAME[kind].expectation is Expectation.TARGET_UNMET:
        return "the id of the criterion made unmet, one of " + ", ".join(
            json.dumps(c.id) for c in criteria
        )
    return "null"


def render_perturber_retry(
    prompts: PerturberPrompts, kind: str, problem: str, criteria: Sequence[Criterion]
) -> str:
    return prompts.retry.substitute(problem=problem, target_rule=target_rule(kind, criteria))


def parse_perturber_reply(
    text: str, kind: str, criteria: Sequence[Criterion], reference: str
) -> tuple[str, str | None]:
    """The variant text and its target from a reply, or UnusableReply naming the fault."""
    payload = _strict_json_object(text)
    if set(payload) != {"variant", "target"}:
        raise UnusableReply(
            'the object must have exactly the keys "variant" and "target", '
            f"not {', '.join(sorted(payload)) or 'none'}"
        )
    variant, target = payload["variant"], payload["target"]
    if not isinstance(variant, str) or not variant.strip():
        raise UnusableReply('"variant" must be a non-empty string')
    if _normalized(variant) == _normalized(reference):
        raise UnusableReply('"variant" repeats the reference answer unchanged')
    ids = [c.id for c in criteria]
    if KIND_BY_NAME[kind].expectation is Expectation.TARGET_UNMET:
        if not isinstance(target, str) or target not in ids:
            raise UnusableReply(f'"target" must be one of the criterion ids {ids}, not {target!r}')
    elif target is not None:
        raise UnusableReply(f'"target" must be null for a {kind} rewrite, not {target!r}')
    return variant.strip(), target


def _strict_json_object(text: str) -> dict[str, object]:
    stripped = text.strip()
    fenced = _ONLY_FENCED_BLOCK.match(stripped)
    body = fenced.group(1) if fenced else stripped
    try:
        loaded = json.loads(body)
    except json.JSONDecodeError as exc:
        raise UnusableReply(f"the reply is not one JSON object ({exc.msg})") from None
    if not isinstance(loaded, dict):
        raise UnusableReply("the reply is JSON but not an object")
    return loaded


def _normalized(text: str) -> str:
    return " ".join(text.split()).lower()


@dataclass
class Perturbation(Exchange):
    """What one perturber conversation gave: a variant, or None after the last re-ask."""

    variant: Variant | None = None


async def perturb(
    model: Model,
    prompts: PerturberPrompts,
    kind: str,
    task: GradedTask,
    retries: int,
) -> Perturbation:
    """Ask for a variant; re-ask at most `retries` times, naming what was wrong."""
    request = render_perturber_request(prompts, kind, task)
    result = Perturbation()

    def read(reply: str) -> str | None:
        try:
            text, target = parse_perturber_reply(reply, kind, task.criteria, task.reference)
        except UnusableReply as exc:
            return str(exc)
        result.variant = Variant(kind, text, target, str(model))
        return None

    await converse(
        model_reply(model),
        prompts.system,
        request,
        read,
        lambda problem: render_perturber_retry(prompts, kind, problem, task.criteria),
        retries,
        result,
    )
    return result
