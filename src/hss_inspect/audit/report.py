"""Audit tables from audit logs: one judge's errors, and two judges side by side.

Reading a log into records is a thin adapter; everything else is pure and works on
`AuditRecord`s, so the `hss-inspect report` command can render the same tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

from hss_inspect.audit.kinds import KIND_BY_NAME, KIND_NAMES
from hss_inspect.audit.tally import (
    GRADING_FAILURE,
    RATE_TITLES,
    RATES,
    SKIPPED,
    Labelled,
    Rate,
    Tally,
    grouped,
    rates_of,
    tally_of,
    total,
)
from hss_inspect.judge import table_cell

AUDIT_SCORER = "judge_audit"
AUDIT_CONDITION = "judge_audit"


@dataclass(frozen=True)
class AuditRecord:
    """One judging of one known answer (a sample-epoch of an audit log)."""

    task_id: str
    kind: str
    media_type: str
    subdomain: str
    epoch: int
    variant_sha256: str | None
    expected: dict[str, bool] | None
    judged: dict[str, bool] | None
    titles: dict[str, str]
    justifications: dict[str, str]

    @property
    def skipped(self) -> bool:
        return self.expected is None

    @property
    def tally(self) -> Tally:
        if self.expected is None:
            return SKIPPED
        if self.judged is None:
            return GRADING_FAILURE
        return tally_of(self.expected, self.judged)

    def labelled(self) -> Labelled:
        return Labelled(self.kind, self.media_type, self.subdomain, self.tally)


@dataclass(frozen=True)
class AuditRun:
    judge: str
    perturber: str
    path: str
    records: list[AuditRecord]


def is_audit_log(log: EvalLog) -> bool:
    return (log.eval.metadata or {}).get("hss_condition") == AUDIT_CONDITION


def read_audit_log(path: str | Path) -> AuditRun:
    log = read_eval_log(str(path))
    if not is_audit_log(log):
        raise ValueError(f"{path} is not a log of hss_inspect/hss_judge_audit")
    roles = log.eval.model_roles or {}
    records = [record_of(sample) for sample in log.samples or []]
    perturbers = {r for r in _perturber_models(log)}
    return AuditRun(
        judge=_role_model(roles.get("grader")),
        perturber=", ".join(sorted(perturbers)) or "(rule-made kinds only)",
        path=str(path),
        records=[r for r in records if r is not None],
    )


def _role_model(config: Any) -> str:
    if isinstance(config, list):
        config = config[0] if config else None
    return str(getattr(config, "model", "")) or "(unknown)"


def _perturber_models(log: EvalLog) -> Iterable[str]:
    for sample in log.samples or []:
        perturber = (sample.metadata or {}).get("audit", {}).get("perturber")
        if perturber:
            yield str(perturber["model"])


def record_of(sample: Any) -> AuditRecord | None:
    score = (sample.scores or {}).get(AUDIT_SCORER)
    meta = sample.metadata or {}
    if score is None or "audit" not in meta:
        return None
    audit = meta["audit"]
    verdicts = (score.metadata or {}).get("verdicts")
    return AuditRecord(
        task_id=str(meta["task_id"]),
        kind=str(meta["audit_kind"]),
        media_type=str(meta.get("media_type", "")),
        subdomain=str(meta.get("subdomain", "")),
        epoch=int(sample.epoch),
        variant_sha256=audit.get("variant_sha256"),
        expected=audit.get("expected"),
        judged=None if verdicts is None else {v["id"]: bool(v["met"]) for v in verdicts},
        titles={str(c["id"]): str(c["title"]) for c in meta.get("criteria", [])},
        justifications={} if verdicts is None else {v["id"]: v["justification"] for v in verdicts},
    )


# ---- one judge ---------------------------------------------------------------------


def rate_cell(rate: Rate | None) -> str:
    if rate is None:
        return "–"
    return f"{rate.errors}/{rate.trials} = {_pct(rate.value)} [{_pct(rate.low)}, {_pct(rate.high)}]"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _rate_columns(tally: Tally) -> list[str]:
    rates = rates_of(tally)
    return [rate_cell(rates.get(name)) for name in RATES]


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _header(first: Sequence[str]) -> list[str]:
    titles = [*first, "variants", "skipped", "grading failures", *RATE_TITLES.values()]
    return [_row(titles), _row(["---"] * len(titles))]


def judge_tables(run: AuditRun, max_errors: int = 50) -> str:
    """The audit of one judge: by kind, by media type, by subdomain, and its errors."""
    items = [r.labelled() for r in run.records]
    overall = total(i.tally for i in items)
    groups = grouped(items, KIND_NAMES)
    lines = [
        f"## Judge audit: {run.judge}",
        "",
        f"Log `{run.path}`; variants by {run.perturber}. Rates are errors / trials with 95% "
        "Wilson intervals. A false pass is a verdict 'met' where the answer was built to "
        "leave the criterion unmet; a false fail the reverse. Items pass when every "
        "criterion is met.",
        "",
        *_header(["kind", "built so that"]),
    ]
    for kind, tally in groups["kind"].items():
        known = KIND_BY_NAME[kind].expectation.value if kind in KIND_BY_NAME else "?"
        lines.append(_row([kind, known, *_counts(tally), *_rate_columns(tally)]))
    lines.append(_row(["**all**", "", *_counts(overall), *_rate_columns(overall)]))
    for title, key in (("media type", "media"), ("subdomain", "subdomain")):
        lines += ["", *_header([title])]
        for label, tally in groups[key].items():
            lines.append(_row([label, *_counts(tally), *_rate_columns(tally)]))
    lines += ["", *error_lines(run.records, max_errors)]
    return "\n".join(lines)


def _counts(tally: Tally) -> list[int]:
    return [tally.variants, tally.skipped, tally.grading_failures]


def error_lines(records: Sequence[AuditRecord], limit: int) -> list[str]:
    """Every criterion verdict that contradicts construction, task by task."""
    errors = [
        (r, cid)
        for r in records
        if r.expected is not None and r.judged is not None
        for cid in r.expected
        if r.expected[cid] != r.judged.get(cid)
    ]
    if not errors:
        return ["No criterion verdict contradicts construction."]
    lines = [
        f"### Criterion verdicts that contradict construction ({len(errors)})",
        "",
        _row(["task", "kind", "criterion", "built", "judge", "justification"]),
        _row(["---"] * 6),
    ]
    for record, cid in errors[:limit]:
        built = record.expected[cid]  # type: ignore[index]
        lines.append(
            _row(
                [
                    record.task_id,
                    record.kind,
                    f"{cid}: {table_cell(record.titles.get(cid, ''))}",
                    "met" if built else "not met",
                    "met" if not built else "not met",
                    table_cell(record.justifications.get(cid, "")),
                ]
            )
        )
    if len(errors) > limit:
        lines.append(f"\n({len(errors) - limit} more in the log's scores)")
    return lines


# ---- two judges on the same variants ---------------------------------------------------


@dataclass(frozen=True)
class Pairing:
    """Verdicts of two judges on the variants both graded (same task, kind, epoch, text)."""

    pairs: list[tuple[AuditRecord, AuditRecord]]
    unmatched: int


def pair_runs(first: AuditRun, second: AuditRun) -> Pairing:
    def key(r: AuditRecord) -> tuple[str, str, int]:
        return (r.task_id, r.kind, r.epoch)

    by_key = {key(r): r for r in second.records}
    first_keys = {key(r) for r in first.records}
    unmatched = sum(1 for r in second.records if key(r) not in first_keys)
    pairs = []
    for record in first.records:
        other = by_key.get(key(record))
        if (
            other is not None
            and other.variant_sha256 == record.variant_sha256
            and record.tally.graded
            and other.tally.graded
        ):
            pairs.append((record, other))
        else:
            unmatched += 1
    return Pairing(pairs, unmatched)


def side_by_side(first: AuditRun, second: AuditRun) -> str:
    """Both judges' rates on the variants both graded, and who is right where they differ."""
    pairing = pair_runs(first, second)
    a, b = first.judge, second.judge
    lines = [
        f"## {b} in place of {a}",
        "",
        f"{len(pairing.pairs)} variants graded by both judges (identical answers); "
        f"{pairing.unmatched} left out (skipped, ungraded or not in both logs). "
        f"Cells: {a} → {b}. 'Only A right' counts criterion verdicts where {a} agrees with "
        f"construction and {b} does not; 'only B right' the reverse.",
        "",
    ]
    titles = ["kind", "variants", *RATE_TITLES.values(), "only A right", "only B right"]
    lines += [_row(titles), _row(["---"] * len(titles))]
    kinds = [k for k in KIND_NAMES if any(p[0].kind == k for p in pairing.pairs)]
    for kind in [*kinds, None]:
        chosen = [p for p in pairing.pairs if kind is None or p[0].kind == kind]
        lines.append(_row([kind or "**all**", *_paired_cells(chosen)]))
    return "\n".join(lines)


def _paired_cells(pairs: Sequence[tuple[AuditRecord, AuditRecord]]) -> list[object]:
    left = rates_of(total(p[0].tally for p in pairs))
    right = rates_of(total(p[1].tally for p in pairs))
    cells: list[object] = [len(pairs)]
    for name in RATES:
        if name in left and name in right:
            cells.append(f"{_pct(left[name].value)} → {_pct(right[name].value)}")
        else:
            cells.append("–")
    only_a = only_b = 0
    for first, second in pairs:
        for cid, built in (first.expected or {}).items():
            a_right = (first.judged or {}).get(cid) == built
            b_right = (second.judged or {}).get(cid) == built
            only_a += a_right and not b_right
            only_b += b_right and not a_right
    return [*cells, only_a, only_b]


def audit_report(paths: Sequence[str | Path], max_errors: int = 50) -> str:
    """Tables of each audit log; with two or more, each later judge beside the first."""
    runs = [read_audit_log(p) for p in paths]
    parts = [judge_tables(run, max_errors) for run in runs]
    parts += [side_by_side(runs[0], other) for other in runs[1:]]
    return "\n\n".join(parts) + "\n"
