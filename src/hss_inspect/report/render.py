"""Renderers at the edge: report rows to Markdown, CSV, JSON and a self-contained HTML page.

Rows are the dicts of `tables.leaderboard_row` (rates as fractions); tables show them in
percent, the paper's Table 1 layout, with the best value bold and the second underlined.
What each run cost is `bill.bill_summary` (dollars; tokens by kind).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hss_inspect.core.markdown import table
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.report.bill import (
    MODEL,
    RECORDED,
    TOKEN_KINDS,
    hour_write_rate,
    shared_names,
)
from hss_inspect.report.log_header import run_label
from hss_inspect.report.numbers import (
    NOT_REPORTED,
    count,
    money,
    percent,
    points,
    signed_money,
    signed_percent,
    signed_points,
    times,
)
from hss_inspect.report.paper import PublishedRow
from hss_inspect.report.sweep import Sweep
from hss_inspect.report.tables import GROUP_COLUMNS, SUBDOMAIN_LABELS, Difficulty

TABLE1_HEADER = (
    "model (effort)",
    "judge",
    "pass@1",
    *GROUP_COLUMNS,
    "think-tok",
    "ans-tok",
)
RATE_COLUMNS = ("pass_at_1", *GROUP_COLUMNS)
Mark = Callable[[str, str], str]  # (text, "best"|"second") -> marked text


@dataclass(frozen=True)
class DisplayRow:
    """One line of the Table 1 layout: percent figures, from a log or from the paper."""

    label: str
    judge: str
    source: str  # "log" or "paper"
    kind: str  # model, human or control (a condition other than standard)
    values: dict[str, float | None]  # percent; tokens as counts


def display_rows(
    rows: Sequence[dict[str, Any]], paper: Sequence[PublishedRow] = ()
) -> list[DisplayRow]:
    shown = [
        DisplayRow(
            label=_label(row),
            judge=str(row["judge"]),
            source="log",
            kind="model" if row["condition"] == "standard" else "control",
            values={
                **{c: _percent(row.get(c)) for c in RATE_COLUMNS},
                "ci95": _percent(row.get("ci95")),
                "think_tokens": row.get("think_tokens"),
                "answer_tokens": row.get("answer_tokens"),
            },
        )
        for row in rows
    ]
    # Models best first, then the controls (blind, oracle), as in the paper's Table 1.
    shown.sort(key=lambda r: (r.kind != "model", -(r.values["pass_at_1"] or 0.0)))
    shown += [DisplayRow(p.label, "paper", "paper", p.kind, p.values) for p in paper]
    return shown


def _label(row: dict[str, Any]) -> str:
    return run_label(row["model"], row.get("reasoning_effort"), row["condition"])


def _percent(value: Any) -> float | None:
    return None if value is None else 100 * float(value)


def ranks_of(rows: Sequence[DisplayRow], column: str) -> dict[int, str]:
    """Row index -> "best"/"second" among model rows (human and controls never ranked)."""
    scored = [
        (row.values[column], i)
        for i, row in enumerate(rows)
        if row.kind == "model" and row.values.get(column) is not None
    ]
    distinct = sorted({round(v or 0.0, 6) for v, _ in scored}, reverse=True)
    marks = {}
    for value, index in scored:
        place = distinct.index(round(value or 0.0, 6))
        if place < 2:
            marks[index] = ("best", "second")[place]
    return marks


def _cells(rows: Sequence[DisplayRow], mark: Mark, escape: Callable[[str], str]) -> list[list[str]]:
    marks = {column: ranks_of(rows, column) for column in RATE_COLUMNS}
    table = []
    for i, row in enumerate(rows):
        rates = []
        for column in RATE_COLUMNS:
            text = points(row.values.get(column))
            if column == "pass_at_1" and row.values.get("ci95") is not None:
                text += f" ± {points(row.values['ci95'])}"
            place = marks[column].get(i)
            rates.append(mark(text, place) if place else text)
        label = escape(row.label) + (" (published)" if row.source == "paper" else "")
        table.append(
            [
                label,
                escape(row.judge),
                *rates,
                _tokens(row.values.get("think_tokens")),
                _tokens(row.values.get("answer_tokens")),
            ]
        )
    return table


def _tokens(value: Any) -> str:
    return NOT_REPORTED if value is None else f"{float(value):,.0f}"


# ---- Markdown -------------------------------------------------------------------------


def _md_mark(text: str, place: str) -> str:
    return f"**{text}**" if place == "best" else f"<u>{text}</u>"


def markdown_report(
    rows: Sequence[DisplayRow],
    subdomains: Sequence[dict[str, Any]],
    difficulty: Difficulty,
    cost: dict[str, Any] | None = None,
) -> str:
    parts = [
        "## Leaderboard (pass@1, %)",
        "",
        table(TABLE1_HEADER, _cells(rows, _md_mark, str)),
        "",
        "Best model value in bold, second underlined; ± is the 95% bootstrap half-width over "
        "tasks; think-tok / ans-tok are mean tokens per attempt (n/r: not reported).",
        "",
        *frames_lines(subdomains),
        "## By subdomain (pass@1, %)",
        "",
        table(*subdomain_cells(subdomains)),
        "",
        "## Item difficulty",
        "",
        *difficulty_lines(difficulty),
        *(["", *bill_lines(cost)] if cost is not None else []),
    ]
    return "\n".join(parts) + "\n"


def frames_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """One line per run whose clips went as frames: the frames each received."""
    lines = []
    for row in rows:
        frames = row.get("frames_received")
        if not frames:
            continue
        fitted = frames["fitted_to_window"]
        fit = f"; {fitted} thinned or shrunk to fit its context window" if fitted else ""
        lines.append(
            f"- {_label(row)}: median {frames['median']:g} (min {frames['min']}, max "
            f"{frames['max']}) over {frames['attempts']} attempt(s){fit}"
        )
    return ["Frames received per clip:", "", *lines, ""] if lines else []


def subdomain_cells(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["subdomain", *(_label(r) for r in rows)]
    body = [
        [label, *(percent(r["subdomains"].get(label)) for r in rows)]
        for label in SUBDOMAIN_LABELS
        if any(label in r["subdomains"] for r in rows)
    ]
    return header, body


def difficulty_lines(difficulty: Difficulty) -> list[str]:
    def listed(ids: Sequence[str]) -> str:
        return f"{len(ids)}" + (": " + ", ".join(ids) if ids else "")

    return [
        f"Across {difficulty.runs} run(s):",
        "",
        f"- solved by no run in any attempt: {listed(difficulty.never_solved)}",
        f"- solved by every run in every attempt: {listed(difficulty.always_solved)}",
        f"- attempts disagree within a run: {listed(difficulty.attempts_disagree)}",
    ]


# ---- what each run cost ---------------------------------------------------------------

BILL_HEADER = (
    "run",
    "who",
    "model",
    "fresh input",
    "cache write",
    "cache read",
    "output",
    "reasoning",
    "bill",
    "caching off",
    "saved",
    "bill / off",
)
_WHO = {MODEL: "model under evaluation", GRADER_ROLE: f"judge ({GRADER_ROLE})"}
BILL_EXPLAINED = (
    "Tokens as Inspect recorded them: fresh input leaves out the cache's tokens, output "
    "includes reasoning, n/r: the provider reported none. Bill: at the price named below; "
    "caching off: the same tokens with every input token at the plain input price; saved: "
    "caching off less the bill; bill / off: the bill as a share of caching off."
)


def bill_cells(cost: dict[str, Any]) -> list[list[str]]:
    """A line per run and party, a total per run of several parties, a total of all."""
    lines = []
    for run in cost["runs"]:
        parties = [p for p in cost["parties"] if p["log"] == run["log"]]
        found = [_bill_line(_who(p), p["model"], p) for p in parties]
        if len(parties) > 1:
            found.append(_bill_line("total", "", run))
        lines += [[run["name"] if i == 0 else "", *line] for i, line in enumerate(found)]
    if len(cost["runs"]) > 1:
        lines.append(["all runs", *_bill_line("total", "", cost["total"])])
    return lines


def _who(party: dict[str, Any]) -> str:
    return _WHO.get(party["who"], str(party["who"]))


def _bill_line(who: str, model: str, figures: dict[str, Any]) -> list[str]:
    tokens = figures["tokens"]
    return [
        who,
        model,
        *(count(tokens[kind]) for kind in TOKEN_KINDS),
        money(figures["dollars"]),
        money(figures["caching_off"]),
        signed_money(figures["saved"]),
        times(figures["ratio"]),
    ]


def bill_notes(cost: dict[str, Any]) -> list[str]:
    """The logs of runs that share a label, where each price came from, the 1-hour
    writes, the batch discounts, the prices missing, and where Inspect recorded another
    figure; one a line."""
    shared = shared_names(cost["runs"])
    notes = [f"runs: {', '.join(shared)}"] if shared else []
    sources = [
        f"{p['model']}: {_source_text(p['price_source'])}"
        for p in cost["parties"]
        if p["price_source"]
    ]
    notes += sources
    for p in cost["parties"]:
        notes += _party_notes(p, f"{p['name']}, {_who(p)}")
    return list(dict.fromkeys([*notes, *cost["missing"]]))


def _source_text(source: str) -> str:
    return source if source == RECORDED else f"at the prices of {source}"


def _party_notes(p: dict[str, Any], whose: str) -> list[str]:
    notes = []
    if p["written_1h"]:
        notes.append(
            f"{whose}: {p['written_1h']:,} cache-write tokens written at the 1-hour TTL, "
            f"billed at {hour_write_rate(p['model']):g}x the 5-minute write price"
        )
    if p["batch_discount"] is not None:
        notes.append(f"{whose}: run in batch mode, billed at {p['batch_discount']:g}x list prices")
    if _recorded_differs(p):
        notes.append(
            f"{whose}: Inspect recorded {money(p['recorded_cost'])} at the prices the run was given"
        )
    return notes


def _recorded_differs(p: dict[str, Any]) -> bool:
    """Inspect's recorded cost is not the list-price bill (other prices at run time)."""
    recorded, listed = p["recorded_cost"], p["listed"]
    if p["price_source"] == RECORDED or recorded is None or listed is None:
        return False
    return not math.isclose(recorded, listed, rel_tol=1e-9, abs_tol=1e-12)


def model_bill_cells(cost: dict[str, Any]) -> list[list[str]]:
    """A line per model over all runs (none for a single run: its lines say it all)."""
    if len(cost["runs"]) < 2:
        return []
    return [
        _bill_line(", ".join(_WHO.get(w, w) for w in m["who"]), m["model"], m)
        for m in cost["models"]
    ]


def bill_lines(cost: dict[str, Any]) -> list[str]:
    """The report's section on what each run cost."""
    if not cost["parties"]:
        return ["## What each run cost", "", "The logs record no model usage."]
    by_model = model_bill_cells(cost)
    return [
        "## What each run cost",
        "",
        table(BILL_HEADER, bill_cells(cost)),
        "",
        *(
            ["By model, over all runs:", "", table(BILL_HEADER[1:], by_model), ""]
            if by_model
            else []
        ),
        BILL_EXPLAINED,
        "",
        *(f"- {note}" for note in bill_notes(cost)),
    ]


BILL_CSV_HEADER = (
    "log",
    "run",
    "who",
    "model",
    *TOKEN_KINDS,
    "written_1h",
    "batched",
    "batch_discount",
    "price_source",
    "dollars",
    "caching_off",
    "saved",
    "ratio",
    "recorded_cost",
    "missing",
)


def bill_csv(cost: dict[str, Any]) -> str:
    """A line per run and party: tokens by kind, the prices' source, dollars (empty: not
    reported or not known)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(BILL_CSV_HEADER)
    for p in cost["parties"]:
        values = {**p, **p["tokens"]}
        writer.writerow(["" if values[key] is None else values[key] for key in BILL_CSV_HEADER])
    return out.getvalue()


# ---- CSV and JSON ---------------------------------------------------------------------


CSV_HEADER = (
    "source",
    "model (effort)",
    "judge",
    "pass@1",
    "ci95",
    *GROUP_COLUMNS,
    "think-tok",
    "ans-tok",
    "best",
    "second",
)


def csv_report(rows: Sequence[DisplayRow]) -> str:
    """The Table 1 layout as CSV: percent figures (two decimals), tokens as counts, and
    the columns in which the row is best or second best (space-separated)."""
    marks = {column: ranks_of(rows, column) for column in RATE_COLUMNS}
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_HEADER)
    for i, row in enumerate(rows):
        places = {column: marks[column].get(i) for column in RATE_COLUMNS}
        writer.writerow(
            [
                row.source,
                row.label,
                row.judge,
                *(_csv_number(row.values.get(c)) for c in ("pass_at_1", "ci95", *GROUP_COLUMNS)),
                _csv_number(row.values.get("think_tokens"), 1),
                _csv_number(row.values.get("answer_tokens"), 1),
                " ".join(c for c, place in places.items() if place == "best"),
                " ".join(c for c, place in places.items() if place == "second"),
            ]
        )
    return out.getvalue()


def subdomain_csv(rows: Sequence[dict[str, Any]]) -> str:
    header, body = subdomain_cells(rows)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for line in body:
        writer.writerow([line[0], *(c if c != "—" else "" for c in line[1:])])
    return out.getvalue()


def _csv_number(value: float | None, digits: int = 2) -> str:
    return "" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def json_report(payload: dict[str, Any]) -> str:
    return json.dumps(payload, indent=2, default=_json_default, allow_nan=False) + "\n"


def _json_default(value: Any) -> Any:
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def clean_nan(value: Any) -> Any:
    """NaN (undefined, e.g. a kappa with no variation) as JSON null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: clean_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_nan(v) for v in value]
    return value


# ---- HTML -----------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border-bottom:1px solid #ddd;padding:.3rem .6rem;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
tr.paper td{color:#666;font-style:italic}
u{text-decoration-thickness:2px}
figure{margin:1rem 0}figure img{max-width:100%;border:1px solid #eee}
"""


def _html_table(
    header: Sequence[str], body: Sequence[Sequence[str]], classes: Sequence[str] = ()
) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    lines = []
    for i, cells in enumerate(body):
        css = f' class="{classes[i]}"' if i < len(classes) and classes[i] else ""
        lines.append(f"<tr{css}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def _html_mark(text: str, place: str) -> str:
    return f"<b>{text}</b>" if place == "best" else f"<u>{text}</u>"


def html_report(
    rows: Sequence[DisplayRow],
    subdomains: Sequence[dict[str, Any]],
    difficulty: Difficulty,
    figures: dict[str, str],
    title: str = "HSS report",
    cost: dict[str, Any] | None = None,
) -> str:
    """One self-contained page; `figures` maps a caption to an inline data: URI."""
    leaderboard = _html_table(
        TABLE1_HEADER,
        _cells(rows, _html_mark, html.escape),
        ["paper" if r.source == "paper" else "" for r in rows],
    )
    header, body = subdomain_cells(subdomains)
    sub_table = _html_table(header, [[html.escape(c) for c in line] for line in body])
    items = "".join(
        f"<li>{html.escape(line[2:])}</li>" for line in difficulty_lines(difficulty)[2:]
    )
    plots = "".join(
        f'<figure><img alt="{html.escape(caption)}" src="{uri}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        for caption, uri in figures.items()
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<h2>Leaderboard (pass@1, %)</h2>{leaderboard}"
        "<p>Best model value in bold, second underlined; ± is the 95% bootstrap half-width "
        "over tasks; think-tok / ans-tok are mean tokens per attempt (n/r: not reported). "
        "Rows in italics are the paper's published figures.</p>"
        f"<h2>By subdomain (pass@1, %)</h2>{sub_table}"
        f"<h2>Item difficulty</h2><p>Across {difficulty.runs} run(s):</p><ul>{items}</ul>"
        f"{'' if cost is None else _html_bill(cost)}"
        f"{'<h2>Plots</h2>' + plots if plots else ''}</body></html>\n"
    )


def _html_bill(cost: dict[str, Any]) -> str:
    if not cost["parties"]:
        return "<h2>What each run cost</h2><p>The logs record no model usage.</p>"
    cells = [[html.escape(c) for c in line] for line in bill_cells(cost)]
    by_model = [[html.escape(c) for c in line] for line in model_bill_cells(cost)]
    models = f"<p>By model, over all runs:</p>{_html_table(BILL_HEADER[1:], by_model)}"
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in bill_notes(cost))
    return (
        f"<h2>What each run cost</h2>{_html_table(BILL_HEADER, cells)}"
        f"{models if by_model else ''}<p>{html.escape(BILL_EXPLAINED)}</p><ul>{notes}</ul>"
    )


# ---- sweep, agreement, comparison -------------------------------------------------------


def sweep_markdown(sweep: Sweep) -> str:
    header = ["model", "group", *sweep.levels, "Δ last − first"]
    body = [
        [
            row.model,
            row.group,
            *(percent(row.values[level]) for level in sweep.levels),
            signed_percent(row.delta),
        ]
        for row in sweep.rows
    ]
    title = "reasoning effort" if sweep.kind == "effort" else "frame budget"
    return f"## Sweep over {title} (pass@1, %)\n\n{table(header, body)}\n"


def agreement_markdown(alignment: dict[str, Any]) -> str:
    pairs = [
        [
            p["a"],
            p["b"],
            percent(p["criterion_agreement"]),
            _kappa(p["criterion_kappa"]),
            str(p["n_criteria"]),
            percent(p["item_agreement"]),
            _kappa(p["item_kappa"]),
            str(p["n_items"]),
        ]
        for p in alignment["pairs"]
    ]
    header = ["judge A", "judge B", "criterion agr. %", "criterion κ", "criteria"]
    header += ["item agr. %", "item κ", "items"]
    judges = alignment["judges"]
    scores = [
        [model, *(points(per_judge.get(j)) for j in judges)]
        for model, per_judge in sorted(alignment["model_scores"].items())
    ]
    lenient = [[j, signed_points(alignment["leniency"][j])] for j in judges]
    parts = [
        "## Judge agreement",
        "",
        table(header, pairs),
        "",
        "## pass@1 (%) by judge",
        "",
        table(["model", *judges], scores),
        "",
        "## Leniency (points above the mean of the other judges)",
        "",
        table(["judge", "leniency"], lenient),
    ]
    if alignment["correlations"]:
        corr = [
            [c["a"], c["b"], str(c["n_models"]), _kappa(c["spearman"]), _kappa(c["pearson"])]
            for c in alignment["correlations"]
        ]
        parts += ["", "## Correlation of per-model scores", ""]
        parts.append(table(["judge A", "judge B", "models", "Spearman ρ", "Pearson r"], corr))
    if alignment["self_preference"]:
        own = [
            [s["judge"], s["model"], signed_points(s["residual"])]
            for s in alignment["self_preference"]
        ]
        parts += ["", "## Same-vendor residuals (points, after leniency)", ""]
        parts.append(table(["judge", "model", "residual"], own))
    return "\n".join(parts) + "\n"


def _kappa(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def compare_markdown(result: dict[str, Any]) -> str:
    header = ["group", "tasks", "A %", "B %", "Δ B−A", "A only", "B only", "McNemar p"]

    def line(name: str, s: dict[str, Any]) -> list[str]:
        return [
            name,
            str(s["n_tasks"]),
            percent(s["a_pass"]),
            percent(s["b_pass"]),
            signed_percent(s["delta"]),
            str(s["a_only"]),
            str(s["b_only"]),
            f"{s['mcnemar_p']:.3g}",
        ]

    body = [line("all", result)]
    body += [line(name, s) for name, s in result["by_domain"].items()]
    body += [line(name, s) for name, s in result["by_subdomain"].items()]
    return (
        f"## Paired comparison, first attempts\n\nA: {result['a']} ({result['a_log']})  \n"
        f"B: {result['b']} ({result['b_log']})\n\n{table(header, body)}\n\n"
        f"{result['unpaired_tasks']} shared task(s) left out: first attempt not graded.\n"
    )
