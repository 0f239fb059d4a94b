"""Tables: Markdown, for the Scoring tab of `inspect view` and for the reports, HTML for
the report's page, and plain columns for the commands' printed figures."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence


def cell(value: object) -> str:
    """A value made safe for one cell: pipes escaped, line breaks joined."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def table_lines(header: Sequence[object], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(cell(c) for c in header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    return "\n".join(table_lines(header, rows))


def html_table(
    header: Sequence[str], body: Sequence[Sequence[str]], classes: Sequence[str] = ()
) -> str:
    """An HTML table: the header escaped here, the cells as given (already HTML), each row
    with its CSS class, if any."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    lines = []
    for i, cells in enumerate(body):
        css = f' class="{classes[i]}"' if i < len(classes) and classes[i] else ""
        lines.append(f"<tr{css}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(lines)}</tbody></table>"


def aligned(rows: list[list[str]]) -> list[str]:
    """Plain-text columns, indented: the first left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  "
        + "  ".join(
            c.rjust(w) if i else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
