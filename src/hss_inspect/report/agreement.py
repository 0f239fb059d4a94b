"""Judge alignment (the paper's Sec. 3.4 and App. I): the same answers graded by several
judges, compared pairwise at the criterion and the item level. Pure.

An answer is identified by its attempt id, which a log keeps when it is re-scored in
place (`inspect score --action append`) or as a copy, so both ways of re-grading work.
Attempts without an answer are left out: no judge was asked about them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hss_inspect.core.errors import InputError
from hss_inspect.report.records import AttemptRecord
from hss_inspect.report.stats import agreement, cohen_kappa, pearson, spearman

# A judge's grades of one answer, keyed by attempt id.
Grades = dict[str, AttemptRecord]


@dataclass(frozen=True)
class PairAgreement:
    a: str
    b: str
    criterion_agreement: float
    criterion_kappa: float
    item_agreement: float
    item_kappa: float
    n_criteria: int
    n_items: int


@dataclass(frozen=True)
class Alignment:
    judges: tuple[str, ...]
    pairs: tuple[PairAgreement, ...]
    model_scores: dict[str, dict[str, float]]  # model -> judge -> pass@1 (%)
    leniency: dict[str, float]  # judge -> points above the mean of the others
    correlations: tuple[dict[str, Any], ...]
    self_preference: tuple[dict[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judges": list(self.judges),
            "pairs": [vars(p) for p in self.pairs],
            "model_scores": self.model_scores,
            "leniency": self.leniency,
            "correlations": list(self.correlations),
            "self_preference": list(self.self_preference),
        }


def grades_by_judge(records: Iterable[AttemptRecord]) -> dict[str, Grades]:
    """Each judge's graded answers; the first grade wins if a judge graded one twice."""
    judges: dict[str, Grades] = {}
    for record in records:
        if record.graded and not record.no_answer:
            judges.setdefault(record.judge, {}).setdefault(record.attempt_id, record)
    return judges


def pair_agreement(a: str, b: str, grades_a: Grades, grades_b: Grades) -> PairAgreement:
    shared = [key for key in grades_a if key in grades_b]
    items = [(grades_a[k].pass_ == 1, grades_b[k].pass_ == 1) for k in shared]
    criteria: list[tuple[bool, bool]] = []
    for key in shared:
        verdicts_b = {v.id: v.met for v in grades_b[key].verdicts}
        criteria += [
            (v.met, verdicts_b[v.id]) for v in grades_a[key].verdicts if v.id in verdicts_b
        ]
    return PairAgreement(
        a=a,
        b=b,
        criterion_agreement=agreement(criteria),
        criterion_kappa=cohen_kappa(criteria),
        item_agreement=agreement(items),
        item_kappa=cohen_kappa(items),
        n_criteria=len(criteria),
        n_items=len(items),
    )


def model_scores(judges: dict[str, Grades]) -> dict[str, dict[str, float]]:
    """pass@1 (%) of each model under each judge, on the answers every judge graded."""
    common = set.intersection(*(set(g) for g in judges.values())) if judges else set()
    scores: dict[str, dict[str, float]] = {}
    for judge, grades in judges.items():
        per_model: dict[str, dict[str, list[float]]] = {}
        for key in common:
            record = grades[key]
            tasks = per_model.setdefault(record.model, {})
            tasks.setdefault(record.task_id, []).append(record.pass_ or 0.0)
        for model, tasks in per_model.items():
            task_means = [sum(v) / len(v) for v in tasks.values()]
            scores.setdefault(model, {})[judge] = 100 * sum(task_means) / len(task_means)
    return scores


def leniency(scores: dict[str, dict[str, float]], judges: Sequence[str]) -> dict[str, float]:
    """Mean over models of a judge's score minus the mean of the other judges' scores."""
    result: dict[str, float] = {}
    for judge in judges:
        gaps = [_gap(per_judge, judge) for per_judge in scores.values()]
        result[judge] = sum(gaps) / len(gaps) if gaps else float("nan")
    return result


def _gap(per_judge: dict[str, float], judge: str) -> float:
    others = [v for j, v in per_judge.items() if j != judge]
    return per_judge[judge] - sum(others) / len(others) if others else 0.0


def correlations(
    scores: dict[str, dict[str, float]], judges: Sequence[str]
) -> tuple[dict[str, Any], ...]:
    models = sorted(scores)
    result = []
    for a, b in itertools.combinations(judges, 2):
        x = [scores[m][a] for m in models]
        y = [scores[m][b] for m in models]
        result.append(
            {
                "a": a,
                "b": b,
                "n_models": len(models),
                "spearman": spearman(x, y),
                "pearson": pearson(x, y),
            }
        )
    return tuple(result)


def vendor_of(model: str) -> str:
    """The provider prefix of an Inspect model name (`anthropic/claude-opus-5` -> anthropic)."""
    return model.split("/", 1)[0]


def self_preference(
    scores: dict[str, dict[str, float]], lenient: dict[str, float]
) -> tuple[dict[str, Any], ...]:
    """Residuals of judges grading a model of their own vendor: the judge's gap to the
    others on that model minus its overall leniency (the paper's App. I)."""
    found = []
    for model, per_judge in sorted(scores.items()):
        for judge in per_judge:
            if len(per_judge) > 1 and vendor_of(judge) == vendor_of(model):
                found.append(
                    {
                        "judge": judge,
                        "model": model,
                        "same_model": judge == model,
                        "residual": _gap(per_judge, judge) - lenient[judge],
                    }
                )
    return tuple(found)


def judge_alignment(records: Iterable[AttemptRecord]) -> Alignment:
    records = list(records)
    judges = grades_by_judge(records)
    # Judges in the order of their scorers (the eval's own judge first), whichever
    # sample happens to be read first.
    names = tuple(j for j in dict.fromkeys(r.judge for r in records) if j in judges)
    if len(names) < 2:
        raise InputError(
            f"judge agreement needs answers graded by at least two judges, found {len(names)}: "
            "re-grade a log with inspect score --action append --model-role grader=<other judge>"
        )
    scores = model_scores(judges)
    lenient = leniency(scores, names)
    return Alignment(
        judges=names,
        pairs=tuple(
            pair_agreement(a, b, judges[a], judges[b]) for a, b in itertools.combinations(names, 2)
        ),
        model_scores=scores,
        leniency=lenient,
        correlations=correlations(scores, names),
        self_preference=self_preference(scores, lenient),
    )
