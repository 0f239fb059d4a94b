"""A clip's frames from its media cache entry to the data URIs its request sends, the
package's own work for each clip request, side by side on the same clips:

  uris, first open   an entry of this format (`frames.uris`, the frames as their data
                     URIs): mapped, its checksum checked, each URI decoded out of it
  uris, later opens  the same, its checksum already checked by this process (the second
                     and third attempts of a clip, or another sample showing it)
  jpeg (before)      an entry of the first format (`frames.bin`, the JPEG bytes): each
                     frame read into its own bytes with the checksum taken along the way,
                     then base64-encoded into its data URI, on every request

The first-format entries are written here from the others' frames, so both hold the same
clips; every way's URIs are checked equal. CPU milliseconds per entry (this process's
CPU: a wait for the disk is not counted), medians over the repeats, the ways alternated so
all see the same page cache.

    python -m benchmarks.bench_cache_read CACHE_FOLDER [--entries 20] [--repeats 5]
        [--json benchmarks/results_cache_read.json]

CACHE_FOLDER is a media cache holding clips' entries, e.g. the one
`benchmarks.bench_full_shape --work DIR` leaves in DIR (`cache-after-...`: 500 frames a
clip, 38 MB entries).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from hss_inspect.media import frame_files
from hss_inspect.media.frame_files import FRAME_URIS, FRAMES_BLOB, MANIFEST, read_frames
from hss_inspect.media.uri import JPEG, UriFrames, data_uri


def uris_of_entry(folder: Path) -> list[str]:
    video = read_frames(folder)
    assert video is not None and isinstance(video.jpegs, UriFrames), folder
    return video.jpegs.uris()


def uris_of_first_open(folder: Path) -> list[str]:
    frame_files._checked.clear()  # as a process opening the entry for the first time
    return uris_of_entry(folder)


def uris_of_jpeg_entry(folder: Path) -> list[str]:
    """The first format's request: each frame read into its own bytes, the checksum taken
    along the way, then each encoded."""
    manifest = json.loads((folder / MANIFEST).read_text())
    frames, crc = [], 0
    with open(folder / FRAMES_BLOB, "rb", buffering=0) as handle:
        for size in manifest["frame_bytes"]:
            frame = handle.read(size)
            crc = zlib.crc32(frame, crc)
            frames.append(frame)
    assert crc == manifest["blob_crc32"], folder
    return [data_uri(frame, JPEG) for frame in frames]


def first_format_copy(entry: Path, into: Path) -> Path:
    """`entry` as the first format held it: the JPEG bytes end to end, their CRC-32."""
    video = read_frames(entry)
    assert video is not None, entry
    blob = b"".join(video.jpegs)
    into.mkdir(parents=True)
    (into / FRAMES_BLOB).write_bytes(blob)
    manifest = json.loads((entry / MANIFEST).read_text())
    (into / MANIFEST).write_text(json.dumps({**manifest, "blob_crc32": zlib.crc32(blob)}))
    return into


def cpu_ms_per_entry(read: Callable[[Path], list[str]], entries: list[Path]) -> float:
    started = time.process_time()
    for entry in entries:
        read(entry)
    return 1000 * (time.process_time() - started) / len(entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cache", type=Path)
    parser.add_argument("--entries", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    found = sorted(p.parent for p in (args.cache / "frames").glob(f"*/{FRAME_URIS}"))
    entries = found[: args.entries]
    with tempfile.TemporaryDirectory(dir="/tmp") as temp:
        old = [first_format_copy(e, Path(temp) / e.name) for e in entries]
        for new, before in zip(entries, old, strict=True):
            assert uris_of_entry(new) == uris_of_jpeg_entry(before), new  # no byte changed
        ways = {
            "uris, first open": (uris_of_first_open, entries),
            "uris, later opens": (uris_of_entry, entries),
            "jpeg (before)": (uris_of_jpeg_entry, old),
        }
        timings: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.repeats):
            for name, (read, folders) in ways.items():
                timings[name].append(cpu_ms_per_entry(read, folders))
    medians = {name: round(statistics.median(t), 1) for name, t in timings.items()}
    size = sum((e / FRAME_URIS).stat().st_size for e in entries) / len(entries)
    result = {
        "entries": len(entries),
        "mb_per_entry": round(size / 1e6, 1),
        "cpu_ms_per_entry": medians,
        "over_before": {
            name: round(ms / medians["jpeg (before)"], 2)
            for name, ms in medians.items()
            if name != "jpeg (before)"
        },
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
