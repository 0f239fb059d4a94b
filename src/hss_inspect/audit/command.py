"""`hss-inspect audit LOG [LOG ...]`: the audit tables of judge-audit logs."""

from __future__ import annotations

import argparse
from pathlib import Path

from hss_inspect.audit.report import audit_report


def add_audit_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    audit = commands.add_parser(
        "audit",
        help="tables of hss_judge_audit logs; with two or more, each judge beside the first",
    )
    audit.add_argument("logs", nargs="+", type=Path, help="logs of hss_inspect/hss_judge_audit")
    audit.add_argument(
        "--max-errors", type=int, default=50, help="rows of the list of wrong verdicts per judge"
    )
    audit.add_argument("--out", type=Path, help="write the markdown here instead of printing it")


def audit_command(args: argparse.Namespace) -> int:
    missing = [str(p) for p in args.logs if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"no such log: {', '.join(missing)}")
    text = audit_report(args.logs, max_errors=args.max_errors)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
        print(f"audit tables of {len(args.logs)} log(s) -> {args.out}")
    else:
        print(text, end="")
    return 0
