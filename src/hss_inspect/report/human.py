"""A human study's figures beyond its Table 1 row (paper Sec. 3.1): how often people were
unsure, pass@1 on the answers they were sure and unsure of, pass@1 per annotator, and the
median seconds an answer took. Pure arithmetic over a run's attempt records.

Each figure is over answers: with one annotator per task (the paper's setting) that is
over tasks; with several, each answer counts once."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hss_inspect.core.settings import HUMAN_CONDITION
from hss_inspect.report.records import AttemptRecord
from hss_inspect.report.stats import mean_or_none
from hss_inspect.report.tables import Run, primary_runs


@dataclass(frozen=True)
class AnnotatorFigures:
    """One annotator's share of a study: how many answers, and how many passed."""

    annotator: str
    answers: int
    pass_at_1: float | None


@dataclass(frozen=True)
class HumanFigures:
    answers: int
    unsure_share: float | None  # of the answers that said how sure they were
    pass_sure: float | None
    pass_unsure: float | None
    median_seconds: float | None
    annotators: tuple[AnnotatorFigures, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# The label of a study's row in the leaderboard (the paper's own is "Human baseline").
STUDY_LABEL = "Human baseline (this study)"


def human_figures(records: Sequence[AttemptRecord]) -> HumanFigures:
    """The study's figures from its run's records (one record per answer)."""
    stated = [r for r in records if r.confidence in ("sure", "unsure")]
    unsure = [r for r in stated if r.confidence == "unsure"]
    seconds = [r.seconds for r in records if r.seconds is not None]
    names = sorted({r.annotator for r in records if r.annotator is not None})
    return HumanFigures(
        answers=len(records),
        unsure_share=len(unsure) / len(stated) if stated else None,
        pass_sure=pass_of([r for r in stated if r.confidence == "sure"]),
        pass_unsure=pass_of(unsure),
        median_seconds=statistics.median(seconds) if seconds else None,
        annotators=tuple(
            AnnotatorFigures(
                name,
                sum(r.annotator == name for r in records),
                pass_of([r for r in records if r.annotator == name]),
            )
            for name in names
        ),
    )


def pass_of(records: Sequence[AttemptRecord]) -> float | None:
    """The share of graded answers that pass (None: none graded)."""
    return mean_or_none([r.pass_ or 0.0 for r in records if r.pass_ is not None])


def human_studies(runs: Sequence[Run]) -> list[tuple[str, HumanFigures]]:
    """Each human study among the runs (its first rubric scorer), with its figures."""
    return [
        (run.log, human_figures(run.records))
        for run in primary_runs(runs)
        if run.condition == HUMAN_CONDITION
    ]


def studies_json(studies: Sequence[tuple[str, HumanFigures]]) -> dict[str, Any]:
    """The `human` entry of the report's JSON (none without a study)."""
    return {"human": [{"log": log, **f.as_dict()} for log, f in studies]} if studies else {}
