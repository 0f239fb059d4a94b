"""The frame-budget sweep's preparation, side by side in one run.

For each clip, into an empty cache each time (as `hss-inspect prepare` fills it):

  sweep     the six budgets of the paper's sweep (10, 25, 50, 100, 250, 500 frames) in
            one decode of the clip (`cached_sample_videos`, what `prepare` runs)
  separate  each budget on its own, one decode per budget (what `prepare` did before)
  alone     the 500-frame budget alone

Repeats are interleaved (alone, sweep, separate, then again) so a busy machine slows all
three alike; every figure is the median of --repeats runs, in wall-clock seconds and in
CPU seconds of this process (all its threads: on a machine shared with other work, CPU
time is the steadier measure of cost). The sweep's cache entries are checked to be
byte-identical to those made budget by budget. Target: sweep / alone at most 1.2.

    python -m benchmarks.bench_sweep [--repeats 3] [--clips NAME ...] [--json out.json]
"""

from __future__ import annotations

import filecmp
import json
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.clips import CLIPS, bench_arguments, ensure_clips
from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.facts import file_sha256
from hss_inspect.media.frame_cache import cached_sample_video, cached_sample_videos
from hss_inspect.media.plan import plan_frames
from hss_inspect.media.probe import probe_duration

BUDGETS = (10, 25, 50, 100, 250, 500)
DEFAULT_CLIPS = ("h264_1080p_2min", "h264_720p_10min", "vp9_720p_1min")


def sweep_settings(budgets: tuple[int, ...] = BUDGETS) -> list[FrameSettings]:
    return [FrameSettings(max_frames=budget) for budget in budgets]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(work: Callable[[Path], object]) -> tuple[tuple[float, float], Path]:
    """Wall and CPU seconds `work` takes to fill a new empty cache, and that cache."""
    root = Path(tempfile.mkdtemp(prefix="hss-sweep-"))
    started, cpu_started = time.perf_counter(), cpu_seconds()
    work(root)
    return (time.perf_counter() - started, cpu_seconds() - cpu_started), root


def entries_identical(a: Path, b: Path) -> bool:
    """Both caches hold the same frame entries, file by file, byte for byte."""
    names_a = sorted(p.name for p in (a / "frames").iterdir())
    names_b = sorted(p.name for p in (b / "frames").iterdir())
    if names_a != names_b:
        return False
    for name in names_a:
        files = sorted(p.name for p in (a / "frames" / name).iterdir())
        _, mismatch, errors = filecmp.cmpfiles(
            a / "frames" / name, b / "frames" / name, files, shallow=False
        )
        if mismatch or errors:
            return False
    return True


def bench_clip(
    name: str, clip: Path, repeats: int, budgets: tuple[int, ...] = BUDGETS
) -> dict[str, object]:
    digest = file_sha256(clip)  # hashing is the same in all three: left out of the times
    settings = sweep_settings(budgets)
    largest = settings[-1]
    times: dict[str, list[tuple[float, float]]] = {"alone": [], "sweep": [], "separate": []}
    identical = True
    for _ in range(repeats):
        seconds, alone = timed(lambda root: cached_sample_video(clip, largest, digest, root))
        times["alone"].append(seconds)
        seconds, swept = timed(lambda root: cached_sample_videos(clip, settings, digest, root))
        times["sweep"].append(seconds)
        seconds, separate = timed(
            lambda root: [cached_sample_video(clip, s, digest, root) for s in settings]
        )
        times["separate"].append(seconds)
        identical = identical and entries_identical(swept, separate)
        for root in (alone, swept, separate):
            shutil.rmtree(root)
    duration = probe_duration(clip)
    frames = [plan_frames(duration, s).planned_frames for s in settings]
    wall = {key: statistics.median(w for w, _ in values) for key, values in times.items()}
    cpu = {key: statistics.median(c for _, c in values) for key, values in times.items()}
    return {
        "clip": name,
        "duration_s": duration,
        "frames_per_budget": frames,
        "alone_s": wall["alone"],
        "sweep_s": wall["sweep"],
        "separate_s": wall["separate"],
        "sweep_vs_alone": wall["sweep"] / wall["alone"],
        "separate_vs_alone": wall["separate"] / wall["alone"],
        "sweep_vs_separate": wall["sweep"] / wall["separate"],
        "alone_cpu_s": cpu["alone"],
        "sweep_cpu_s": cpu["sweep"],
        "separate_cpu_s": cpu["separate"],
        "sweep_vs_alone_cpu": cpu["sweep"] / cpu["alone"],
        "separate_vs_alone_cpu": cpu["separate"] / cpu["alone"],
        "identical": identical,
        "repeats": repeats,
    }


def print_table(rows: list[dict[str, object]]) -> None:
    columns = [
        ("clip", "clip", "{}"),
        ("frames per budget", "frames_per_budget", "{}"),
        ("500 alone s", "alone_s", "{:.2f}"),
        ("sweep s", "sweep_s", "{:.2f}"),
        ("separate s", "separate_s", "{:.2f}"),
        ("sweep / alone", "sweep_vs_alone", "{:.2f}x"),
        ("separate / alone", "separate_vs_alone", "{:.2f}x"),
        ("sweep / separate", "sweep_vs_separate", "{:.2f}x"),
        ("500 alone CPU s", "alone_cpu_s", "{:.2f}"),
        ("sweep CPU s", "sweep_cpu_s", "{:.2f}"),
        ("separate CPU s", "separate_cpu_s", "{:.2f}"),
        ("sweep / alone CPU", "sweep_vs_alone_cpu", "{:.2f}x"),
        ("separate / alone CPU", "separate_vs_alone_cpu", "{:.2f}x"),
        ("byte-identical", "identical", "{}"),
    ]
    print("| " + " | ".join(title for title, _, _ in columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(fmt.format(row[key]) for _, key, fmt in columns) + " |")


def main() -> None:
    args = bench_arguments(__doc__, DEFAULT_CLIPS)
    paths = ensure_clips(args.clip_dir, args.clips)
    rows = []
    for spec in CLIPS:
        if spec.name in paths:
            rows.append(bench_clip(spec.name, paths[spec.name], args.repeats))
            print(json.dumps(rows[-1]), flush=True)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
