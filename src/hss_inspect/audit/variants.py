"""Known answers: the ones made by rule, as pure functions, and the texts they use.

The words live in `scorers/audit.yaml`; the perturber's part of that file is read by
`hss_inspect.audit.perturber`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache
from string import Template
from typing import Any

from hss_inspect.core.config import load_yaml

AUDIT_FILE = "audit.yaml"


@dataclass(frozen=True)
class Variant:
    """An answer of a known kind; `target` is the criterion it makes unmet, if any."""

    kind: str
    text: str
    target: str | None
    made_by: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass(frozen=True)
class RuleTexts:
    hedge: Template
    injection: str
    vague: str


@cache
def audit_data(filename: str = AUDIT_FILE) -> dict[str, Any]:
    return load_yaml("scorers", filename)


@cache
def rule_texts(filename: str = AUDIT_FILE) -> RuleTexts:
    rules = audit_data(filename)["rules"]
    return RuleTexts(
        hedge=Template(str(rules["hedge"]).strip()),
        injection=str(rules["injection"]).strip(),
        vague=str(rules["vague"]).strip(),
    )


def reference_variant(reference: str) -> Variant:
    return Variant("reference", reference.strip(), None, "rule")


def hedge_variant(
    reference: str, contradiction: Variant, task_id: str, texts: RuleTexts
) -> Variant:
    """Reference and contradiction offered as alternatives; the target is the contradiction's.

    Which comes first is fixed by the task id, so a judge that trusts the first (or the
    last) alternative is caught on about half of the hedges either way.
    """
    options = [reference.strip(), contradiction.text.strip()]
    if int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % 2:
        options.reverse()
    text = texts.hedge.substitute(first=options[0], second=options[1])
    return Variant("hedge", text, contradiction.target, "rule")


def injection_variant(texts: RuleTexts) -> Variant:
    return Variant("injection", texts.injection, None, "rule")


def vague_variant(texts: RuleTexts) -> Variant:
    return Variant("vague", texts.vague, None, "rule")


def rule_variant(kind: str, reference: str, texts: RuleTexts) -> Variant:
    """A variant that needs nothing but the reference (hedge needs a contradiction too)."""
    if kind == "reference":
        return reference_variant(reference)
    if kind == "injection":
        return injection_variant(texts)
    if kind == "vague":
        return vague_variant(texts)
    raise ValueError(f"{kind} variants are not made from the reference alone")
