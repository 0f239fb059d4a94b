"""Frame preparation, side by side with the ffmpeg program, in one run.

For every clip of `benchmarks/clips.py`, at the default plan (2 fps, 500 frames, 768 px):

  ours      `hss-inspect frames CLIP --out DIR --no-cache` (a fresh process)
  ffmpeg    `ffmpeg -i CLIP -vf fps=F,scale=...:flags=lanczos -q:v 3 DIR/%05d.jpg`
  floor     `ffmpeg -i CLIP -f null -` (decode only), and PyAV decoding without conversion

and, on the 10- and 28-minute clips, sparse plans of 50 and 10 frames against the dense
plan (in wall time, and in the CPU seconds of the process, which a shared machine's load
moves less); the peak resident memory of each process; and the cache, cold against warm,
as the eval sees it (in-process). Every time is the median of --repeats runs. Ratios
below 1 mean ours is faster.

    python benchmarks/bench_frames.py [--repeats 3] [--clips NAME ...] [--json out.json]
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import av

from benchmarks.clips import CLIPS, bench_arguments, ensure_clips
from hss_inspect.core.settings import DEFAULT_FRAMES, FrameSettings
from hss_inspect.media.frame_cache import cached_sample_video
from hss_inspect.media.plan import plan_frames
from hss_inspect.media.probe import probe_duration, read_packet_index

HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))
SPARSE_CLIPS = ("h264_720p_10min", "h264_480p_28min")
SPARSE_BUDGETS = (50, 10)


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_mb: float
    cpu_seconds: float = 0.0  # user + system of the process (steadier than the wall time)


# Linux carries a process's peak memory across exec, so a child forked from this (large)
# process would report this process's peak. A small interpreter starts each measured
# command instead and reports that command's own peak.
_MEASURE = """
import os, sys, time
started = time.perf_counter()
quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ, file_actions=quiet)
_, status, usage = os.wait4(pid, 0)
print(time.perf_counter() - started, usage.ru_maxrss, os.waitstatus_to_exitcode(status),
      usage.ru_utime + usage.ru_stime)
"""


def run_process(command: list[str], env: dict[str, str] | None = None) -> Measured:
    """Wall time, peak resident memory and CPU seconds of one child process."""
    done = subprocess.run(
        [sys.executable, "-S", "-c", _MEASURE, *command], capture_output=True, text=True, env=env
    )
    seconds, peak_kb, status, cpu = done.stdout.split()
    if int(status) != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr}")
    return Measured(float(seconds), int(peak_kb) / 1024, float(cpu))


def median_of(repeats: int, measure: Callable[[], Measured]) -> Measured:
    runs = [measure() for _ in range(repeats)]
    return Measured(
        statistics.median(r.seconds for r in runs),
        max(r.peak_mb for r in runs),
        statistics.median(r.cpu_seconds for r in runs),
    )


def ours(clip: Path, out: Path, max_frames: int = DEFAULT_FRAMES.max_frames) -> Measured:
    shutil.rmtree(out, ignore_errors=True)
    return run_process(
        [
            HSS_INSPECT,
            "frames",
            str(clip),
            "--out",
            str(out),
            "--no-cache",
            "--max-frames",
            str(max_frames),
        ]
    )


def ffmpeg_frames(clip: Path, out: Path) -> Measured:
    settings = DEFAULT_FRAMES
    plan = plan_frames(probe_duration(clip), settings)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    side = settings.frame_side
    scale = (
        f"scale=w='min({side},iw)':h='min({side},ih)'"
        ":force_original_aspect_ratio=decrease:flags=lanczos"
    )
    return run_process(
        [
            "ffmpeg",
            "-v",
            "error",
            "-i",
            str(clip),
            "-vf",
            f"fps={plan.effective_fps!r},{scale}",
            "-q:v",
            "3",
            "-frames:v",
            str(plan.planned_frames),
            str(out / "%05d.jpg"),
        ]
    )


def ffmpeg_null(clip: Path) -> Measured:
    return run_process(["ffmpeg", "-v", "error", "-i", str(clip), "-f", "null", "-"])


def pyav_decode_only(clip: Path) -> Measured:
    started = time.perf_counter()
    with av.open(str(clip)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for _ in container.decode(stream):
            pass
    return Measured(time.perf_counter() - started, 0.0)


def cache_cold_warm(clip: Path, repeats: int) -> tuple[float, float]:
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as root:
            started = time.perf_counter()
            cached_sample_video(clip, FrameSettings(), root=Path(root))
            cold.append(time.perf_counter() - started)
            for _ in range(3):  # as epochs 2 and 3, and a second model, would read it
                started = time.perf_counter()
                cached_sample_video(clip, FrameSettings(), root=Path(root))
                warm.append(time.perf_counter() - started)
    return statistics.median(cold), statistics.median(warm)


def source_frames(clip: Path) -> int:
    index = read_packet_index(clip)
    return len(index.pts) if index else 0


def bench_clip(name: str, clip: Path, repeats: int, work: Path) -> dict[str, object]:
    frames_out = work / "ours"
    row: dict[str, object] = {"clip": name, "source_frames": source_frames(clip)}
    mine = median_of(repeats, lambda: ours(clip, frames_out))
    theirs = median_of(repeats, lambda: ffmpeg_frames(clip, work / "ffmpeg"))
    floor = median_of(repeats, lambda: ffmpeg_null(clip))
    pyav_floor = median_of(repeats, lambda: pyav_decode_only(clip))
    cold, warm = cache_cold_warm(clip, repeats)
    row.update(
        ours_s=mine.seconds,
        ours_cpu_s=mine.cpu_seconds,
        ffmpeg_s=theirs.seconds,
        vs_ffmpeg=mine.seconds / theirs.seconds,
        floor_s=floor.seconds,
        vs_floor=mine.seconds / floor.seconds,
        pyav_floor_s=pyav_floor.seconds,
        vs_pyav_floor=mine.seconds / pyav_floor.seconds,
        source_fps=int(row["source_frames"]) / mine.seconds,  # type: ignore[call-overload]
        ours_peak_mb=mine.peak_mb,
        ffmpeg_peak_mb=theirs.peak_mb,
        cache_cold_s=cold,
        cache_warm_s=warm,
        warm_speedup=cold / warm,
    )
    if name in SPARSE_CLIPS:
        for budget in SPARSE_BUDGETS:
            sparse = median_of(repeats, lambda b=budget: ours(clip, frames_out, b))  # type: ignore[misc]
            row[f"sparse{budget}_s"] = sparse.seconds
            row[f"sparse{budget}_vs_dense"] = sparse.seconds / mine.seconds
            row[f"sparse{budget}_cpu_vs_dense"] = sparse.cpu_seconds / mine.cpu_seconds
    return row


def print_table(rows: list[dict[str, object]]) -> None:
    columns = [
        ("clip", "clip", "{}"),
        ("src frames", "source_frames", "{}"),
        ("ours s", "ours_s", "{:.2f}"),
        ("ffmpeg s", "ffmpeg_s", "{:.2f}"),
        ("ours/ffmpeg", "vs_ffmpeg", "{:.2f}x"),
        ("floor s", "floor_s", "{:.2f}"),
        ("ours/floor", "vs_floor", "{:.2f}x"),
        ("ours/pyav", "vs_pyav_floor", "{:.2f}x"),
        ("src fps", "source_fps", "{:.0f}"),
        ("peak MB", "ours_peak_mb", "{:.0f}"),
        ("ffmpeg MB", "ffmpeg_peak_mb", "{:.0f}"),
        ("warm x", "warm_speedup", "{:.0f}"),
        ("50f/dense", "sparse50_vs_dense", "{:.2f}x"),
        ("10f/dense", "sparse10_vs_dense", "{:.2f}x"),
        ("50f/dense CPU", "sparse50_cpu_vs_dense", "{:.2f}x"),
    ]
    print("| " + " | ".join(title for title, _, _ in columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        cells = [fmt.format(row[key]) if key in row else "" for _, key, fmt in columns]
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    args = bench_arguments(__doc__, None)
    if shutil.which("ffmpeg") is None:
        sys.exit("this benchmark compares against the ffmpeg program: apt-get install ffmpeg")
    paths = ensure_clips(args.clip_dir, args.clips)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for spec in CLIPS:
            if spec.name in paths:
                rows.append(bench_clip(spec.name, paths[spec.name], args.repeats, Path(work)))
                print(json.dumps(rows[-1]), flush=True)
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
