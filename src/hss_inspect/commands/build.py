"""`hss-inspect build new | import | serve | links | status | funnel | check | export | reopen |
retire`: HSS
tasks built as the paper built them (`hss_inspect.construction`): authored from a media
pool, checked, passed by three independent review rounds, and exported as a release."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from hss_inspect.commands.arguments import add_pairs_argument, named_pairs, people_names
from hss_inspect.core.errors import InputError
from hss_inspect.core.options import FRAME_OPTIONS, add_flags, media_settings

VIEWS = ("media", "frames")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="action")
    add_new(actions.add_parser("new", help="make a build: the pool, authors, reviewers, links"))
    imported = actions.add_parser("import", help="tasks authored elsewhere, into review")
    imported.add_argument("build", type=Path, help="the build's SQLite file")
    imported.add_argument(
        "tasks", type=Path, help="a JSONL file of tasks in the release's format, "
        "media_path naming a file of the pool",
    )  # fmt: skip
    imported.add_argument("--author", required=True, help="the build's author they are of")
    from hss_inspect.construction.create import DEFAULT_PORT
    from hss_inspect.web.server import DEFAULT_HOST

    for name, text in (("serve", "serve the authors' and reviewers' pages"),
                       ("links", "each person's private link again")):  # fmt: skip
        action = actions.add_parser(name, help=text)
        action.add_argument("build", type=Path, help="the build's SQLite file")
        action.add_argument(
            "--host", default=DEFAULT_HOST, help=f"where to listen [{DEFAULT_HOST}]"
        )
        action.add_argument(
            "--port", type=int, default=DEFAULT_PORT, help=f"the port to listen on [{DEFAULT_PORT}]"
        )
    status = actions.add_parser("status", help="where the tasks stand, per author and reviewer")
    status.add_argument("build", type=Path, help="the build's SQLite file")
    add_funnel(actions.add_parser("funnel", help="the attrition funnel (Fig. 8): md, json, html"))
    add_check(actions.add_parser("check", help="the judge and blind checks of tasks in review"))
    export = actions.add_parser("export", help="the admitted tasks as a release folder")
    export.add_argument("build", type=Path, help="the build's SQLite file")
    export.add_argument("--out", type=Path, required=True, help="a new folder for the release")
    export.add_argument("--title", help="the dataset card's title [the build's file name]")
    export.add_argument("--allow-duplicates", action="store_true",
                        help="export tasks whose item repeats the --against release's")  # fmt: skip
    export.add_argument(
        "--version",
        help="the version this export is, named in its card with the changes since the last "
        "[the last numbered one + 1; 1]",
    )
    reopen = actions.add_parser("reopen", help="an admitted task back to its author for an erratum")
    reopen.add_argument("build", type=Path, help="the build's SQLite file")
    reopen.add_argument("task", help="the admitted task's id")
    reopen.add_argument("--note", required=True, help="what is wrong, for its author to mend")
    retire = actions.add_parser("retire", help="an admitted task left out of later versions")
    retire.add_argument("build", type=Path, help="the build's SQLite file")
    retire.add_argument("task", help="the admitted task's id")
    from hss_inspect.construction.versions import RETIRE_REASONS

    retire.add_argument("--reason", required=True, choices=RETIRE_REASONS, help="why it goes")
    retire.add_argument("--note", default="", help="a word on it, kept in the changelog")


def add_new(new: argparse.ArgumentParser) -> None:
    new.add_argument("build", type=Path, help="the build's SQLite file (made anew)")
    new.add_argument("--pool", type=Path, required=True, help="the folder of images and clips")
    new.add_argument(
        "--authors", required=True,
        help="how many authors (named author-1, ...), or their names as a comma list",
    )  # fmt: skip
    new.add_argument(
        "--reviewers", required=True,
        help="how many reviewers (reviewer-1, ...; at least 3 besides each author), or names",
    )  # fmt: skip
    new.add_argument("--seed", type=int, default=0, help="the seed of the reviews' dealing [0]")
    new.add_argument("--prefix", default="task", help="task ids are PREFIX-0001, ... [task]")
    new.add_argument(
        "--view", choices=VIEWS, default="media",
        help="media: the image, or the clip in a player; frames: the frames and time labels "
        "a model is sent at these settings [media]",
    )  # fmt: skip
    new.add_argument("--blind-answers", action="store_true", help="each review round opens "
                     "with the media and question alone: the reviewer answers first")  # fmt: skip
    new.add_argument(
        "--taxonomy", type=Path, metavar="FILE",
        help="a lab's own domains and subdomains (YAML: domains: [{name, subdomains: [...]}]) "
        "the tasks are written and imported in [the paper's 4 domains, 11 subdomains]",
    )  # fmt: skip
    add_flags(new, (*FRAME_OPTIONS, "frame_bytes_budget"))
    new.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    new.add_argument(
        "--against", metavar="DATASET", help="the release whose media the pool must not repeat: "
        "a hub id, a local copy or demo; none: no check [ScaleAI/HSS, skipped if out of reach]",
    )  # fmt: skip
    new.add_argument("--revision", default="main", help="the --against release's revision [main]")


def add_funnel(funnel: argparse.ArgumentParser) -> None:
    from hss_inspect.construction.funnel_report import FORMATS

    funnel.add_argument("build", type=Path, help="the build's SQLite file")
    funnel.add_argument("--format", choices=FORMATS, default="md", help="[md]")
    funnel.add_argument("--out", type=Path, help="a file to write [standard output]")


def add_check(check: argparse.ArgumentParser) -> None:
    check.add_argument("build", type=Path, help="the build's SQLite file")
    add_pairs_argument(
        check, "--model-role", "roles", "the judge: grader=<provider/model> or a YAML spec, "
        "as inspect eval takes it (required)", "grader=MODEL",
    )  # fmt: skip
    check.add_argument(
        "--model", dest="models", action="append", default=[], metavar="MODEL",
        help="a model for the blind control (repeat for more); none: the judge's check only",
    )  # fmt: skip
    check.add_argument("--epochs", type=int, default=1, help="blind attempts per task [1]")
    check.add_argument("--log-dir", type=Path, help="[BUILD.checks/<time>/logs]")
    check.add_argument("--all", action="store_true", help="check tasks checked already, again")
    check.add_argument("--dry-run", action="store_true", help="print the evals, run nothing")


def run(args: argparse.Namespace) -> int:
    return {
        "new": run_new, "import": run_import, "serve": run_serve, "links": run_links,
        "status": run_status, "funnel": run_funnel, "check": run_check, "export": run_export,
        "reopen": run_reopen, "retire": run_retire,
    }[args.action](args)  # fmt: skip


def link(token: str, host: str, port: int) -> str:
    return f"http://{host}:{port}/b/{token}"


def print_links(build: Path, host: str, port: int) -> None:
    from hss_inspect.construction.store import tokens_of

    print(f"private links (as `hss-inspect build serve {build}` serves them):")
    for person, token in tokens_of(build).items():
        print(f"  {person.role} {person.name}: {link(token, host, port)}")


def run_new(args: argparse.Namespace) -> int:
    from hss_inspect.construction.create import (
        DEFAULT_PORT,
        new_build,
        prepare_pool_media,
        read_taxonomy,
    )
    from hss_inspect.construction.duplicates import check_new_build, open_reference
    from hss_inspect.web.server import DEFAULT_HOST

    media = media_settings(vars(args))
    authors = people_names(args.authors, "--authors", "author")
    reviewers = people_names(args.reviewers, "--reviewers", "reviewer")
    taxonomy = None if args.taxonomy is None else read_taxonomy(args.taxonomy)
    reference = open_reference(args.against, args.revision, args.jobs)  # before the build
    _, scan = new_build(
        args.build, args.pool, authors, reviewers, args.seed, args.view, media, args.prefix,
        args.blind_answers, taxonomy,
    )  # fmt: skip
    kinds = {kind: sum(i.media_type == kind for i in scan.items) for kind in ("image", "video")}
    print(
        f"build {args.build}: {len(scan.items)} pool items ({kinds['image']} images, "
        f"{kinds['video']} clips) from {args.pool}, {len(authors)} author(s), "
        f"{len(reviewers)} reviewer(s), {args.view} view"
        + (", blind answers in review" if args.blind_answers else "")
        + (
            f", the taxonomy of {args.taxonomy} ({len(taxonomy.domains)} domains, "
            f"{len(taxonomy.subdomain_names)} subdomains)"
            if taxonomy
            else ""
        )
    )
    for line in scan.skipped:
        print(f"  skipped {line}")
    print(prepare_pool_media(args.pool, scan.items, args.view, media, args.jobs))
    print("\n".join(check_new_build(args.build, args.pool, scan.items, reference, args.jobs)))
    print_links(args.build, DEFAULT_HOST, DEFAULT_PORT)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from hss_inspect.construction.create import import_tasks

    created = import_tasks(args.build, args.tasks, args.author, time.time())
    print(f"imported {len(created)} task(s) as {args.author}'s, in review round 1: "
          f"{', '.join(created[:10])}{', ...' if len(created) > 10 else ''}")  # fmt: skip
    return 0


def run_serve(args: argparse.Namespace) -> int:
    from hss_inspect.construction.store import tokens_of
    from hss_inspect.web.server import check_installed, run_server

    check_installed("web")
    from hss_inspect.construction.app import BuildServer

    app = BuildServer(args.build).app()
    count = len(tokens_of(args.build))
    serving = f"serving {args.build} to {count} link(s) at http://{args.host}:{args.port}/b/<token>"
    run_server(app, args.host, args.port, serving)
    return 0


def run_links(args: argparse.Namespace) -> int:
    print_links(args.build, args.host, args.port)
    return 0


def run_status(args: argparse.Namespace) -> int:
    from hss_inspect.construction.blind import status_lines
    from hss_inspect.construction.funnel import AUTHOR_COUNTS, REVIEWER_COUNTS, funnel
    from hss_inspect.construction.store import build_funnel_inputs, pool_items
    from hss_inspect.core.markdown import aligned

    pool = pool_items(args.build)
    found = funnel(*build_funnel_inputs(args.build))
    taken = sum(task is not None for _, task, _ in pool)
    print(f"pool: {taken} of {len(pool)} items taken")
    waiting = ", ".join(f"{r.waiting} before round {r.round}" for r in found.rounds)
    print(
        f"tasks: {found.drafts} draft(s), {found.authored} authored: {found.admitted} "
        f"admitted, {sum(r.dropped for r in found.rounds)} dropped, {waiting} "
        f"(of which {found.in_revision} back with their authors)"
    )
    for role, people, names in (("author", found.authors, AUTHOR_COUNTS),
                                ("reviewer", found.reviewers, REVIEWER_COUNTS)):  # fmt: skip
        rows = [[role, *names, "median min"]]
        rows += [[p.name, *(str(p.counts[n]) for n in names), median_text(p.median_minutes)]
                 for p in people]  # fmt: skip
        print("\n".join(aligned(rows)))
    for line in status_lines(args.build):
        print(line)
    return 0


def median_text(minutes: float | None) -> str:
    return "-" if minutes is None else f"{minutes:.1f}"


def run_funnel(args: argparse.Namespace) -> int:
    from hss_inspect.construction.blind import measured
    from hss_inspect.construction.funnel import funnel
    from hss_inspect.construction.funnel_report import render
    from hss_inspect.construction.store import histories, settings_of

    rounds = int(settings_of(args.build)["rounds"])
    text = render(funnel(histories(args.build), rounds), args.format,
                  f"Funnel of {args.build.name}", measured(args.build))  # fmt: skip
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from hss_inspect.construction import check, store

    roles = named_pairs(args.roles, "--model-role", "grader=MODEL")
    if "grader" not in roles:
        raise InputError("--model-role grader=<provider/model> is required: the judge that "
                         "grades the references (and the blind answers)")  # fmt: skip
    check.check_model_names(roles["grader"], args.models)
    plan = check.plan_checks(
        args.build, roles["grader"], args.models, args.epochs, args.log_dir, args.all
    )
    if not plan.runs:
        print(f"nothing to check: {len(store.awaiting_review(args.build))} task(s) in review, "
              "each checked at its revision, every blind answer graded (--all: again)")  # fmt: skip
        return 0
    print(f"checking {len(plan.chosen)} task(s) in review, grading the blind answers to "
          f"{len(plan.answered)} task(s); the evals:")  # fmt: skip
    for planned in plan.runs:
        print(f"  {planned.command}")
    if args.dry_run:
        return 0
    outcome = check.run_plan(args.build, plan)
    for failure in outcome.stopped:
        print(failure)
    for path, status in outcome.failed:
        print(f"the eval in {path} ended with status {status}: see `inspect view`")
    flagged = outcome.flagged
    print(f"flags stored for reviewers: {flagged['reference']} reference answer(s) short of "
          f"their rubric, {flagged['blind']} blind pass(es); {outcome.graded} blind answer(s) "
          f"graded, {outcome.met} met the rubric; logs in {plan.log_dir}")  # fmt: skip
    return 1 if outcome.failed or outcome.stopped else 0


def run_export(args: argparse.Namespace) -> int:
    from hss_inspect.construction import blind, store, versions
    from hss_inspect.construction.duplicates import refuse_release_duplicates
    from hss_inspect.construction.export import History, export_release
    from hss_inspect.construction.funnel import funnel

    canary = store.canary_of(args.build)  # a build made before canaries gains one, kept
    settings = store.settings_of(args.build)
    version = versions.next_version(args.build, args.version)
    found = funnel(*store.build_funnel_inputs(args.build))
    title = args.title or f"HSS-format tasks: {args.build.stem}"
    tasks = store.admitted(args.build)
    if not args.allow_duplicates:
        refuse_release_duplicates(args.build, tasks)
    baseline = blind.baseline_lines(args.build)  # the split's own human baseline, if measured
    versions.check_no_erratum_pending(args.build)
    earlier = versions.versions(args.build)
    since = earlier[-1].exported_at if earlier else 0.0
    history = History(version, earlier, versions.retirements(args.build),
                      versions.erratum_notes(args.build, since))  # fmt: skip
    written = export_release(tasks, Path(settings["pool"]), args.out, found, settings, title,
                             baseline, history)  # fmt: skip
    versions.record_export(args.build, version, args.out, written.prints, written.funnel)
    print(
        f"wrote version {version}: {len(written.rows)} admitted task(s) and "
        f"{written.media_bytes / 1e6:.1f} MB of media to {args.out} (rows, checksums.sha256, "
        f"README.md), each file holding the canary GUID {canary}; evaluate with: inspect eval "
        f"hss_inspect/hss -T dataset={args.out} --model <model> --model-role grader=<judge>"
    )
    if written.changes is not None:
        for line in versions.changelog_lines(written.changes):
            print(line)
    for line in baseline:
        print(line)
    return 0


def run_reopen(args: argparse.Namespace) -> int:
    from hss_inspect.construction.versions import reopen

    reopen(args.build, args.task, args.note)
    print(f"task {args.task}: back to its author with the erratum; its next revision goes "
          "through the review rounds again")  # fmt: skip
    return 0


def run_retire(args: argparse.Namespace) -> int:
    from hss_inspect.construction.versions import retire

    retire(args.build, args.task, args.reason, args.note)
    print(f"task {args.task}: retired ({args.reason}); later exports leave it out")
    return 0
