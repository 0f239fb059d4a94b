"""`hss-inspect rebuild-frames`: the media a logged sample was sent, rebuilt from its log
record and checked against every logged hash (`conditions.rebuild`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hss_inspect.conditions.rebuild import rebuild, release_for
from hss_inspect.report.logs import check_sample, read_header, read_sample


def add_arguments(rebuild: argparse.ArgumentParser) -> None:
    rebuild.add_argument("log", type=Path, help="an .eval or .json log")
    rebuild.add_argument("--sample", required=True, help="the sample id (the HSS task_id)")
    rebuild.add_argument("--epoch", type=int, default=1, help="the sample's attempt [1]")
    rebuild.add_argument("--out", type=Path, required=True, help="folder to write into")
    rebuild.add_argument(
        "--dataset", default=None, help="fetch the media from here instead (a hub id or a copy)"
    )
    rebuild.add_argument("--revision", default=None, help="with --dataset: its revision")


def run(args: argparse.Namespace) -> int:
    header = read_header(str(args.log))
    check_sample(header, str(args.log), args.sample, args.epoch)
    sample = read_sample(str(args.log), args.sample, args.epoch)
    eval_metadata = header.eval.metadata or {}
    release = release_for(eval_metadata, args.dataset, args.revision)
    rebuilt = rebuild(sample, release, args.out, eval_metadata.get("hss_media_settings") or {})
    print(
        f"{len(rebuilt.files)} file(s) -> {args.out}; {rebuilt.checked} hash(es) match the log"
        + (
            f"; not checked (no hash logged): {', '.join(rebuilt.unchecked)}"
            if rebuilt.unchecked
            else ""
        )
    )
    return 0
