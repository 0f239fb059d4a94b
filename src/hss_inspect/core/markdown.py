"""Tables: Markdown, for the Scoring tab of `inspect view` and for the reports, and plain
columns for the commands' printed figures."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def cell(value: object) -> str:
    """A value made safe for one cell: pipes escaped, line breaks joined."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def table_lines(header: Sequence[object], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(cell(c) for c in header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def table(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    return "\n".join(table_lines(header, rows))


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
