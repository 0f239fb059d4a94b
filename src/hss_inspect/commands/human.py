"""`hss-inspect human new | serve | status | export`: a study of people answering HSS tasks
under the models' conditions (`hss_inspect.human`), graded later by the same judge
(`inspect eval hss_inspect/hss_human -T answers=STUDY.sqlite`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from hss_inspect.commands.arguments import people_names
from hss_inspect.core.options import FRAME_OPTIONS, SELECTION_OPTIONS, add_flags, media_settings
from hss_inspect.human.answers import VIEWS
from hss_inspect.human.study import DEFAULT_PORT
from hss_inspect.web.server import DEFAULT_HOST

STUDY_HELP = "the study's SQLite file (made by hss-inspect human new)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="action")
    new = actions.add_parser("new", help="make a study: tasks dealt to annotators, private links")
    new.add_argument("study", type=Path, help="the study's SQLite file (made anew)")
    add_flags(new, (*SELECTION_OPTIONS, *FRAME_OPTIONS, "frame_bytes_budget"))
    new.add_argument("--limit", type=int, help="at most this many tasks (after the selection)")
    new.add_argument(
        "--annotators",
        required=True,
        help="how many annotators (named annotator-1, ...), or their names as a comma list",
    )
    new.add_argument("--answers-per-task", type=int, default=1, help="distinct annotators a task")
    new.add_argument("--seed", type=int, default=0, help="the assignment's seed [0]")
    new.add_argument(
        "--view",
        choices=VIEWS,
        default="media",
        help="media: the image, or the clip in a player; frames: the frames and time labels "
        "a model is sent at these settings [media]",
    )
    new.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    serve = actions.add_parser("serve", help="serve the annotators' pages")
    serve.add_argument("study", type=Path, help=STUDY_HELP)
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"where to listen [{DEFAULT_HOST}]")
    serve.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the port to listen on, in the annotators' links [{DEFAULT_PORT}]",
    )
    status = actions.add_parser("status", help="answered and assigned, per annotator")
    status.add_argument("study", type=Path, help=STUDY_HELP)
    export = actions.add_parser("export", help="the answers as JSON lines")
    export.add_argument("study", type=Path, help=STUDY_HELP)
    export.add_argument("--out", type=Path, required=True, help="the JSONL file to write")


def run(args: argparse.Namespace) -> int:
    return {"new": run_new, "serve": run_serve, "status": run_status, "export": run_export}[
        args.action
    ](args)


def run_new(args: argparse.Namespace) -> int:
    from hss_inspect.data.release import open_release
    from hss_inspect.data.rows import select_rows
    from hss_inspect.human.study import link, new_study, prepare_study_media

    media = media_settings(vars(args))
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    rows = rows[: args.limit] if args.limit else rows
    selection = {k: getattr(args, k) for k in ("media", "domains", "subdomains", "limit")}
    annotators = people_names(args.annotators, "--annotators", "annotator")
    tokens = new_study(
        args.study, release, rows, annotators, args.answers_per_task, args.seed, args.view,
        media, selection,
    )  # fmt: skip
    print(f"study {args.study}: {len(rows)} tasks from {release.description}, {args.view} view")
    print(prepare_study_media(release, rows, args.view, media, args.jobs))
    print(f"private links (as `hss-inspect human serve {args.study}` serves them):")
    for name, token in tokens.items():
        print(f"  {name}: {link(token)}")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from hss_inspect.human.store import tokens_of
    from hss_inspect.web.server import check_installed, run_server

    check_installed("human")
    from hss_inspect.human.app import StudyServer

    app = StudyServer(args.study).app()
    count = len(tokens_of(args.study))
    serving = (
        f"serving {args.study} to {count} annotator(s) at http://{args.host}:{args.port}/a/<token>"
    )
    run_server(app, args.host, args.port, serving)
    return 0


def run_status(args: argparse.Namespace) -> int:
    from hss_inspect.core.markdown import aligned
    from hss_inspect.human.store import progress_of

    rows = [["annotator", "answered", "assigned", "median s / task"]]
    for p in progress_of(args.study):
        seconds = "-" if p.median_seconds is None else f"{p.median_seconds:.1f}"
        rows.append([p.annotator, str(p.answered), str(p.assigned), seconds])
    print("\n".join(aligned(rows)))
    return 0


def run_export(args: argparse.Namespace) -> int:
    from hss_inspect.human.answers import write_jsonl
    from hss_inspect.human.store import answers_of

    count = write_jsonl(answers_of(args.study), args.out)
    print(f"wrote {count} answer(s) to {args.out}")
    return 0
