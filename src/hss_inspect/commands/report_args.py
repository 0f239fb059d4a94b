"""The command-line options of `report`, `agreement` and `compare` (no heavy imports, so
`hss-inspect` starts fast; the work is in `hss_inspect.commands.report`)."""

from __future__ import annotations

import argparse
from pathlib import Path

SWEEPS: tuple[str, ...] = ("effort", "frames")
REPORT_COMMANDS: tuple[str, ...] = ("report", "agreement", "compare", "failures")
FORMATS = ("md", "csv", "json", "html")


def add_parsers(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    report = commands.add_parser(
        "report", help="the paper's tables and plots from Inspect logs (files or folders)"
    )
    report.add_argument("logs", nargs="+", help=".eval/.json logs or folders of them")
    report.add_argument("--format", choices=FORMATS, default="md", help="what to print")
    report.add_argument("--out", type=Path, help="also write every format and the plots here")
    report.add_argument(
        "--with-paper", action="store_true", help="add the paper's published Table 1 rows"
    )
    report.add_argument("--sweep", choices=SWEEPS, help="a sweep table over effort or frames")
    agreement = commands.add_parser(
        "agreement", help="agreement of judges that graded the same answers"
    )
    agreement.add_argument("logs", nargs="+")
    agreement.add_argument("--format", choices=("md", "json"), default="md")
    agreement.add_argument("--out", type=Path, help="write agreement.json and scatter plots here")
    compare = commands.add_parser(
        "compare", help="paired comparison of two logs on shared tasks, first attempts"
    )
    compare.add_argument("log_a")
    compare.add_argument("log_b")
    compare.add_argument("--format", choices=("md", "json"), default="md")
    failures = commands.add_parser(
        "failures",
        help="failure causes (needs failure_cause labels) and agentic against single-call",
    )
    failures.add_argument("logs", nargs="+", help=".eval/.json logs or folders of them")
    failures.add_argument("--format", choices=("md", "json"), default="md")
