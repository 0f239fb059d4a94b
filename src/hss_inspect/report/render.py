"""The leaderboard at the edge: report rows as Markdown, CSV, JSON and a self-contained
HTML page.

Rows are the dicts of `tables.leaderboard_row` (rates as fractions); tables show them in
percent, the paper's Table 1 layout, with the best value bold and the second underlined.
The pages' section on what each run cost comes from `bill_render`; the analyses' Markdown
is in `analysis_render`, and their JSON is `json_report`, here.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hss_inspect.core.markdown import html_table, table
from hss_inspect.core.settings import HUMAN_CONDITION
from hss_inspect.report.analysis_render import human_lines
from hss_inspect.report.bill_render import bill_html, bill_lines
from hss_inspect.report.human import STUDY_LABEL, HumanFigures
from hss_inspect.report.log_header import run_label
from hss_inspect.report.numbers import NOT_REPORTED, percent, points
from hss_inspect.report.paper import PublishedRow
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


@dataclass(frozen=True)
class DisplayRow:
    """One line of the Table 1 layout: percent figures, from a log or from the paper."""

    label: str
    judge: str
    source: str  # "log" or "paper"
    kind: str  # model, human or control (a condition other than standard)
    values: dict[str, float | None]  # percent; tokens as counts


@dataclass(frozen=True)
class Board:
    """One leaderboard: the runs of one release (`releases`), headed by what they
    measured; `paper_note` says why the paper's rows are absent when they were asked for."""

    heading: str
    shown: list[DisplayRow]
    rows: list[dict[str, Any]]
    difficulty: Difficulty
    paper: tuple[PublishedRow, ...] = ()
    paper_note: str | None = None
    # the release's task pages (task id -> page) and failure examples, beside report.html
    task_pages: dict[str, str] = field(default_factory=dict)
    examples_page: str | None = None


KIND_OF_CONDITION = {"standard": "model", HUMAN_CONDITION: "human"}
ROW_ORDER = ("human", "model", "control")


def display_rows(
    rows: Sequence[dict[str, Any]], paper: Sequence[PublishedRow] = ()
) -> list[DisplayRow]:
    shown = [
        DisplayRow(
            label=STUDY_LABEL if row["condition"] == HUMAN_CONDITION else _label(row),
            judge=str(row["judge"]),
            source="log",
            kind=KIND_OF_CONDITION.get(row["condition"], "control"),
            values={
                **{c: _percent(row.get(c)) for c in RATE_COLUMNS},
                "ci95": _percent(row.get("ci95")),
                "think_tokens": row.get("think_tokens"),
                "answer_tokens": row.get("answer_tokens"),
            },
        )
        for row in rows
    ]
    # A human study on top, then the models best first, then the controls (blind, oracle),
    # as in the paper's Table 1; the paper's human row beside the study's.
    shown.sort(key=lambda r: (ROW_ORDER.index(r.kind), -(r.values["pass_at_1"] or 0.0)))
    published = [DisplayRow(p.label, "paper", "paper", p.kind, p.values) for p in paper]
    people = sum(r.kind == "human" for r in shown)
    return [
        *shown[:people],
        *(r for r in published if r.kind == "human"),
        *shown[people:],
        *(r for r in published if r.kind != "human"),
    ]


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


def _cells(rows: Sequence[DisplayRow], bold: str, escape: Callable[[str], str]) -> list[list[str]]:
    """The Table 1 cells; the best rate put in `bold` (a format: `**{}**` or `<b>{}</b>`),
    the second underlined (`<u>`, which Markdown keeps as HTML)."""
    marks = {column: ranks_of(rows, column) for column in RATE_COLUMNS}
    table = []
    for i, row in enumerate(rows):
        rates = []
        for column in RATE_COLUMNS:
            text = points(row.values.get(column))
            if column == "pass_at_1" and row.values.get("ci95") is not None:
                text += f" ± {points(row.values['ci95'])}"
            place = marks[column].get(i)
            rates.append(_marked(text, place, bold) if place else text)
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


def _marked(text: str, place: str, bold: str) -> str:
    return bold.format(text) if place == "best" else f"<u>{text}</u>"


def _tokens(value: Any) -> str:
    return NOT_REPORTED if value is None else f"{float(value):,.0f}"


# ---- Markdown -------------------------------------------------------------------------


def markdown_report(
    boards: Sequence[Board],
    notes: Sequence[str] = (),
    cost: dict[str, Any] | None = None,
    studies: Sequence[tuple[str, HumanFigures]] = (),
) -> str:
    """One leaderboard, subdomain table and difficulty list per release, after a note on
    how the releases differ when there are several; then the bill and the studies."""
    parts = [*_notes_lines(notes)]
    for board in boards:
        parts += [
            "## Leaderboard (pass@1, %)",
            "",
            f"Runs of {board.heading}.",
            *([f"The paper's rows are not shown: {board.paper_note}."] if board.paper_note else []),
            "",
            table(TABLE1_HEADER, _cells(board.shown, "**{}**", str)),
            "",
            "Best model value in bold, second underlined; ± is the 95% bootstrap half-width over "
            "tasks; think-tok / ans-tok are mean tokens per attempt (n/r: not reported).",
            "",
            *frames_lines(board.rows),
            "## By subdomain (pass@1, %)",
            "",
            table(*subdomain_cells(board.rows)),
            "",
            "## Item difficulty",
            "",
            *difficulty_lines(board.difficulty),
            "",
        ]
    parts += [
        *([*bill_lines(cost), ""] if cost is not None else []),
        *(line for study in studies for line in [*human_lines(*study), ""]),
    ]
    return "\n".join(parts).rstrip("\n") + "\n"


def _notes_lines(notes: Sequence[str]) -> list[str]:
    if not notes:
        return []
    return [
        "These logs measured different releases: each has its own leaderboard, and no table "
        "ranks runs of two of them.",
        "",
        *(f"- {note}" for note in notes),
        "",
    ]


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
    others = sorted({s for r in rows for s in r["subdomains"]} - set(SUBDOMAIN_LABELS))
    body = [
        [label, *(percent(r["subdomains"].get(label)) for r in rows)]
        for label in (*SUBDOMAIN_LABELS, *others)
        if any(label in r["subdomains"] for r in rows)
    ]
    return header, body


def difficulty_lines(difficulty: Difficulty) -> list[str]:
    def listed(ids: Sequence[str]) -> str:
        return f"{len(ids)}" + (": " + ", ".join(ids) if ids else "")

    return [
        f"Across {difficulty.runs} run(s):",
        "",
        *(f"- {name}: {listed(ids)}" for name, ids in difficulty_lists(difficulty)),
    ]


def difficulty_lists(difficulty: Difficulty) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The item difficulty's three lists of task ids, each with its name."""
    return (
        ("solved by no run in any attempt", difficulty.never_solved),
        ("solved by every run in every attempt", difficulty.always_solved),
        ("attempts disagree within a run", difficulty.attempts_disagree),
    )


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
    "release",
)


def csv_report(boards: Sequence[Board]) -> str:
    """The Table 1 layout as CSV: percent figures (two decimals), tokens as counts, the
    columns in which the row is best or second best among its release's (space-separated),
    and the release the row's run measured."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_HEADER)
    for board in boards:
        rows = board.shown
        marks = {column: ranks_of(rows, column) for column in RATE_COLUMNS}
        for i, row in enumerate(rows):
            places = {column: marks[column].get(i) for column in RATE_COLUMNS}
            writer.writerow(
                [
                    row.source,
                    row.label,
                    row.judge,
                    *(
                        _csv_number(row.values.get(c))
                        for c in ("pass_at_1", "ci95", *GROUP_COLUMNS)
                    ),
                    _csv_number(row.values.get("think_tokens"), 1),
                    _csv_number(row.values.get("answer_tokens"), 1),
                    " ".join(c for c, place in places.items() if place == "best"),
                    " ".join(c for c, place in places.items() if place == "second"),
                    board.heading,
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


REPORT_TITLE = "HSS report"


def html_report(
    boards: Sequence[Board],
    figures: Sequence[dict[str, str]],
    notes: Sequence[str] = (),
    cost: dict[str, Any] | None = None,
) -> str:
    """One self-contained page, a section per release; `figures` holds each release's
    plots, a caption to an inline data: URI. A release's task pages and failure examples,
    where written, are linked from its section (its item difficulty's ids among them)."""
    plotted = figures or [{} for _ in boards]  # no plots without matplotlib
    sections = "".join(
        _board_html(board, plots) for board, plots in zip(boards, plotted, strict=True)
    )
    noted = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
    intro = _notes_lines(notes)[0] if notes else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{REPORT_TITLE}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{REPORT_TITLE}</h1>"
        f"{f'<p>{html.escape(intro)}</p><ul>{noted}</ul>' if notes else ''}"
        f"{sections}"
        f"{'' if cost is None else bill_html(cost)}</body></html>\n"
    )


def _board_html(board: Board, figures: dict[str, str]) -> str:
    rows = board.shown
    leaderboard = html_table(
        TABLE1_HEADER,
        _cells(rows, "<b>{}</b>", html.escape),
        ["paper" if r.source == "paper" else "" for r in rows],
    )
    header, body = subdomain_cells(board.rows)
    sub_table = html_table(header, [[html.escape(c) for c in line] for line in body])
    items = difficulty_html(board.difficulty, board.task_pages)
    plots = "".join(
        f'<figure><img alt="{html.escape(caption)}" src="{uri}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        for caption, uri in figures.items()
    )
    paper = (
        f"<p>The paper's rows are not shown: {html.escape(board.paper_note)}.</p>"
        if board.paper_note
        else ""
    )
    return (
        f"<h2>Leaderboard (pass@1, %)</h2><p class='release'>Runs of "
        f"{html.escape(board.heading)}.</p>{paper}{leaderboard}"
        "<p>Best model value in bold, second underlined; ± is the 95% bootstrap half-width "
        "over tasks; think-tok / ans-tok are mean tokens per attempt (n/r: not reported). "
        "Rows in italics are the paper's published figures.</p>"
        f"<h2>By subdomain (pass@1, %)</h2>{sub_table}"
        f"<h2>Item difficulty</h2><p>Across {board.difficulty.runs} run(s):</p><ul>{items}</ul>"
        f"{_pages_html(board.task_pages, board.examples_page)}"
        f"{'<h2>Plots</h2>' + plots if plots else ''}"
    )


# ---- links to the task pages and the failure examples (`report.pages`) ----------------


def difficulty_html(difficulty: Difficulty, task_pages: Mapping[str, str]) -> str:
    """The item difficulty's lists as HTML items, each id a link to its task's page when
    one was written."""
    return "".join(
        f"<li>{html.escape(name)}: {len(ids)}"
        + (": " + ", ".join(_task_link(i, task_pages) for i in ids) if ids else "")
        + "</li>"
        for name, ids in difficulty_lists(difficulty)
    )


def _task_link(task_id: str, task_pages: Mapping[str, str]) -> str:
    page = task_pages.get(task_id)
    shown = html.escape(task_id)
    return f'<a href="{html.escape(page, quote=True)}">{shown}</a>' if page else shown


def _pages_html(task_pages: Mapping[str, str], examples_page: str | None) -> str:
    if not task_pages and not examples_page:
        return ""
    examples = (
        f'<p><a href="{html.escape(examples_page, quote=True)}">Failure examples</a>: for each '
        "subdomain, the task the most runs failed for the same cause, as the paper's App. E "
        "shows them.</p>"
        if examples_page
        else ""
    )
    tasks = ", ".join(_task_link(t, task_pages) for t in task_pages)
    listed = f"<p>Task pages ({len(task_pages)}): {tasks}</p>" if task_pages else ""
    return f"<h2>Tasks across the runs</h2>{examples}{listed}"
