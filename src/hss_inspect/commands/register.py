"""`hss-inspect register`: the Inspect Evals register's entry for HSS (`register/hss/eval.yaml`),
or for another dataset in its format the logs ran on, with an evaluation report made from the
logs given (hss_inspect.report.register_entry)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from hss_inspect.audit.report import is_audit_log
from hss_inspect.core.config import eval_metadata
from hss_inspect.core.errors import InputError
from hss_inspect.report.logs import find_logs
from hss_inspect.report.records import read_logs
from hss_inspect.report.register import results
from hss_inspect.report.register_entry import register_entry, select, source
from hss_inspect.report.releases import require_one_release
from hss_inspect.report.render import clean_nan
from hss_inspect.report.tables import leaderboard_row, primary_runs, runs_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", help=".eval/.json logs or folders of them")
    parser.add_argument(
        "--repository-url",
        required=True,
        metavar="URL",
        help="the repository the register points to, e.g. https://github.com/OWNER/hss-inspect",
    )
    parser.add_argument(
        "--repository-commit",
        required=True,
        metavar="SHA",
        help="the commit of that repository the register pins (40 hex digits)",
    )
    parser.add_argument(
        "--report-commit",
        metavar="SHA",
        help="the commit the runs were made with, when not the pinned one (default: the same)",
    )
    parser.add_argument(
        "--maintainer",
        action="append",
        default=[],
        metavar="NAME",
        help="a GitHub user who maintains the eval (repeatable; default: the repository's owner)",
    )
    parser.add_argument(
        "--gated",
        choices=("auto", "manual"),
        help="the dataset's hub repo is gated (users ask for access, approved automatically or "
        "by hand): said in the entry's asset (read by inspect-evals 0.28 and later)",
    )
    parser.add_argument("--out", type=Path, help="write the entry to this file (eval.yaml)")


def run(args: argparse.Namespace) -> int:
    where = source(args.repository_url, args.repository_commit, args.report_commit, args.maintainer)
    paths = find_logs(args.logs)
    audits = [p for p in paths if is_audit_log(p)]
    for path in audits:
        print(f"hss-inspect register: {path}: a judge-audit log; left out", file=sys.stderr)
    infos, records = read_logs([p for p in paths if p not in audits])
    require_one_release(infos, "the register's entry")
    rows = [clean_nan(leaderboard_row(run)) for run in primary_runs(runs_of(records))]
    version = str(eval_metadata()["version"])
    chosen = select(results(infos, rows), version)
    for line in chosen.left_out:
        print(f"hss-inspect register: {line}", file=sys.stderr)
    if not chosen.results:
        raise InputError(
            "none of the logs gives a result (a finished run under the standard "
            "condition); the lines above say why each was left out"
        )
    entry = register_entry(chosen.results, where, version, args.gated)
    text = yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=100)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"hss-inspect register: wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
