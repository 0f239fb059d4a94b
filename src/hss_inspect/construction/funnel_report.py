"""A build's funnel as Markdown, JSON or an HTML page with a Fig. 8 style plot (an inline SVG,
no plotting library), beside the paper's own funnel (Sec. 2.4: 3,466 authored, 522 admitted)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from html import escape

from hss_inspect.construction.consensus import (
    TASK_HEADER,
    BlindMeasure,
    baseline_record,
    card_lines,
    overall_line,
    task_rows,
    totals,
    without_consensus,
)
from hss_inspect.construction.funnel import AUTHOR_COUNTS, REVIEWER_COUNTS, Funnel, PersonCounts
from hss_inspect.construction.rules import rules
from hss_inspect.core.markdown import html_table, table
from hss_inspect.providers.paper_models import construction_funnel

FORMATS = ("md", "json", "html")


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def minutes(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def reason_label(key: str) -> str:
    found = rules().reason(key)
    return found.label if found else (key or "(no reason)")


def stage_rows(f: Funnel) -> list[list[str]]:
    """Authored, then each round: survivors, net drops, waiting, edits; the paper beside."""
    paper_authored, paper_after = construction_funnel()
    rows = [["authored", f"{f.authored:,}", percent(f.authored, f.authored), "", "", ""]]
    rows[0].append(f"{paper_authored:,} (100.0%)")
    for r in f.rounds:
        paper = paper_after[r.round - 1] if r.round <= len(paper_after) else None
        rows.append(
            [
                f"after round {r.round}",
                f"{r.survivors:,}",
                percent(r.survivors, f.authored),
                f"{r.dropped:,}",
                f"{r.waiting:,}",
                f"{r.edits:,}",
                "" if paper is None else f"{paper:,} ({percent(paper, paper_authored)})",
            ]
        )
    return rows


STAGE_HEADER = [
    "stage",
    "tasks",
    "of authored",
    "dropped here (net)",
    "waiting here",
    "edits given",
    "paper (Fig. 8)",
]


def reason_rows(f: Funnel) -> list[list[str]]:
    keys = [r.key for r in rules().drop_reasons]
    keys += sorted({k for r in f.rounds for k in r.drop_reasons if k not in keys})
    return [
        [reason_label(key), *[str(r.drop_reasons.get(key, 0)) for r in f.rounds]]
        for key in keys
        if any(r.drop_reasons.get(key) for r in f.rounds)
    ]


def people_rows(
    people: Sequence[PersonCounts], names: Sequence[str], yields: bool = False
) -> list[list[str]]:
    """A row a person: their counts, their yield (authors), their median minutes."""
    return [
        [
            p.name,
            *(str(p.counts[n]) for n in names),
            *([percent(p.counts["admitted"], p.counts["authored"])] if yields else []),
            minutes(p.median_minutes),
        ]
        for p in people
    ]


AUTHOR_HEADER = ["author", *AUTHOR_COUNTS, "yield", "median min / task"]
REVIEWER_HEADER = ["reviewer", *REVIEWER_COUNTS, "median min / review"]


def author_rows(f: Funnel) -> list[list[str]]:
    return people_rows(f.authors, AUTHOR_COUNTS, yields=True)


def reviewer_rows(f: Funnel) -> list[list[str]]:
    return people_rows(f.reviewers, REVIEWER_COUNTS)


def summary_line(f: Funnel) -> str:
    paper_authored, paper_after = construction_funnel()
    return (
        f"Yield: {f.admitted:,} admitted of {f.authored:,} authored "
        f"({percent(f.admitted, f.authored)}); the paper: {paper_after[-1]:,} of "
        f"{paper_authored:,} ({percent(paper_after[-1], paper_authored)}). "
        f"{sum(r.edits for r in f.rounds):,} edit verdict(s), {f.reentries:,} revision(s) "
        f"submitted again, {f.in_revision:,} task(s) back with their authors now, "
        f"{f.drafts:,} draft(s) not yet submitted. Median minutes: "
        f"{minutes(f.authoring_minutes)} authoring a revision, {minutes(f.review_minutes)} "
        "a review."
    )


BLIND_HEADING = "Blind answers: principle 3 measured (Sec. 2.3)"


def blind_markdown(measure: BlindMeasure | None) -> list[str]:
    """The section of a build that asks for blind answers (none otherwise): the answers
    per task, then the card's lines (the human baseline, the tasks without consensus)."""
    if measure is None:
        return []
    answers = measure.tasks
    rows = table(TASK_HEADER, task_rows(answers)) if answers else "No blind answer yet."
    return [f"## {BLIND_HEADING}", overall_line(answers), rows, *card_lines(measure)]


def blind_json(measure: BlindMeasure | None) -> dict[str, object]:
    if measure is None:
        return {}
    every = totals(measure.tasks)
    return {
        "blind_answers": {
            "answers": every.answers, "graded": every.graded, "met": every.met,
            "tasks": [asdict(t) for t in measure.tasks],
            "admitted_without_consensus": [t.task_id for t in without_consensus(measure.tasks)],
            "human_baseline": baseline_record(measure.baseline),
        }
    }  # fmt: skip


def blind_html(measure: BlindMeasure | None) -> list[str]:
    if measure is None:
        return []
    rows = [[escape(c) for c in row] for row in task_rows(measure.tasks)]
    return [
        f"<h2>{escape(BLIND_HEADING)}</h2><p>{escape(overall_line(measure.tasks))}</p>",
        html_table(TASK_HEADER, rows),
        *(f"<p>{escape(line)}</p>" for line in card_lines(measure)),
    ]


def markdown(f: Funnel, title: str, measure: BlindMeasure | None = None) -> str:
    parts = [
        f"# {title}",
        table(STAGE_HEADER, stage_rows(f)),
        summary_line(f),
        "## Net drops by reason and round",
        table(["reason", *[f"round {r.round}" for r in f.rounds]], reason_rows(f))
        if reason_rows(f)
        else "No task dropped.",
        "## Authors",
        table(AUTHOR_HEADER, author_rows(f)),
        "## Reviewers",
        table(REVIEWER_HEADER, reviewer_rows(f)),
        *blind_markdown(measure),
    ]
    return "\n\n".join(parts) + "\n"


def as_json(f: Funnel, title: str, measure: BlindMeasure | None = None) -> str:
    paper_authored, paper_after = construction_funnel()
    payload = {
        "title": title,
        **asdict(f),
        "yield": f.yield_share,
        "paper": {"authored": paper_authored, "after_rounds": list(paper_after)},
        **blind_json(measure),
    }
    return json.dumps(payload, indent=2) + "\n"


def html_page(f: Funnel, title: str, measure: BlindMeasure | None = None) -> str:
    tables = [
        html_table(STAGE_HEADER, [[escape(c) for c in row] for row in stage_rows(f)]),
        f"<p>{escape(summary_line(f))}</p>",
        "<h2>Net drops by reason and round</h2>",
        html_table(
            ["reason", *[f"round {r.round}" for r in f.rounds]],
            [[escape(c) for c in row] for row in reason_rows(f)],
        ),
        "<h2>Authors</h2>",
        html_table(AUTHOR_HEADER, [[escape(c) for c in row] for row in author_rows(f)]),
        "<h2>Reviewers</h2>",
        html_table(REVIEWER_HEADER, [[escape(c) for c in row] for row in reviewer_rows(f)]),
        *blind_html(measure),
    ]
    style = (
        "body{font:15px/1.45 system-ui,sans-serif;max-width:64rem;margin:1rem auto;padding:0 1rem}"
        "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;"
        "padding:.2rem .5rem;text-align:right}td:first-child,th:first-child{text-align:left}"
    )
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{style}</style></head><body><h1>{escape(title)}</h1>"
        f"{funnel_svg(f)}{''.join(tables)}</body></html>\n"
    )


BAR_WIDTH, BAR_HEIGHT, GAP, LEFT = 520, 34, 22, 150


def funnel_svg(f: Funnel) -> str:
    """Fig. 8's shape: a bar per stage (authored, then the survivors of each round), each
    round's net drops and waiting tasks beside it, the paper's share as a tick."""
    paper_authored, paper_after = construction_funnel()
    stages = [("Authored", f.authored, 1.0, "")]
    for r in f.rounds:
        paper = paper_after[r.round - 1] / paper_authored if r.round <= len(paper_after) else 0
        note = f"dropped {r.dropped}, waiting {r.waiting}, edits {r.edits}"
        stages.append((f"After round {r.round}", r.survivors, paper, note))
    height = len(stages) * (BAR_HEIGHT + GAP) + GAP
    parts = [
        f'<svg role=img aria-label="funnel" xmlns="http://www.w3.org/2000/svg" '
        f'width="{LEFT + BAR_WIDTH + 260}" height="{height}" font-size="13">'
    ]
    for n, (label, count, paper_share, note) in enumerate(stages):
        y = GAP + n * (BAR_HEIGHT + GAP)
        width = BAR_WIDTH * count / f.authored if f.authored else 0
        x = LEFT + (BAR_WIDTH - width) / 2
        tick = LEFT + BAR_WIDTH * (1 + paper_share) / 2
        parts += [
            f'<text x="{LEFT - 8}" y="{y + 22}" text-anchor="end">{escape(label)}</text>',
            f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{BAR_HEIGHT}" fill="#4a78b5"/>',
            f'<text x="{LEFT + BAR_WIDTH / 2}" y="{y + 22}" text-anchor="middle" '
            f'fill="#fff" stroke="#234" stroke-width="0.3">{count:,}</text>',
            f'<line x1="{tick:.1f}" x2="{tick:.1f}" y1="{y - 3}" y2="{y + BAR_HEIGHT + 3}" '
            'stroke="#c0392b" stroke-width="2"><title>the paper</title></line>',
            f'<text x="{LEFT + BAR_WIDTH + 10}" y="{y + 22}" fill="#555">{escape(note)}</text>',
        ]
    parts.append(
        f'<text x="{LEFT}" y="{height - 4}" fill="#c0392b">| the paper\'s share of authored '
        f"tasks at each stage (Fig. 8: {paper_authored:,} authored)</text></svg>"
    )
    return "".join(parts)


def render(f: Funnel, fmt: str, title: str, measure: BlindMeasure | None = None) -> str:
    """The funnel in `fmt`; with `measure` (a build that asks for blind answers), how many
    met the rubric, per task and overall, and the split's human baseline."""
    return {"md": markdown, "json": as_json, "html": html_page}[fmt](f, title, measure)
