"""Sweep tables (the paper's App. G reasoning effort and App. H frame budget): runs that
differ only in one setting, one row per model and subdomain, one column per level."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from hss_inspect.core.errors import InputError
from hss_inspect.report.tables import SUBDOMAIN_LABELS, Run, leaderboard_row

SweepKind = Literal["effort", "frames"]
# Inspect's reasoning_effort values, weakest first.
EFFORT_ORDER: tuple[str, ...] = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
ALL_TASKS = "all"


class SweepError(InputError):
    """Logs that do not form a sweep (e.g. two logs at the same level)."""


@dataclass(frozen=True)
class SweepRow:
    model: str
    group: str  # a subdomain label, or "all" for every task
    values: dict[str, float | None]
    delta: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Sweep:
    kind: SweepKind
    levels: tuple[str, ...]
    rows: tuple[SweepRow, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "sweep": self.kind,
            "levels": list(self.levels),
            "rows": [row.as_dict() for row in self.rows],
        }


def level_of(run: Run, kind: SweepKind) -> str:
    value = run.reasoning_effort if kind == "effort" else run.max_frames
    if value is None:
        setting = "reasoning effort" if kind == "effort" else "max_frames"
        raise SweepError(f"{run.log}: the log records no {setting}, so it cannot join a sweep")
    return str(value)


def _level_key(kind: SweepKind, level: str) -> tuple[int, float]:
    if kind == "frames":
        return (0, float(level))
    if level in EFFORT_ORDER:
        return (0, float(EFFORT_ORDER.index(level)))
    return (1, 0.0)


def _fixed_settings(run: Run, kind: SweepKind) -> tuple[object, ...]:
    """Everything that must be equal for runs to sit on one sweep line."""
    other = run.max_frames if kind == "effort" else run.reasoning_effort
    return (run.model, run.condition, run.judge, other)


def build_sweep(runs: Sequence[Run], kind: SweepKind) -> Sweep:
    lines: dict[tuple[object, ...], dict[str, Run]] = {}
    for run in runs:
        line = lines.setdefault(_fixed_settings(run, kind), {})
        level = level_of(run, kind)
        if level in line:
            raise SweepError(
                f"{line[level].log} and {run.log} are both {run.model} at {kind} {level}: "
                "pass one log per level (merge retries with inspect eval-retry)"
            )
        line[level] = run
    levels = tuple(
        sorted({lvl for line in lines.values() for lvl in line}, key=lambda v: _level_key(kind, v))
    )
    rows: list[SweepRow] = []
    for line in lines.values():
        scored = {level: leaderboard_row(run) for level, run in line.items()}
        first = next(iter(line.values()))
        model = (
            first.model if first.condition == "standard" else f"{first.model} [{first.condition}]"
        )
        rows.append(
            _row(model, ALL_TASKS, levels, {lv: r["pass_at_1"] for lv, r in scored.items()})
        )
        for label in SUBDOMAIN_LABELS:
            values = {lv: r["subdomains"].get(label) for lv, r in scored.items()}
            if any(v is not None for v in values.values()):
                rows.append(_row(model, label, levels, values))
    return Sweep(kind, levels, tuple(rows))


def _row(model: str, group: str, levels: Sequence[str], found: dict[str, float | None]) -> SweepRow:
    values = {level: found.get(level) for level in levels}
    present = [v for v in values.values() if v is not None]
    delta = present[-1] - present[0] if len(present) >= 2 else None
    return SweepRow(model, group, values, delta)
