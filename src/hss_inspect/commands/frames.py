"""`hss-inspect frames`: the exact frames a model receives for one video, with frames.json."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hss_inspect.core.options import FRAME_OPTIONS, add_flags, frame_settings
from hss_inspect.media.cache_folder import check_cache_folder
from hss_inspect.media.facts import file_sha256, remembered_sha256
from hss_inspect.media.frame_cache import cached_sample_video
from hss_inspect.media.frame_files import manifest_of, write_frames
from hss_inspect.media.video import sample_video


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("video", type=Path, help="a video file (any format PyAV decodes)")
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    add_flags(parser, FRAME_OPTIONS)
    parser.add_argument(
        "--no-cache", action="store_true", help="decode afresh; neither read nor fill the cache"
    )


def run(args: argparse.Namespace) -> int:
    settings = frame_settings(vars(args))
    if not args.video.is_file():
        print(f"hss-inspect frames: no such file {args.video}", file=sys.stderr)
        return 2
    if args.no_cache:
        # the file hashed (for frames.json) beside the probe and the packet index, which
        # keep one core busy: a whole-file hash ahead of them cost a sparse plan 8%
        with ThreadPoolExecutor(max_workers=1) as pool:
            hashed = pool.submit(file_sha256, args.video)
            video = sample_video(args.video, settings)
            digest = hashed.result()
    else:
        check_cache_folder()
        digest = remembered_sha256(args.video)
        video = cached_sample_video(args.video, settings, digest)
    write_frames(args.out, video, manifest_of(video, settings, digest))
    print(
        f"{len(video.jpegs)} frames at {video.effective_fps:.3f} fps over "
        f"{video.duration:.2f} s -> {args.out}"
    )
    return 0
