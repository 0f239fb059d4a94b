"""A full-shape one-model HSS run at a provider's pace, and the report on its log.

Builds a release the shape of HSS (paper Sec. 3: 522 tasks, 234 of them clips, the rest
images), whose clip requests are the size of a clip's at the 500-frame cap (100
high-entropy 768x432 frames: ~29 MB of JPEG, ~39 MB once base64-encoded). The tasks share
`--clips` distinct clips and `--images` distinct images: each request reads its frames from
the media cache on disk as a run of distinct clips does, so the harness's work per request
is the same. It prepares the media once (`hss-inspect prepare`), then, `--repeats` times:

  run       `hss-inspect recipe table1` for one model, 3 attempts, `--max-connections` and
            `--max-samples` 32, against an OpenAI-compatible stand-in with a fixed latency
            (benchmarks/latency_stand_in.py), with Inspect's switches of the full-run
            checklist (`checklist`: `--no-log-images --no-log-realtime --no-score-display`)
            and with `--no-log-images` alone (`images-off`, the checklist before)
  report    `hss-inspect report` on that run's log folder, cold (a fresh media cache folder,
            so no model lookup is remembered) and warm (run again)

and prints wall time against the latency floor (every request end to end at the stand-in's
latency, 32 at once), the CPU of the run's whole process tree against the floor measured
in the same run (base64 plus one JSON encoding of every byte sent, timed here on bytes of
the same size), peak memory, and the report's seconds. Medians over the repeats.
`--profile` samples the run with py-spy and prints where its CPU went.

    python -m benchmarks.bench_full_shape [--clips 24] [--images 24] [--latency 1]
        [--repeats 2] [--profile] [--json benchmarks/results_full_shape.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from benchmarks.bench_batch_memory import FRAMES
from benchmarks.bench_processes import (
    HSS_INSPECT,
    encoding_seconds_per_byte,
    run_recipe,
    start_stand_in,
)
from benchmarks.profile_categories import RATE, categories, print_categories
from tests.support.fixture_repo import FixtureTask, build_repo, write_noise_video

TASKS, CLIP_TASKS, ATTEMPTS, CONNECTIONS = 522, 234, 3, 32
MODEL = "GPT-6-astra"
SCENARIOS = {
    "checklist": ["--no-log-images", "--no-log-realtime", "--no-score-display"],
    "images-off": ["--no-log-images"],
}


def build_full_release(root: Path, clips: int, images: int) -> Path:
    """522 tasks, 234 clips: clip task i shows clip i mod `clips`, image task j image j mod
    `images`."""
    tasks = [
        _task(f"clip-{i}", "Temporal & Causal Dynamics", "Extrapolation", "video",
              f"media/noise_{i % clips}.mp4")
        for i in range(CLIP_TASKS)
    ] + [
        _task(f"image-{j}", "Physical & Spatial Logic", "Spatial Reasoning", "image",
              f"media/noise_{j % images}.jpg")
        for j in range(TASKS - CLIP_TASKS)
    ]  # fmt: skip
    build_repo(root, tuple(tasks))
    for i in range(clips):
        write_noise_video(root / "media" / f"noise_{i}.mp4", FRAMES, seed=i)
    rng = np.random.default_rng(0)
    for j in range(images):
        pixels = rng.integers(0, 256, (960, 1280, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(root / "media" / f"noise_{j}.jpg", quality=90)
    return root


def _task(task_id: str, domain: str, subdomain: str, kind: str, path: str) -> FixtureTask:
    return FixtureTask(
        task_id, "PASS", domain, subdomain, kind, path,
        ({"id": "c1", "title": "States the key fact"},),
    )  # fmt: skip


def timed_report(logs: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([HSS_INSPECT, "report", str(logs)], env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def profiled(command: list[str], out: Path) -> list[str]:
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    return [py_spy, "record", "--subprocesses", "--nonblocking", "-r", "50", "--format",
            "raw", "-o", str(out), "--", *command]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=CLIP_TASKS)
    parser.add_argument("--images", type=int, default=TASKS - CLIP_TASKS)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--profile", action="store_true", help="sample the runs with py-spy")
    parser.add_argument("--only", choices=SCENARIOS, help="run this scenario alone")
    parser.add_argument(
        "--work", type=Path, help="keep the release, media cache, logs and profiles here "
        "(reused by the next run) instead of a temporary folder"
    )  # fmt: skip
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    limits = ["--max-samples", str(CONNECTIONS), "--max-connections", str(CONNECTIONS)]
    scenarios = {
        name: [*limits, *flags] for name, flags in SCENARIOS.items() if args.only in (None, name)
    }
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(dir="/tmp")))
        release = work / f"release-{args.clips}-{args.images}"
        if not (release / "data").is_dir():
            build_full_release(release, args.clips, args.images)
        env = {
            **os.environ,
            "HSS_INSPECT_CACHE": str(work / "cache"),
            "STANDIN_API_KEY": "k",
            "INSPECT_DISPLAY": "none",
        }
        subprocess.run(
            [HSS_INSPECT, "prepare", "--dataset", str(release)],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        server, url, stats = start_stand_in(work, args.latency)
        env["STANDIN_BASE_URL"] = url
        per_byte = encoding_seconds_per_byte(29_000_000)  # timed while the machine is idle
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in scenarios}
        try:
            for repeat in range(args.repeats):
                for name, flags in scenarios.items():
                    folder = work / f"{name}-{repeat}"
                    runs[name].append(one_repeat(folder, release, env, flags, stats, args))
        finally:
            server.terminate()
    summary = {
        "shape": shape(args),
        "encoding_floor_s_per_gb": round(per_byte * 1e9, 2),
        **{name: summarize(results, per_byte, args) for name, results in runs.items()},
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


def one_repeat(
    folder: Path,
    release: Path,
    env: dict[str, str],
    flags: list[str],
    stats: Path,
    args: argparse.Namespace,
) -> dict[str, Any]:
    before = len(stats.read_text().splitlines())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    profile = folder / "profile.txt"
    wrap = (lambda command: profiled(command, profile)) if args.profile else None
    result = run_recipe((MODEL,), flags, release, folder, env, wrap=wrap)
    if args.profile:  # the profiler does not wait for the run: its CPU is the samples'
        result["cpu"] = categories(profile)[0] / RATE
    lines = stats.read_text().splitlines()[before:]
    result["bytes_sent"] = sum(json.loads(line)["bytes"] for line in lines)
    result["requests"] = len(lines)
    cold_env = {**env, "HSS_INSPECT_CACHE": str(folder / "fresh-cache")}
    result["report_cold"] = timed_report(folder / "logs", cold_env)
    result["report_warm"] = timed_report(folder / "logs", cold_env)
    print(folder.name, {k: round(v, 2) for k, v in result.items()}, flush=True)
    if args.profile:
        print_categories(profile)
    return result


def shape(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "tasks": TASKS,
        "clip_tasks": CLIP_TASKS,
        "distinct_clips": args.clips,
        "distinct_images": args.images,
        "attempts": ATTEMPTS,
        "connections": CONNECTIONS,
        "latency_s": args.latency,
        "latency_floor_s": latency_floor(args.latency),
        "repeats": args.repeats,
        "profiled": args.profile,
    }


def latency_floor(latency: float) -> float:
    # a sample-epoch is its candidate request then its judge's, 32 at once
    return -(-TASKS * ATTEMPTS // CONNECTIONS) * 2 * latency


def summarize(
    runs: list[dict[str, Any]], per_byte: float, args: argparse.Namespace
) -> dict[str, Any]:
    floor = latency_floor(args.latency)
    wall = statistics.median(r["seconds"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    cpu_floor = statistics.median(r["bytes_sent"] for r in runs) * per_byte
    return {
        "requests": statistics.median(r["requests"] for r in runs),
        "gb_sent": round(statistics.median(r["bytes_sent"] for r in runs) / 1e9, 2),
        "wall_s": round(wall, 1),
        "wall_over_latency_floor": round(wall / floor, 2),
        "cpu_s": round(cpu, 1),
        "cpu_s_per_sample_epoch": round(cpu / (TASKS * ATTEMPTS), 3),
        "encoding_floor_s": round(cpu_floor, 1),
        "cpu_over_encoding_floor": round(cpu / cpu_floor, 2),
        "peak_tree_mb": round(statistics.median(r["peak_bytes"] for r in runs) / 1e6),
        "report_cold_s": round(statistics.median(r["report_cold"] for r in runs), 2),
        "report_warm_s": round(statistics.median(r["report_warm"] for r in runs), 2),
    }


if __name__ == "__main__":
    main()
