"""The `hss-inspect` command: debugging aids around the eval."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from hss_inspect.commands import rebuild
from hss_inspect.commands import report_args as report_parsers
from hss_inspect.commands.estimate import add_parser as add_estimate_parser
from hss_inspect.commands.estimate import estimate_command
from hss_inspect.commands.prepare import jobs_for, prepare_all
from hss_inspect.commands.recipe import add_parser as add_recipe_parser
from hss_inspect.commands.recipe import recipe_command
from hss_inspect.core.errors import SetupError
from hss_inspect.core.settings import (
    DEFAULT_DATASET,
    DEFAULT_FRAMES,
    DEFAULT_MEDIA,
    DEFAULT_REVISION,
    FrameSettings,
)
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import DatasetError, select_rows
from hss_inspect.media.errors import MediaError
from hss_inspect.media.store import (
    cache_root,
    cache_stats,
    cached_sample_video,
    clear_cache,
    manifest_of,
    remembered_sha256,
    write_frames,
)
from hss_inspect.media.video import sample_video


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hss-inspect", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    frames = commands.add_parser(
        "frames",
        help="write the exact frames a model receives for a video, with frames.json",
    )
    frames.add_argument("video", type=Path)
    frames.add_argument("--out", type=Path, required=True, help="folder to write into")
    frames.add_argument("--fps", type=float, default=DEFAULT_FRAMES.fps)
    frames.add_argument("--max-frames", type=int, default=DEFAULT_FRAMES.max_frames)
    frames.add_argument("--side", type=int, default=DEFAULT_FRAMES.frame_side)
    frames.add_argument("--max-images", type=int, default=DEFAULT_FRAMES.max_images)
    frames.add_argument(
        "--no-cache", action="store_true", help="decode afresh; neither read nor fill the cache"
    )
    _add_prepare_parser(commands)
    cache = commands.add_parser("cache", help="show where the media cache is and its size")
    cache.add_argument("--clear", action="store_true", help="delete every cached entry")
    report_parsers.add_parsers(commands)
    add_estimate_parser(commands)
    add_recipe_parser(commands)
    rebuild.add_parser(commands)
    return parser


def _add_prepare_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    prepare = commands.add_parser(
        "prepare",
        help="download the selected media and fill the cache (the task's dataset options)",
    )
    prepare.add_argument("--dataset", default=DEFAULT_DATASET)
    prepare.add_argument("--revision", default=DEFAULT_REVISION)
    prepare.add_argument("--media", default="all", choices=["all", "image", "video"])
    prepare.add_argument("--domains", default=None, help="comma list of names or short labels")
    prepare.add_argument("--subdomains", default=None, help="comma list of names or labels")
    prepare.add_argument("--fps", type=float, default=DEFAULT_FRAMES.fps)
    prepare.add_argument(
        "--max-frames",
        default=str(DEFAULT_FRAMES.max_frames),
        help="frame cap, or a comma list of caps to prepare a frame-budget sweep at once",
    )
    prepare.add_argument("--side", type=int, default=DEFAULT_FRAMES.frame_side)
    prepare.add_argument("--max-images", type=int, default=DEFAULT_FRAMES.max_images)
    prepare.add_argument("--image-max-side", type=int, default=DEFAULT_MEDIA.image_max_side)
    prepare.add_argument("--image-max-bytes", type=int, default=DEFAULT_MEDIA.image_max_bytes)
    prepare.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    prepare.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_MEDIA.media_timeout,
        help="seconds allowed per media file (all its frame budgets together)",
    )


def frames_command(args: argparse.Namespace) -> int:
    settings = FrameSettings(
        fps=args.fps,
        max_frames=args.max_frames,
        frame_side=args.side,
        max_images=args.max_images,
    )
    if not args.video.is_file():
        print(f"hss-inspect frames: no such file {args.video}", file=sys.stderr)
        return 2
    digest = remembered_sha256(args.video)
    if args.no_cache:
        video = sample_video(args.video, settings)
    else:
        video = cached_sample_video(args.video, settings, digest)
    write_frames(args.out, video, manifest_of(video, settings, digest))
    print(
        f"{len(video.jpegs)} frames at {video.effective_fps:.3f} fps over "
        f"{video.duration:.2f} s -> {args.out}"
    )
    return 0


def prepare_command(args: argparse.Namespace) -> int:
    budgets = [int(v) for v in str(args.max_frames).split(",") if v.strip()]
    frame_settings = [
        FrameSettings(fps=args.fps, max_frames=b, frame_side=args.side, max_images=args.max_images)
        for b in budgets
    ]
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    jobs = jobs_for(rows, frame_settings, args.image_max_side, args.image_max_bytes, args.timeout)
    print(f"preparing {len(jobs)} media file(s) from {release.description} into {cache_root()}")
    summary = prepare_all(release, jobs, args.jobs)
    print("\n".join(summary.lines()))
    return 1 if summary.failures else 0


def cache_command(args: argparse.Namespace) -> int:
    stats = clear_cache() if args.clear else cache_stats()
    verb = "cleared" if args.clear else "holds"
    print(
        f"{stats.root} ({CACHE_ENV_HINT}) {verb} {stats.frame_entries} frame set(s), "
        f"{stats.image_entries} image(s): {stats.files} files, {stats.bytes / 1e6:.1f} MB"
    )
    return 0


CACHE_ENV_HINT = "set HSS_INSPECT_CACHE to move it"
COMMANDS = {"frames": frames_command, "prepare": prepare_command, "cache": cache_command}


def report_command(args: argparse.Namespace) -> int:
    from hss_inspect.commands.report import COMMANDS as REPORT

    return REPORT[args.command](args)


COMMANDS.update(dict.fromkeys(report_parsers.REPORT_COMMANDS, report_command))
COMMANDS["recipe"] = recipe_command
COMMANDS["estimate"] = estimate_command
COMMANDS["rebuild-frames"] = rebuild.command


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (MediaError, DatasetError, SetupError, ValueError, FileNotFoundError) as exc:
        print(f"hss-inspect {args.command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
