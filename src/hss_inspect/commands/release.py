"""`hss-inspect release diff | carry`: what changed between two releases of HSS (or of a
split), task by task, and a log carried from one to the other for the price of the changes
(`data.fingerprints`, `recipes.carry`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from hss_inspect.commands.arguments import add_cost_config_argument
from hss_inspect.core.errors import InputError
from hss_inspect.core.options import DEFAULTS

if TYPE_CHECKING:
    from hss_inspect.data.fingerprints import TaskPrint
    from hss_inspect.data.release import Release

LOG_SUFFIXES = (".eval", ".json")
SIDE_HELP = (
    "a dataset at a revision (ScaleAI/HSS@<commit>; without @, the default revision), a local "
    "copy (a folder holding data/test.jsonl, or the rows file) or a log (.eval/.json)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="action")
    diff = actions.add_parser(
        "diff", help="the tasks added, removed and changed, and what each costs"
    )
    diff.add_argument("old", help=SIDE_HELP)
    diff.add_argument("new", help=SIDE_HELP)
    diff.add_argument("--format", choices=("md", "json"), default="md", help="md or json [md]")
    carry = actions.add_parser(
        "carry", help="a log of the old release carried to the new for the price of the changes"
    )
    carry.add_argument("log", help="the log to carry (.eval or .json)")
    carry.add_argument(
        "new", help="the new release: " + SIDE_HELP.replace(" or a log (.eval/.json)", "")
    )
    carry.add_argument(
        "--out", type=Path, help="the carried log to write [beside LOG, named LOG-carried.eval]"
    )
    carry.add_argument(
        "--estimate",
        action="store_true",
        help="say what the carry would send and cost, and send nothing",
    )
    add_cost_config_argument(carry, "the prices of --estimate (else the cost the log recorded)")


def run(args: argparse.Namespace) -> int:
    return {"diff": run_diff, "carry": run_carry}[args.action](args)


def run_diff(args: argparse.Namespace) -> int:
    from hss_inspect.data.fingerprints import diff_prints
    from hss_inspect.report.analysis_render import release_diff_markdown
    from hss_inspect.report.releases import diff_json

    (old_name, old), (new_name, new) = side_prints(args.old), side_prints(args.new)
    diff = diff_prints(old, new)
    if args.format == "json":
        sys.stdout.write(json.dumps(diff_json(diff, old_name, new_name), indent=2) + "\n")
    else:
        sys.stdout.write(release_diff_markdown(diff, old_name, new_name))
    return 0


def side_prints(side: str) -> tuple[str, dict[str, TaskPrint]]:
    """A side of a diff, named, and its fingerprints: a log's recorded ones, else those of
    the release it names, its media hashed (and remembered in the media cache)."""
    path = Path(side).expanduser()
    if path.suffix in LOG_SUFFIXES:
        if not path.is_file():
            raise InputError(f"{side}: no such log; give a log, a local copy or DATASET@REVISION")
        return side, log_prints(str(path))
    from hss_inspect.data.release import fingerprints_of
    from hss_inspect.media.facts import remembered_sha256

    release = release_named(side)
    return release.description, fingerprints_of(release, release.read_rows(), remembered_sha256)


def log_prints(path: str) -> dict[str, TaskPrint]:
    from hss_inspect.data.fingerprints import RECORD_KEY, prints_of_record
    from hss_inspect.report.logs import read_header

    found = prints_of_record((read_header(path).eval.metadata or {}).get(RECORD_KEY))
    if found is None:
        raise InputError(
            f"{path}: the log records no task fingerprints (written before task version 2-H); "
            "give the release it read instead (DATASET@COMMIT)"
        )
    return found


def release_named(side: str) -> Release:
    """The release a side names: a local copy when the path exists, else `ID@REVISION`."""
    from hss_inspect.data.release import open_release

    if Path(side).expanduser().exists():
        return open_release(side, DEFAULTS["revision"])
    dataset, at, revision = side.rpartition("@")
    if not at:
        dataset, revision = side, DEFAULTS["revision"]
    if not dataset:
        raise InputError(
            f"{side!r} names no dataset: give DATASET@REVISION, a local copy or a log (.eval)"
        )
    return open_release(dataset, revision)


def run_carry(args: argparse.Namespace) -> int:
    from hss_inspect.recipes.carry import carry_log, carry_plan
    from hss_inspect.report.logs import read_header

    if not Path(args.log).is_file():
        raise InputError(f"{args.log}: no such log; give the .eval or .json log to carry")
    release = release_named(args.new)
    if args.estimate:
        from hss_inspect.report.carry_cost import carry_cost, estimate_text

        plan = carry_plan(read_header(args.log), args.log, release)
        cost = carry_cost(
            args.log,
            plan.judge_conversations,
            plan.candidate_attempts,
            plan.new_attempts,
            args.model_cost_config,
        )
        sys.stdout.write(estimate_text(plan.as_dict(), cost))
        return 0
    out = args.out or Path(args.log).with_name(Path(args.log).stem + "-carried.eval")
    plan, _ = carry_log(args.log, release, out)
    print(
        f"hss-inspect release carry: wrote {out}: {len(plan.kept) + len(plan.relabelled)} "
        f"task(s) kept ({len(plan.relabelled)} relabelled), {len(plan.regraded)} graded again, "
        f"{len(plan.rerun)} answered again, {len(plan.dropped)} dropped",
        file=sys.stderr,
    )
    return 0
