"""Audit tables from judge-audit logs: one judge's errors, and two judges side by side.

`hss-inspect report` hands audit logs here. Reading a log into `AuditRecord`s is a thin
adapter over the report's log reader; the tables are pure functions of the records.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample

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
from hss_inspect.core.markdown import table_lines
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.report.logs import LogError, read_header, read_samples

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


def is_audit_log(path: str | Path) -> bool:
    """Whether a log is one of hss_inspect/hss_judge_audit (its header says so)."""
    header = read_header(str(path))
    return (header.eval.metadata or {}).get("hss_condition") == AUDIT_CONDITION


def read_audit_log(path: str | Path) -> AuditRun:
    header = read_header(str(path))
    if (header.eval.metadata or {}).get("hss_condition") != AUDIT_CONDITION:
        raise LogError(f"{path}: not a log of hss_inspect/hss_judge_audit")
    samples = list(read_samples(str(path)))
    records = [record_of(sample) for sample in samples]
    perturbers = sorted(set(_perturber_models(samples)))
    return AuditRun(
        judge=_role_model((header.eval.model_roles or {}).get(GRADER_ROLE)),
        perturber=", ".join(perturbers) or "rule only",
        path=str(path),
        records=[r for r in records if r is not None],
    )


def _role_model(config: Any) -> str:
    if isinstance(config, list):
        config = config[0] if config else None
    return str(getattr(config, "model", "")) or "(unknown)"


def _perturber_models(samples: Iterable[EvalSample]) -> Iterable[str]:
    for sample in samples:
        perturber = (sample.metadata or {}).get("audit", {}).get("perturber")
        if perturber:
            yield str(perturber["model"])


def record_of(sample: EvalSample) -> AuditRecord | None:
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


@dataclass(frozen=True)
class WrongVerdict:
    task_id: str
    kind: str
    criterion: str
    title: str
    built_met: bool
    justification: str


def wrong_verdicts(records: Sequence[AuditRecord]) -> list[WrongVerdict]:
    """Every criterion verdict that contradicts construction, in log order."""
    return [
        WrongVerdict(
            r.task_id, r.kind, cid, r.titles.get(cid, ""), built, r.justifications.get(cid, "")
        )
        for r in records
        if r.expected is not None and r.judged is not None
        for cid, built in r.expected.items()
        if built != r.judged.get(cid)
    ]


@dataclass(frozen=True)
class CriterionRow:
    """One rubric criterion over every variant of its task that the judge graded."""

    task_id: str
    criterion: str
    title: str
    tally: Tally  # criterion-level fields only
    wrong_kinds: tuple[str, ...]


def criterion_rows(records: Sequence[AuditRecord]) -> list[CriterionRow]:
    """Per criterion: its false passes and false fails across kinds, worst first."""
    tallies: dict[tuple[str, str], Tally] = {}
    wrong: dict[tuple[str, str], list[str]] = {}
    titles: dict[tuple[str, str], str] = {}
    for r in records:
        if r.expected is None or r.judged is None:
            continue
        for cid, built in r.expected.items():
            key = (r.task_id, cid)
            judged = r.judged.get(cid, False)
            tallies[key] = tallies.get(key, Tally()) + tally_of({cid: built}, {cid: judged})
            titles[key] = r.titles.get(cid, "")
            if judged != built:
                wrong.setdefault(key, []).append(r.kind)
    rows = [
        CriterionRow(task, cid, titles[(task, cid)], tally, tuple(wrong.get((task, cid), [])))
        for (task, cid), tally in tallies.items()
    ]
    return sorted(rows, key=lambda row: (-len(row.wrong_kinds), row.task_id, row.criterion))


def judge_groups(run: AuditRun) -> dict[str, dict[str, Tally]]:
    """Totals by kind (with `all`), by media type and by subdomain label."""
    items = [r.labelled() for r in run.records]
    groups = grouped(items, KIND_NAMES)
    groups["kind"]["all"] = total(i.tally for i in items)
    return groups


def rate_cell(rate: Rate | None) -> str:
    if rate is None:
        return "–"
    return f"{rate.errors}/{rate.trials} = {_pct(rate.value)} [{_pct(rate.low)}, {_pct(rate.high)}]"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _table(first: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    titles = [*first, "variants", "skipped", "grading failures", *RATE_TITLES.values()]
    return table_lines(titles, rows)


def _tally_cells(tally: Tally) -> list[object]:
    rates = rates_of(tally)
    counts: list[object] = [tally.variants, tally.skipped, tally.grading_failures]
    return counts + [rate_cell(rates.get(name)) for name in RATES]


# Rows shown of each list of criteria and wrong verdicts in the markdown tables.
MAX_ERRORS_LISTED = 50


def judge_markdown(run: AuditRun) -> str:
    """The audit of one judge: by kind, by media type, by subdomain, and its errors."""
    groups = judge_groups(run)
    kind_rows = [
        [
            "**all**" if kind == "all" else kind,
            KIND_BY_NAME[kind].expectation.value if kind in KIND_BY_NAME else "",
            *_tally_cells(tally),
        ]
        for kind, tally in groups["kind"].items()
    ]
    lines = [
        f"## Judge audit: {run.judge}",
        "",
        f"Log `{run.path}`; variants by {run.perturber}. Rates are errors / trials with 95% "
        "Wilson intervals. A false pass is a verdict 'met' where the answer was built to "
        "leave the criterion unmet; a false fail the reverse. Items pass when every "
        "criterion is met.",
        "",
        *_table(["kind", "built so that"], kind_rows),
    ]
    for title, key in (("media type", "media"), ("subdomain", "subdomain")):
        rows = [[label, *_tally_cells(tally)] for label, tally in groups[key].items()]
        lines += ["", *_table([title], rows)]
    lines += ["", *_criterion_lines(criterion_rows(run.records), MAX_ERRORS_LISTED)]
    return "\n".join([*lines, "", *_wrong_lines(wrong_verdicts(run.records), MAX_ERRORS_LISTED)])


def _criterion_lines(rows: Sequence[CriterionRow], limit: int) -> list[str]:
    wrong = [row for row in rows if row.wrong_kinds]
    if not wrong:
        return []
    header = ["task", "criterion", RATE_TITLES["fp_crit"], RATE_TITLES["ff_crit"], "on kinds"]
    cells = [
        [
            row.task_id,
            f"{row.criterion}: {row.title}",
            rate_cell(rates_of(row.tally).get("fp_crit")),
            rate_cell(rates_of(row.tally).get("ff_crit")),
            ", ".join(row.wrong_kinds),
        ]
        for row in wrong[:limit]
    ]
    title = f"### Criteria the judge got wrong ({len(wrong)} of {len(rows)})"
    return _titled_table(title, header, cells, len(wrong), "in the JSON report")


def _wrong_lines(wrong: Sequence[WrongVerdict], limit: int) -> list[str]:
    if not wrong:
        return ["No criterion verdict contradicts construction."]
    cells = [
        [
            w.task_id,
            w.kind,
            f"{w.criterion}: {w.title}",
            *(("met", "not met") if w.built_met else ("not met", "met")),
            w.justification,
        ]
        for w in wrong[:limit]
    ]
    header = ["task", "kind", "criterion", "built", "judge", "justification"]
    title = f"### Criterion verdicts that contradict construction ({len(wrong)})"
    return _titled_table(title, header, cells, len(wrong), "in the log's scores")


def _titled_table(
    title: str, header: Sequence[str], cells: Sequence[Sequence[object]], total: int, rest: str
) -> list[str]:
    """A heading, the first rows of a longer list as a table, and where the rest are."""
    more = ["", f"({total - len(cells)} more {rest}.)"] if total > len(cells) else []
    return [title, "", *table_lines(header, cells), *more]


# ---- two judges on the same variants ---------------------------------------------------


@dataclass(frozen=True)
class PairedRow:
    """Two judges on the same graded variants of one kind (or `all`)."""

    kind: str
    variants: int
    first: Tally
    second: Tally
    only_first_right: int
    only_second_right: int


def pair_records(
    first: AuditRun, second: AuditRun
) -> tuple[list[tuple[AuditRecord, AuditRecord]], int]:
    """Variants both judges graded (same task, kind, epoch and answer text), and how many
    records of either log have no such partner."""

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
    return pairs, unmatched


def paired_rows(pairs: Sequence[tuple[AuditRecord, AuditRecord]]) -> list[PairedRow]:
    kinds = [k for k in KIND_NAMES if any(p[0].kind == k for p in pairs)]
    rows = []
    for kind in [*kinds, "all"]:
        chosen = [p for p in pairs if kind == "all" or p[0].kind == kind]
        only_first = only_second = 0
        for a, b in chosen:
            for cid, built in (a.expected or {}).items():
                a_right = (a.judged or {}).get(cid) == built
                b_right = (b.judged or {}).get(cid) == built
                only_first += a_right and not b_right
                only_second += b_right and not a_right
        rows.append(
            PairedRow(
                kind,
                len(chosen),
                total(a.tally for a, _ in chosen),
                total(b.tally for _, b in chosen),
                only_first,
                only_second,
            )
        )
    return rows


def side_by_side_markdown(first: AuditRun, second: AuditRun) -> str:
    """Both judges' rates on the variants both graded, and who is right where they differ."""
    pairs, unmatched = pair_records(first, second)
    lines = [
        f"## {second.judge} in place of {first.judge}",
        "",
        f"A = {first.judge}, B = {second.judge}: {len(pairs)} variants graded by both "
        f"(identical answers), {unmatched} left out (skipped, ungraded or not in both logs). "
        "Cells are A → B. 'only A right' counts criterion verdicts where A agrees with "
        "construction and B does not; 'only B right' the reverse.",
        "",
    ]
    titles = ["kind", "variants", *RATE_TITLES.values(), "only A right", "only B right"]
    body = []
    for row in paired_rows(pairs):
        a, b = rates_of(row.first), rates_of(row.second)
        cells = [
            f"{_pct(a[n].value)} → {_pct(b[n].value)}" if n in a and n in b else "–" for n in RATES
        ]
        kind = "**all**" if row.kind == "all" else row.kind
        body.append([kind, row.variants, *cells, row.only_first_right, row.only_second_right])
    return "\n".join(lines + table_lines(titles, body))


# ---- output --------------------------------------------------------------------------


def _tally_json(tally: Tally) -> dict[str, Any]:
    rates = {
        name: {
            "errors": r.errors,
            "trials": r.trials,
            "rate": r.value,
            "low": r.low,
            "high": r.high,
        }
        for name, r in rates_of(tally).items()
    }
    return {**tally.as_value(), "rates": rates}


def audit_json(runs: Sequence[AuditRun]) -> dict[str, Any]:
    judges = [
        {
            "judge": run.judge,
            "log": run.path,
            "perturber": run.perturber,
            **{
                f"by_{key}": {label: _tally_json(t) for label, t in groups.items()}
                for key, groups in judge_groups(run).items()
            },
            "by_criterion": [
                {
                    "task_id": row.task_id,
                    "criterion": row.criterion,
                    **{k: v for k, v in _tally_json(row.tally).items() if not k.startswith("item")},
                    "wrong_kinds": list(row.wrong_kinds),
                }
                for row in criterion_rows(run.records)
            ],
            "wrong_verdicts": [vars(w) for w in wrong_verdicts(run.records)],
        }
        for run in runs
    ]
    comparisons = []
    for other in runs[1:]:
        pairs, unmatched = pair_records(runs[0], other)
        comparisons.append(
            {
                "a": runs[0].judge,
                "b": other.judge,
                "unmatched": unmatched,
                "by_kind": {
                    row.kind: {
                        "variants": row.variants,
                        "a": _tally_json(row.first),
                        "b": _tally_json(row.second),
                        "only_a_right": row.only_first_right,
                        "only_b_right": row.only_second_right,
                    }
                    for row in paired_rows(pairs)
                },
            }
        )
    return {"audits": judges, "side_by_side": comparisons}


def audit_markdown(runs: Sequence[AuditRun]) -> str:
    """Tables of each audit log; with two or more, each later judge beside the first."""
    parts = [judge_markdown(run) for run in runs]
    parts += [side_by_side_markdown(runs[0], other) for other in runs[1:]]
    return "\n\n".join(parts) + "\n"


AUDIT_FORMATS = ("md", "json")


def render_audit(paths: Sequence[str | Path], fmt: str) -> str:
    """The audit report of these logs in `md` or `json`."""
    if fmt not in AUDIT_FORMATS:
        raise LogError(f"audit logs are reported as md or json, not {fmt}; use --format md")
    runs = [read_audit_log(p) for p in paths]
    if fmt == "json":
        return json.dumps(audit_json(runs), indent=1, allow_nan=False) + "\n"
    return audit_markdown(runs)
