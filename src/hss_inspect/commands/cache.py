"""`hss-inspect cache`: where the media cache is, what it holds, and clearing it."""

from __future__ import annotations

import argparse

from hss_inspect.media.cache_folder import cache_stats, check_cache_folder, clear_cache

CACHE_ENV_HINT = "set HSS_INSPECT_CACHE to move it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clear", action="store_true", help="delete every cached entry")


def run(args: argparse.Namespace) -> int:
    check_cache_folder()
    stats = clear_cache() if args.clear else cache_stats()
    verb = "cleared" if args.clear else "holds"
    print(
        f"{stats.root} ({CACHE_ENV_HINT}) {verb} {stats.frame_entries} frame set(s), "
        f"{stats.image_entries} image(s): {stats.files} files, {stats.bytes / 1e6:.1f} MB"
    )
    return 0
