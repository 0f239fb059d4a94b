"""The `hss-inspect` command: debugging aids around the eval."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hss_inspect.media.errors import MediaError
from hss_inspect.media.store import (
    cached_sample_video,
    file_sha256,
    manifest_of,
    write_frames,
)
from hss_inspect.media.video import sample_video
from hss_inspect.settings import DEFAULT_FRAMES, FrameSettings


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
    return parser


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
    digest = file_sha256(args.video)
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "frames":
            return frames_command(args)
    except (MediaError, ValueError) as exc:
        print(f"hss-inspect {args.command}: {exc}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    sys.exit(main())
