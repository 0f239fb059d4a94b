"""`hss-inspect register`: the Inspect Evals register's entry for HSS (`register/hss/eval.yaml`),
or for another dataset in its format the logs ran on, with an evaluation report made from the
logs given (hss_inspect.report.register_entry); for another dataset, also the task file the
entry points at (`--task-file`), for the user to commit."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

from hss_inspect.audit.report import is_audit_log
from hss_inspect.core.config import eval_metadata
from hss_inspect.core.errors import InputError
from hss_inspect.report.logs import find_logs
from hss_inspect.report.records import read_logs
from hss_inspect.report.register import results
from hss_inspect.report.register_entry import (
    WRITTEN_BY,
    SplitTask,
    register_entry,
    select,
    source,
    split_task,
)
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
    parser.add_argument(
        "--task-file",
        metavar="PATH",
        help="a dataset other than ScaleAI/HSS: write its task here (a .py file, from the "
        "repository's root, where the command is run), the entry's task_path, to commit to "
        "that repository",
    )
    parser.add_argument("--out", type=Path, help="write the entry to this file (eval.yaml)")


def run(args: argparse.Namespace) -> int:
    where = source(args.repository_url, args.repository_commit, args.report_commit, args.maintainer)
    paths = find_logs(args.logs)
    audits = [p for p in paths if is_audit_log(p)]
    for path in audits:
        print(f"hss-inspect register: {path}: a judge-audit log; left out", file=sys.stderr)
    infos, records = read_logs([p for p in paths if p not in audits])
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
    split = split_task(chosen.results, args.task_file)
    require_one_release([r.info for r in chosen.results], "the register's entry")
    entry = register_entry(chosen.results, where, version, args.gated, split)
    text = yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=100)
    if split is not None:
        write_task_file(split, where.repository_url, where.repository_commit)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"hss-inspect register: wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def write_task_file(split: SplitTask, url: str, commit: str) -> None:
    """The split's task file at its path (a file this command did not write is kept), and
    a line saying whether the pinned commit holds it as written."""
    path, text = Path(split.path), split.text()
    if path.exists() and WRITTEN_BY not in path.read_text(encoding="utf-8", errors="replace"):
        raise InputError(
            f"--task-file {split.path}: the file exists and was not written by hss-inspect "
            "register; give the path of a new file"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    said = f"hss-inspect register: wrote {split.path}, the task {split.name} ({split.run_form})"
    if committed(split.path, commit) == text:
        print(f"{said}; commit {commit[:12]} holds it as written", file=sys.stderr)
    else:
        print(
            f"{said}; commit it to {url} and give that commit as --repository-commit: the "
            "register reads the task at the commit the entry pins",
            file=sys.stderr,
        )


def committed(path: str, commit: str) -> str | None:
    """The file at `commit` of the git repository here (None: no git, no such commit or
    no such file there)."""
    try:
        done = subprocess.run(
            ["git", "show", f"{commit}:{path}"], capture_output=True, text=True, timeout=60
        )
    except OSError:  # no git program
        return None
    return done.stdout if done.returncode == 0 else None
