"""The wait for a pool's looks in `hss-inspect build new`: the completion wait as it is
(`media.workers.completed`, each job reporting itself once to a queue) against the wait as
it was (`wait_on_pending` below: `concurrent.futures.wait` on the whole pending set again
after each completion), side by side in one run.

The work is the real call, `media.fingerprint.looks_of` with 2 worker processes, on a pool
of small photos whose looks are already in the cache, as on a second `build new` over the
same pool (the case where the wait is most of the time; a first build's decoding adds the
same cost to both sides). Medians over the repeats, the ratio of medians, at each size;
both sides must return the same looks.

    python -m benchmarks.bench_completion_wait [--sizes 2000 10000] [--repeats 3]
        [--json benchmarks/results_completion_wait.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from PIL import Image

from benchmarks import print_and_keep
from hss_inspect.media import fingerprint, workers
from hss_inspect.media.fingerprint import Look, looks_of

T = TypeVar("T")
JOBS = 2
PHOTO = (160, 120)


def wait_on_pending(futures: Iterable[Future[T]]) -> Iterator[Future[T]]:
    """The completion wait before this benchmark's change, kept to time against."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
        if workers._stopped_by is not None:  # the same check the wait made
            raise workers.Stopped(workers._stopped_by)
        yield from done


def make_pool(folder: Path, count: int) -> list[tuple[Path, str]]:
    """`count` distinct small photos (smooth shapes over noise, so none is blank)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    files = []
    y, x = np.mgrid[0 : PHOTO[1], 0 : PHOTO[0]]
    for n in range(count):
        fx, fy = rng.uniform(0.02, 0.2, 2)
        phase = rng.uniform(0, 6.3)
        wave = 127 + 100 * np.sin(fx * x + phase) * np.cos(fy * y)
        pixels = np.clip(wave + rng.normal(0, 8, wave.shape), 0, 255).astype(np.uint8)
        path = folder / f"photo_{n:05d}.jpg"
        Image.fromarray(pixels).convert("RGB").save(path, quality=90)
        files.append((path, "image"))
    return files


def timed_looks(
    files: list[tuple[Path, str]], cache: Path, waiting: Any
) -> tuple[float, list[str]]:
    fingerprint.completed = waiting  # the one name `looks_of` waits through
    try:
        started = time.perf_counter()
        found = looks_of(files, JOBS, cache)
        seconds = time.perf_counter() - started
    finally:
        fingerprint.completed = workers.completed
    return seconds, [_said(look) for look in found]


def _said(look: Look | str) -> str:
    """A look as the file's digest and its hashes' (or the line of a file not read)."""
    if isinstance(look, str):
        return look
    return f"{look.sha256}:{hashlib.sha256(look.hashes.tobytes()).hexdigest()}"


def one_size(files: list[tuple[Path, str]], cache: Path, repeats: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"queue": [], "wait_on_pending": []}
    results = {}
    for _ in range(repeats):  # alternated, so that drift on the machine hits both sides
        for side, waiting in (("queue", workers.completed), ("wait_on_pending", wait_on_pending)):
            seconds, results[side] = timed_looks(files, cache, waiting)
            times[side].append(seconds)
    new, old = statistics.median(times["queue"]), statistics.median(times["wait_on_pending"])
    return {
        "items": len(files),
        "queue_median_s": round(new, 2),
        "wait_on_pending_median_s": round(old, 2),
        "queue_vs_wait_on_pending": round(new / old, 3),
        "same_looks": results["queue"] == results["wait_on_pending"],
        "queue_s": [round(s, 2) for s in times["queue"]],
        "wait_on_pending_s": [round(s, 2) for s in times["wait_on_pending"]],
    }


def run(sizes: list[int], repeats: int, root: Path) -> dict[str, Any]:
    files, cache = make_pool(root / "pool", max(sizes)), root / "cache"
    looks_of(files, JOBS, cache)  # filled once for every size
    result: dict[str, Any] = {"jobs": JOBS, "photo_size": list(PHOTO), "repeats": repeats}
    for size in sizes:
        result[str(size)] = one_size(files[:size], cache, repeats)
        print(json.dumps({str(size): result[str(size)]}), flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 10_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        result = run(args.sizes, args.repeats, Path(root))
    print_and_keep(result, args.json)


if __name__ == "__main__":
    main()
