"""Markdown tables, for the Scoring tab of `inspect view` and for the reports."""

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
