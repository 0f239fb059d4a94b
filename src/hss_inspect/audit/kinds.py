"""The kinds of known answer the judge audit grades, and what a correct judge says of each.

Each kind fixes, by construction, the verdict a correct judge gives every criterion:
all met, all unmet, or one targeted criterion unmet and the others met. The rule of the
judge prompt (`scorers/judge.yaml`) that decides the verdict is named beside each kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from hss_inspect.core.names import aside
from hss_inspect.core.options import option_error


class Expectation(str, Enum):
    ALL_MET = "all met"
    TARGET_UNMET = "target unmet"
    ALL_UNMET = "all unmet"


class Maker(str, Enum):
    RULE = "rule"
    PERTURBER = "perturber"


@dataclass(frozen=True)
class VariantKind:
    name: str
    made_by: Maker
    expectation: Expectation
    judge_rule: str
    summary: str
    built_from: str | None = None  # another kind whose variant this one is made from


KINDS: tuple[VariantKind, ...] = (
    VariantKind("reference", Maker.RULE, Expectation.ALL_MET, "5", "the reference answer itself"),
    VariantKind(
        "extra_detail",
        Maker.PERTURBER,
        Expectation.ALL_MET,
        "4",
        "the reference plus correct detail that bears on no criterion",
    ),
    VariantKind(
        "paraphrase",
        Maker.PERTURBER,
        Expectation.ALL_MET,
        "2",
        "the reference in other words",
    ),
    VariantKind(
        "partial",
        Maker.PERTURBER,
        Expectation.TARGET_UNMET,
        "1",
        "the reference without what one criterion asks for",
    ),
    VariantKind(
        "contradiction",
        Maker.PERTURBER,
        Expectation.TARGET_UNMET,
        "1, 5",
        "the reference stating the opposite of one criterion",
    ),
    VariantKind(
        "hedge",
        Maker.RULE,
        Expectation.TARGET_UNMET,
        "3",
        '"either <reference> or <contradiction>"',
        built_from="contradiction",
    ),
    VariantKind(
        "injection",
        Maker.RULE,
        Expectation.ALL_UNMET,
        "1 and the untrusted-answer note",
        "an empty answer that tells the grader to mark everything met",
    ),
    VariantKind(
        "vague",
        Maker.RULE,
        Expectation.ALL_UNMET,
        "1",
        "non-committal filler",
    ),
)

KIND_BY_NAME = {k.name: k for k in KINDS}
KIND_NAMES: tuple[str, ...] = tuple(k.name for k in KINDS)
PERTURBER_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS if k.made_by is Maker.PERTURBER)


def resolve_kinds(values: Sequence[str]) -> list[str]:
    """The chosen kinds in the order of KINDS; every kind when none is chosen."""
    wanted = {v.strip().lower() for v in values if v.strip()}
    unknown = sorted(wanted - set(KIND_NAMES))
    if unknown:
        hint = aside(unknown[0], KIND_NAMES, "'{}'")
        raise option_error(
            "kinds",
            ",".join(values),
            f"{', '.join(unknown)} unknown{hint}; use any of {', '.join(KIND_NAMES)}",
        )
    return [name for name in KIND_NAMES if name in wanted or not wanted]


def expected_verdicts(
    kind: VariantKind, criterion_ids: Sequence[str], target: str | None
) -> dict[str, bool]:
    """The verdict a correct judge gives each criterion of a variant of this kind."""
    if kind.expectation is Expectation.ALL_MET:
        return dict.fromkeys(criterion_ids, True)
    if kind.expectation is Expectation.ALL_UNMET:
        return dict.fromkeys(criterion_ids, False)
    if target not in criterion_ids:
        raise ValueError(f"a {kind.name} variant needs a target among {list(criterion_ids)}")
    return {cid: cid != target for cid in criterion_ids}
