"""Reading a clip's frames from its media cache entry: `read_frames` (each frame read
straight into its own bytes, the checksum taken along the way) against the previous way
(the whole file read, checksummed, then sliced into frames: two copies), side by side on
the same entries, CPU milliseconds per entry, medians over the repeats.

    python -m benchmarks.bench_cache_read CACHE_FOLDER [--entries 40] [--repeats 5]

CACHE_FOLDER is a media cache holding clips' entries, e.g. the one
`benchmarks.bench_full_shape --work DIR` leaves in DIR/cache (29 MB entries).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from hss_inspect.media.frame_files import FRAMES_BLOB, MANIFEST, read_frames


def read_whole_then_slice(folder: Path) -> tuple[bytes, ...] | None:
    manifest = json.loads((folder / MANIFEST).read_text())
    blob = (folder / FRAMES_BLOB).read_bytes()
    if zlib.crc32(blob) != manifest["blob_crc32"]:
        return None
    offsets = itertools.accumulate(manifest["frame_bytes"], initial=0)
    return tuple(blob[a:b] for a, b in itertools.pairwise(offsets))


def cpu_ms_per_entry(read: Callable[[Path], object], entries: list[Path]) -> float:
    started = time.process_time()
    for entry in entries:
        assert read(entry) is not None
    return 1000 * (time.process_time() - started) / len(entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache", type=Path)
    parser.add_argument("--entries", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    entries = sorted(p.parent for p in (args.cache / "frames").glob(f"*/{FRAMES_BLOB}"))
    entries = entries[: args.entries]
    ways = {"read_frames": read_frames, "whole_then_slice": read_whole_then_slice}
    timings: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, read in ways.items():  # alternated, so both see the same page cache
            timings[name].append(cpu_ms_per_entry(read, entries))
    medians = {name: round(statistics.median(t), 1) for name, t in timings.items()}
    size = sum((e / FRAMES_BLOB).stat().st_size for e in entries) / len(entries)
    print(json.dumps({
        "entries": len(entries),
        "mb_per_entry": round(size / 1e6, 1),
        "cpu_ms_per_entry": medians,
        "ratio": round(medians["read_frames"] / medians["whole_then_slice"], 2),
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
