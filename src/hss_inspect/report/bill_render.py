"""What each run cost, rendered: the report's Markdown section, its HTML section and the
CSV of `bill.bill_summary` (dollars; tokens by kind), a line per run and party."""

from __future__ import annotations

import csv
import html
import io
import math
from typing import Any

from hss_inspect.core.markdown import html_table, table
from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.report.bill import (
    MODEL,
    RECORDED,
    TOKEN_KINDS,
    hour_write_rate,
    shared_names,
)
from hss_inspect.report.numbers import count, money, signed_money, times

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


def bill_html(cost: dict[str, Any]) -> str:
    """The HTML page's section on what each run cost."""
    if not cost["parties"]:
        return "<h2>What each run cost</h2><p>The logs record no model usage.</p>"
    cells = [[html.escape(c) for c in line] for line in bill_cells(cost)]
    by_model = [[html.escape(c) for c in line] for line in model_bill_cells(cost)]
    models = f"<p>By model, over all runs:</p>{html_table(BILL_HEADER[1:], by_model)}"
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in bill_notes(cost))
    return (
        f"<h2>What each run cost</h2>{html_table(BILL_HEADER, cells)}"
        f"{models if by_model else ''}<p>{html.escape(BILL_EXPLAINED)}</p><ul>{notes}</ul>"
    )
