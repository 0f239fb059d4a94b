"""`hss-inspect report` (also `--format register`, the register's Evaluation Report, and
`--format hf-eval-results`, the hub's eval results),
`agreement`, `compare` and `failures`: read logs, compute, render. The report's bill
finds each model's price as the estimate does (`providers.price_lookup`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import yaml

from hss_inspect.audit.report import is_audit_log, render_audit
from hss_inspect.commands.arguments import add_cost_config_argument, named_pairs
from hss_inspect.core.errors import InputError
from hss_inspect.data.fingerprints import diff_prints
from hss_inspect.grading.causes import taxonomy
from hss_inspect.providers.price_lookup import inspect_pricing, load_cost_config
from hss_inspect.providers.prices import priced_by_name
from hss_inspect.report import plots
from hss_inspect.report.agreement import judge_alignment
from hss_inspect.report.analysis_render import agreement_markdown, compare_markdown, sweep_markdown
from hss_inspect.report.bill import PartyBill, bill_summary, party_bill
from hss_inspect.report.bill_render import bill_csv
from hss_inspect.report.compare import compare_runs
from hss_inspect.report.failure_render import failures_markdown
from hss_inspect.report.failures import failure_analysis
from hss_inspect.report.hub_results import hub_results
from hss_inspect.report.human import human_studies, studies_json
from hss_inspect.report.log_header import LogInfo
from hss_inspect.report.logs import DamagedLog, LogError, find_logs
from hss_inspect.report.paper import published_rows
from hss_inspect.report.records import read_logs, readable_headers
from hss_inspect.report.register import check_paper_names, register_markdown, results
from hss_inspect.report.releases import (
    Release,
    difference,
    paper_comparable,
    release_diff_line,
    releases_of,
    require_one_release,
    version_n,
)
from hss_inspect.report.render import (
    Board,
    clean_nan,
    csv_report,
    display_rows,
    html_report,
    json_report,
    markdown_report,
    subdomain_csv,
)
from hss_inspect.report.sweep import build_sweep
from hss_inspect.report.tables import Run, item_difficulty, leaderboard_row, primary_runs, runs_of

SWEEPS: tuple[str, ...] = ("effort", "frames")
FORMATS = ("md", "csv", "json", "html")
REGISTER = "register"  # the register's Evaluation Report section (hss_inspect.report.register)
HUB = "hf-eval-results"  # each model's .eval_results/hss.yaml (hss_inspect.report.hub_results)
TEXT_FORMATS = "what to print: md (a Markdown page) or json [md]"


Drawn = TypeVar("Drawn")


def add_report_arguments(report: argparse.ArgumentParser) -> None:
    report.add_argument("logs", nargs="+", help=".eval/.json logs or folders of them")
    report.add_argument(
        "--format",
        choices=(*FORMATS, REGISTER, HUB),
        default="md",
        help="what to print (register: the Inspect Evals register's Evaluation Report "
        "section; hf-eval-results: DIR/<model>/.eval_results/hss.yaml per model, with --out)",
    )
    report.add_argument("--out", type=Path, help="also write every format and the plots here")
    report.add_argument(
        "--with-paper", action="store_true", help="add the paper's published Table 1 rows"
    )
    report.add_argument("--sweep", choices=SWEEPS, help="a sweep table over effort or frames")
    report.add_argument(
        "--paper-model",
        action="append",
        default=[],
        metavar="MODEL=NAME",
        help="register: compare the logs of MODEL with the paper's NAME (Table 5), e.g. a "
        "proxy's name for one of the paper's models (repeatable)",
    )
    add_cost_config_argument(
        report,
        "what each run cost (a model it lacks: the cost Inspect recorded, else Inspect's "
        "model database)",
    )
    add_pages_arguments(report)


# ---- the task pages and failure examples beside report.html (`report.pages`) ----------


def add_pages_arguments(report: argparse.ArgumentParser) -> None:
    pages = report.add_argument_group("task pages and failure examples (written with --out)")
    pages.add_argument(
        "--pages",
        nargs="*",
        metavar="TASK_ID",
        help="a page for each task named (none named: every task) with the media each run "
        "was served and every run's answers, verdicts and failure causes",
    )
    pages.add_argument(
        "--examples",
        nargs="?",
        type=int,
        const=1,
        default=0,
        metavar="N",
        help="the failure examples (paper App. E): for each subdomain, the N tasks the most "
        "runs failed for the same cause [1], as figures in examples.html",
    )
    pages.add_argument(
        "--examples-tasks",
        nargs="+",
        default=[],
        metavar="TASK_ID",
        help="failure-example figures for the tasks named",
    )
    pages.add_argument(
        "--dataset",
        default=None,
        help="rebuild the media from this copy of the release (a hub id or a folder) instead "
        "of the one each log recorded",
    )
    pages.add_argument("--revision", default=None, help="with --dataset: its revision")


def write_report_pages(
    args: argparse.Namespace, boards: list[Board], releases: Sequence[Release], runs: Sequence[Run]
) -> list[Board]:
    """The pages the options ask for, written beside report.html: each release's in a folder
    of its own after the first's (`release_2/`, ...), since a task may differ between
    releases; each board with the links to its pages (unchanged when none are asked)."""
    if args.examples < 0:
        raise InputError(
            f"--examples {args.examples}: give a number of tasks per subdomain, 1 or more"
        )
    if args.pages is None and args.examples == 0 and not args.examples_tasks:
        return boards  # the pages' modules (the media's among them) are not even loaded
    from hss_inspect.report.pages import REPORT_PAGE, PagesWanted, write_pages

    tasks = () if args.pages is None else (args.pages or None)
    wanted = PagesWanted(tasks, args.examples, args.examples_tasks)
    if args.out is None:
        raise InputError(
            "--pages, --examples and --examples-tasks write pages beside report.html: give "
            "--out DIR"
        )
    linked = []
    for n, (board, release) in enumerate(zip(boards, releases, strict=True)):
        folder = "" if n == 0 else f"release_{n + 1}/"
        mine = [run for run in runs if run.log in release.paths]
        written = write_pages(
            args.out / folder, release.logs, mine, wanted, args.dataset, args.revision,
            report=("../" if folder else "") + REPORT_PAGE,
        )  # fmt: skip
        print(f"hss-inspect report: wrote {written.line()} to {args.out / folder}",
              file=sys.stderr)  # fmt: skip
        for line in written.problems:
            print(f"hss-inspect report: media not shown: {line}", file=sys.stderr)
        pages = {t: folder + page for t, page in written.task_pages.items()}
        examples = folder + written.examples if written.examples else None
        linked.append(replace(board, task_pages=pages, examples_page=examples))
    return linked


# ---- end of the pages' part -----------------------------------------------------------


def add_agreement_arguments(agreement: argparse.ArgumentParser) -> None:
    agreement.add_argument(
        "logs", nargs="+", help="logs (or folders) whose answers several judges graded"
    )
    agreement.add_argument("--format", choices=("md", "json"), default="md", help=TEXT_FORMATS)
    agreement.add_argument("--out", type=Path, help="write agreement.json and scatter plots here")


def add_compare_arguments(compare: argparse.ArgumentParser) -> None:
    compare.add_argument("log_a", help="the log of run A (.eval or .json)")
    compare.add_argument("log_b", help="the log of run B, paired with A on their shared tasks")
    compare.add_argument("--format", choices=("md", "json"), default="md", help=TEXT_FORMATS)


def add_failures_arguments(failures: argparse.ArgumentParser) -> None:
    failures.add_argument("logs", nargs="+", help=".eval/.json logs or folders of them")
    failures.add_argument("--format", choices=("md", "json"), default="md", help=TEXT_FORMATS)


LogsCommand = Callable[[argparse.Namespace, list[DamagedLog]], int]


def leaving_out_damaged(command: str, run: LogsCommand, args: argparse.Namespace) -> int:
    """Run a command over logs, leaving out those Inspect cannot read: it prints what the
    others give, then one line for each left out, and exits 1 if it left one out."""
    skipped: list[DamagedLog] = []
    try:
        return run(args, skipped) or (1 if skipped else 0)
    finally:
        for damaged in skipped:
            line = f"hss-inspect {command}: left out {damaged} (read: the other logs)"
            print(line, file=sys.stderr)


def report_command(args: argparse.Namespace) -> int:
    return leaving_out_damaged("report", _report, args)


def _report(args: argparse.Namespace, skipped: list[DamagedLog]) -> int:
    paths = list(readable_headers(find_logs(args.logs), skipped))
    audits = [p for p in paths if is_audit_log(p)]
    if audits:
        _audit(args, audits)
        paths = [p for p in paths if p not in audits]
        if not paths:
            return 0
    infos, records = read_logs(paths, skipped)
    # checked whatever the format, though only the register's uses it
    check_paper_names(infos, named_pairs(args.paper_model, "--paper-model", "MODEL=NAME"))
    runs = runs_of(records)
    if args.sweep:
        require_one_release(infos, "a sweep")
        return _sweep(args, runs)
    cost = bill_summary(run_bills(infos, args.model_cost_config))
    if args.format == REGISTER:
        require_one_release(infos, "the register's evaluation report")
        return _register(args, infos, runs, cost)
    if args.format == HUB:
        return _hub_results(args, infos, primary_runs(runs))
    releases = releases_of(infos)
    boards = [board_of(release, runs, args.with_paper) for release in releases]
    notes = [release_diff_line(releases[0], later) for later in releases[1:]]
    studies = human_studies(runs)
    boards = write_report_pages(args, boards, releases, runs)
    outputs: dict[str, Callable[[], str]] = {
        "md": lambda: markdown_report(boards, notes, cost, studies),
        "csv": lambda: csv_report(boards),
        "json": lambda: json_report(report_json(boards, releases, notes, cost, studies)),
        "html": lambda: html_report(boards, figures, notes, cost=cost),
    }
    needs_figures = args.out is not None or args.format == "html"
    figures = _board_figures(boards, args.out, args.with_paper) if needs_figures else []
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for fmt in FORMATS:
            (args.out / f"report.{fmt}").write_text(outputs[fmt](), encoding="utf-8")
        for n, board in enumerate(boards):  # one table per release, as the plots
            name = "subdomains.csv" if n == 0 else f"subdomains_{n + 1}.csv"
            (args.out / name).write_text(subdomain_csv(board.rows), encoding="utf-8")
        (args.out / "cost.csv").write_text(bill_csv(cost), encoding="utf-8")
        written = "the report and its plots" if figures else "the report (no plots)"
        print(f"hss-inspect report: wrote {written} to {args.out}", file=sys.stderr)
    sys.stdout.write(outputs[args.format]())
    return 0


def board_of(release: Release, runs: Sequence[Run], with_paper: bool) -> Board:
    """The leaderboard of one release's runs; the paper's rows beside them only where they
    measured what the paper did (`releases.paper_comparable`)."""
    mine = [run for run in runs if run.log in release.paths]
    rows = [clean_nan(leaderboard_row(run)) for run in mine]
    refused = paper_comparable(release) if with_paper else None
    paper = published_rows() if with_paper and refused is None else []
    return Board(
        heading=release.heading,
        shown=display_rows(rows, paper),
        rows=rows,
        difficulty=item_difficulty(primary_runs(mine)),
        paper=tuple(paper),
        paper_note=refused,
    )


def report_json(
    boards: Sequence[Board],
    releases: Sequence[Release],
    notes: Sequence[str],
    cost: dict[str, Any],
    studies: Sequence[tuple[str, Any]],
) -> dict[str, Any]:
    """Every run's row, each naming its release; each release with what it measured, its
    item difficulty and, where shown, the paper's rows. With one release, its difficulty and
    paper rows also stand at the top level, as before releases were told apart."""
    entries = [
        {
            "heading": board.heading,
            "logs": sorted(release.paths),
            "tasks": len(release.prints) or None,
            "difficulty": board.difficulty.as_dict(),
            **({"paper_not_shown": board.paper_note} if board.paper_note else {}),
            **({"paper": [vars(row) for row in board.paper]} if board.paper else {}),
        }
        for board, release in zip(boards, releases, strict=True)
    ]
    rows = [{**row, "release": n} for n, board in enumerate(boards) for row in board.rows]
    single = {k: v for k, v in entries[0].items() if k in ("difficulty", "paper")}
    return {
        "rows": rows,
        "releases": entries,
        "release_notes": list(notes),
        **(single if len(entries) == 1 else {}),
        "cost": cost,
        **studies_json(studies),
    }


def _board_figures(
    boards: Sequence[Board], out: Path | None, with_paper: bool
) -> list[dict[str, str]]:
    """Each release's plots (files named `leaderboard.png`, then `leaderboard_2.png`, ...);
    none without matplotlib."""
    figures = []
    for n, board in enumerate(boards):
        drawn = _plotted("report", partial(_release_figures, board, out, with_paper, n))
        if drawn is None:
            return []
        figures.append(drawn)
    return figures


def _release_figures(board: Board, out: Path | None, with_paper: bool, n: int) -> dict[str, str]:
    beside = with_paper and board.paper_note is None
    suffix = "" if n == 0 else f"_{n + 1}"
    return plots.report_figures(board.rows, out, board.paper, beside, suffix)


def _plotted(command: str, draw: Callable[[], Drawn]) -> Drawn | None:
    """The figures `draw` makes, or, without matplotlib, a one-line note and None."""
    try:
        return draw()
    except plots.PlotsUnavailable as exc:
        print(f"hss-inspect {command}: {exc}", file=sys.stderr)
        return None


def run_bills(infos: Sequence[LogInfo], cost_config: str | None) -> list[PartyBill]:
    """Each run's calls priced: the price file's entry for the model, else the cost Inspect
    recorded, else Inspect's model database (found as `hss-inspect estimate` finds it)."""
    prices = load_cost_config(cost_config)
    database: dict[str, Any] = {}
    bills = []
    for party in (party for info in infos for party in info.parties):
        file_price = priced_by_name(prices, party.model)
        if file_price is None and party.model not in database:
            database[party.model] = inspect_pricing(party.model, {}).price
        discount = batch_discount(party.model) if party.batched else None
        bills.append(party_bill(party, file_price, database.get(party.model), discount))
    return bills


def batch_discount(model: str) -> float | None:
    """The price multiplier of `model`'s batch API; None: not known, so a batched run's
    bill is not known either (Inspect's recorded cost has no batch discount)."""
    from hss_inspect.providers.batching import batch_rules_for

    return batch_rules_for(model).price_multiplier


def _register(
    args: argparse.Namespace, infos: list[LogInfo], runs: list[Run], cost: dict[str, Any]
) -> int:
    rows = [clean_nan(leaderboard_row(run)) for run in primary_runs(runs)]
    paper = named_pairs(args.paper_model, "--paper-model", "MODEL=NAME")
    text = register_markdown(results(infos, rows, paper), cost)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "evaluation_report.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


def _hub_results(args: argparse.Namespace, infos: list[LogInfo], runs: list[Run]) -> int:
    """Each model's results file under --out; a line for each run that cannot be published."""
    if args.out is None:
        raise InputError("--format hf-eval-results writes a file per model: give --out DIR")
    found = hub_results(infos, runs, [clean_nan(leaderboard_row(run)) for run in runs])
    require_one_release(found.published, "the hub's eval results")
    for line in found.refused:
        print(f"hss-inspect report: {line}", file=sys.stderr)
    for name, entries in found.files.items():
        (args.out / name).parent.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(entries, sort_keys=False, width=100)
        (args.out / name).write_text(text, encoding="utf-8")
        print(f"hss-inspect report: wrote {args.out / name}", file=sys.stderr)
    return 0 if found.files else 1


def _audit(args: argparse.Namespace, paths: list[str]) -> None:
    """Judge-audit logs get the audit tables (hss_inspect.audit.report), not a leaderboard."""
    text = render_audit(paths, args.format)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"audit.{args.format}").write_text(text, encoding="utf-8")
    sys.stdout.write(text)


def _sweep(args: argparse.Namespace, runs: list[Run]) -> int:
    sweep = build_sweep(primary_runs(runs), args.sweep)
    payload = clean_nan(sweep.as_dict())
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"sweep_{args.sweep}.json").write_text(json_report(payload), encoding="utf-8")
        (args.out / f"sweep_{args.sweep}.md").write_text(sweep_markdown(sweep), encoding="utf-8")
        _plotted("report", lambda: plots.sweep_figures(sweep, args.out))
    sys.stdout.write(json_report(payload) if args.format == "json" else sweep_markdown(sweep))
    return 0


def agreement_command(args: argparse.Namespace) -> int:
    return leaving_out_damaged("agreement", _agreement, args)


def _agreement(args: argparse.Namespace, skipped: list[DamagedLog]) -> int:
    infos, records = read_logs(args.logs, skipped)
    require_one_release(infos, "agreement")
    alignment = clean_nan(judge_alignment(records).as_dict())
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "agreement.json").write_text(json_report(alignment), encoding="utf-8")
        _plotted("agreement", lambda: plots.agreement_figures(alignment, args.out))
    text = json_report(alignment) if args.format == "json" else agreement_markdown(alignment)
    sys.stdout.write(text)
    return 0


def compare_command(args: argparse.Namespace) -> int:
    sides = [read_logs([path]) for path in (args.log_a, args.log_b)]
    runs = [primary_runs(runs_of(records)) for _, records in sides]
    for path, found in zip((args.log_a, args.log_b), runs, strict=True):
        if len(found) != 1:
            raise LogError(f"{path}: compare takes one log on each side, found {len(found)} runs")
    changed = changed_between(sides[0][0][0], sides[1][0][0])
    result = clean_nan(compare_runs(runs[0][0], runs[1][0], changed))
    sys.stdout.write(json_report(result) if args.format == "json" else compare_markdown(result))
    return 0


def changed_between(a: LogInfo, b: LogInfo) -> dict[str, str]:
    """The shared tasks the two logs' releases differ on, with what each change costs; a
    pair of logs that cannot be paired at all (another N, no fingerprints) is refused."""
    if a.task_prints is not None and b.task_prints is not None and version_n(a) == version_n(b):
        diff = diff_prints(a.task_prints, b.task_prints)
        return {c.task_id: c.change.value for c in diff.changed}
    reason = difference(a, b)
    if reason is not None:
        raise InputError(
            f"{a.log} and {b.log} did not measure the same thing ({reason}); compare runs of "
            "one release, or carry one to the other's (hss-inspect release carry)"
        )
    return {}


def failures_command(args: argparse.Namespace) -> int:
    return leaving_out_damaged("failures", _failures, args)


def _failures(args: argparse.Namespace, skipped: list[DamagedLog]) -> int:
    causes = taxonomy()
    runs = primary_runs(runs_of(read_logs(args.logs, skipped)[1]))
    result = clean_nan(failure_analysis(runs, causes))
    text = json_report(result) if args.format == "json" else failures_markdown(result, causes)
    sys.stdout.write(text)
    return 0
