"""A full-shape one-model HSS run at a provider's pace, and the report on its log; with
`--baseline REV`, the same run of another commit's package beside it, interleaved.

Builds a release the shape of HSS (paper Sec. 3: 522 tasks, 234 of them clips, the rest
images) whose clip requests are HSS's: HSS's clips average 4.5 minutes, so a clip request
carries the 500-frame cap, each frame at 768 px after its time label (1,002 content parts
with the note and the question). Each clip is 250 s at 2 fps of a detailed 768x432 scene
panning (smooth texture with a little grain, x264 at CRF 18), whose JPEG frames are
~58 KB, as the log-size benchmark measured frames of detailed footage at 768 px: ~29 MB a
request, ~39 MB once base64-encoded. `--frames 100` builds the earlier shape instead: 100
high-entropy 768x432 frames (~290 KB each: the same ~29 MB in a fifth of the parts). The
tasks share `--clips` distinct clips and `--images` distinct images: each request reads
its frames from the media cache on disk as a run of distinct clips does. It prepares the
media once a side (`hss-inspect prepare`, each side with its own cache folder), then,
`--repeats` times:

  run       `hss-inspect recipe table1` for one model, 3 attempts, `--max-connections` and
            `--max-samples` 32, against an OpenAI-compatible stand-in with a fixed latency
            (benchmarks/latency_stand_in.py), with Inspect's switches of the full-run
            checklist (`checklist`: `--no-log-images --no-log-realtime --no-score-display`)
            and with `--no-log-images` alone (`images-off`, the checklist before)
  report    `hss-inspect report` on that run's log folder, cold (a fresh media cache folder,
            so no model lookup is remembered) and warm (run again)

and prints wall time against the latency floor (every request end to end at the stand-in's
latency, 32 at once), the CPU of the run's whole process tree against the floor (base64
plus one JSON encoding of every byte sent, timed on bytes of the same size and parts
between the runs), peak memory, and the report's seconds. Medians over the repeats; with
a baseline, each figure of this tree over the baseline's.

The baseline side runs REV's `src/` (exported with `git archive` into the work folder,
first on PYTHONPATH) in this environment: only the package differs. The two sides run
alternately, in turn order reversed every repeat, so a change in the machine's load falls
on both. `--profile` samples every run with py-spy and prints where its CPU went.

    python -m benchmarks.bench_full_shape [--frames 500] [--clips 234] [--images 288]
        [--latency 1] [--repeats 2] [--baseline REV] [--only checklist] [--profile]
        [--work DIR] [--json benchmarks/results_full_shape.json]
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
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image

from benchmarks.bench_batch_memory import FRAMES as NOISE_FRAMES
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
CLIP_BYTES = 29_000_000  # JPEG a clip request carries, at either shape
THIS_TREE = "after"
BASELINE = "before"


def build_full_release(root: Path, clips: int, images: int, frames: int) -> Path:
    """522 tasks, 234 clips: clip task i shows clip i mod `clips`, image task j image j mod
    `images`; clips of `frames` frames (500: HSS's shape; 100: the earlier one)."""
    tasks = [
        _task(f"clip-{i}", "Temporal & Causal Dynamics", "Extrapolation", "video",
              f"media/clip_{i % clips}.mp4")
        for i in range(CLIP_TASKS)
    ] + [
        _task(f"image-{j}", "Physical & Spatial Logic", "Spatial Reasoning", "image",
              f"media/noise_{j % images}.jpg")
        for j in range(TASKS - CLIP_TASKS)
    ]  # fmt: skip
    build_repo(root, tuple(tasks))
    for i in range(clips):
        path = root / "media" / f"clip_{i}.mp4"
        if frames == 500:
            write_footage_clip(path, seed=i)
        else:
            write_noise_video(path, NOISE_FRAMES, seed=i)
    rng = np.random.default_rng(0)
    for j in range(images):
        pixels = rng.integers(0, 256, (960, 1280, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(root / "media" / f"noise_{j}.jpg", quality=90)
    return root


def write_footage_clip(path: Path, seed: int, size: tuple[int, int] = (768, 432)) -> None:
    """250 s at 2 fps (500 frames, the cap) of a detailed scene panning 7 px a frame:
    26 px random cells, smoothed, with +-2 of grain."""
    width, height = size
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, 255, (height // 26 + 2, 2 * width // 26 + 2, 3), dtype=np.uint8)
    smooth = Image.fromarray(cells).resize((2 * width + 52, height + 52), Image.Resampling.BICUBIC)
    scene = np.asarray(smooth)[:height, : 2 * width].astype(np.int16)
    scene = np.clip(scene + rng.integers(-2, 3, scene.shape), 0, 255).astype(np.uint8)
    with av.open(str(path), "w") as container:
        stream = container.add_stream(
            "libx264", rate=2, options={"preset": "veryfast", "crf": "18"}
        )
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for index in range(500):
            offset = (index * 7) % width
            frame = av.VideoFrame.from_ndarray(
                np.ascontiguousarray(scene[:, offset : offset + width]), format="rgb24"
            )
            frame.pts, frame.time_base = index, Fraction(1, 2)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


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


def baseline_env(work: Path, revision: str, env: dict[str, str]) -> dict[str, str]:
    """`env` running `revision`'s package: its `src/` (and the YAML it ships), exported
    into `work`, first on the path (checked: the package imported from there)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{revision}^{{commit}}"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    tree = (work / f"baseline-{commit[:12]}").resolve()
    if not (tree / "src" / "hss_inspect").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        # the packaged YAML lives beside src/ in a checkout (core/config.py), where it exists
        listed = subprocess.run(
            ["git", "ls-tree", "--name-only", commit], check=True, capture_output=True, text=True
        ).stdout.split()
        folders = [f for f in ("src", "task_configs", "scorers") if f in listed]
        archive = subprocess.run(
            ["git", "archive", commit, *folders], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    side = {**env, "PYTHONPATH": os.pathsep.join([str(tree / "src"), env.get("PYTHONPATH", "")])}
    if not package_of(side).is_relative_to(tree):
        raise RuntimeError(f"the baseline's package was not the one imported: {package_of(side)}")
    return side


def package_of(env: dict[str, str]) -> Path:
    """The package a command run with `env` imports."""
    found = subprocess.run(
        [sys.executable, "-c", "import hss_inspect; print(hss_inspect.__file__)"],
        env=env, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    return Path(found).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, choices=(500, 100), default=500)
    parser.add_argument("--clips", type=int, default=CLIP_TASKS)
    parser.add_argument("--images", type=int, default=TASKS - CLIP_TASKS)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--baseline", metavar="REV", help="also run this commit's package")
    parser.add_argument("--profile", action="store_true", help="sample the runs with py-spy")
    parser.add_argument("--only", choices=SCENARIOS, help="run this scenario alone")
    parser.add_argument(
        "--work", type=Path, help="keep the release, media caches, logs and profiles here "
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
        release = work / f"release-{args.frames}f-{args.clips}-{args.images}"
        if not (release / "data").is_dir():
            build_full_release(release, args.clips, args.images, args.frames)
        env = {**os.environ, "STANDIN_API_KEY": "k", "INSPECT_DISPLAY": "none"}
        sides = {THIS_TREE: env}
        if args.baseline:
            sides[BASELINE] = baseline_env(work, args.baseline, env)
        for name, side_env in sides.items():
            side_env["HSS_INSPECT_CACHE"] = str(work / f"cache-{name}-{release.name}")
            subprocess.run(
                [HSS_INSPECT, "prepare", "--dataset", str(release)],
                env=side_env, check=True, capture_output=True,
            )  # fmt: skip
        server, url, stats = start_stand_in(work, args.latency)
        for side_env in sides.values():
            side_env["STANDIN_BASE_URL"] = url
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {
            side: {name: [] for name in scenarios} for side in sides
        }
        floors: list[float] = []
        try:
            for repeat in range(args.repeats):
                order = list(sides) if repeat % 2 == 0 else list(reversed(sides))
                for name, flags in scenarios.items():
                    for side in order:
                        floors.append(encoding_seconds_per_byte(CLIP_BYTES, args.frames))
                        folder = work / f"{side}-{name}-{repeat}"
                        result = one_repeat(folder, release, sides[side], flags, stats, args)
                        runs[side][name].append(result)
        finally:
            server.terminate()
    per_byte = statistics.median(floors)
    summary: dict[str, Any] = {
        "shape": shape(args),
        "packages": {side: str(package_of(side_env)) for side, side_env in sides.items()},
        "encoding_floor_s_per_gb": round(per_byte * 1e9, 2),
        "encoding_floor_s_per_gb_range": [round(min(floors) * 1e9, 2), round(max(floors) * 1e9, 2)],
    }
    for side, by_name in runs.items():
        summary[side] = {
            name: summarize(results, per_byte, args) for name, results in by_name.items()
        }
    if args.baseline:
        summary["after_over_before"] = {
            name: ratios(summary[THIS_TREE][name], summary[BASELINE][name]) for name in scenarios
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
    if len(lines) != 2 * TASKS * ATTEMPTS:  # a candidate's request and its judge's each
        raise RuntimeError(f"{folder.name}: {len(lines)} requests reached the stand-in")
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
        "frames_per_clip_request": args.frames,
        "content_parts_per_clip_request": 2 * args.frames + 2,  # the note, labels, question
        "distinct_clips": args.clips,
        "distinct_images": args.images,
        "attempts": ATTEMPTS,
        "connections": CONNECTIONS,
        "latency_s": args.latency,
        "latency_floor_s": latency_floor(args.latency),
        "repeats": args.repeats,
        "baseline": args.baseline,
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
        "runs": [{k: round(v, 2) for k, v in r.items()} for r in runs],
    }


def ratios(after: dict[str, Any], before: dict[str, Any]) -> dict[str, float]:
    """This tree's figures over the baseline's: below 1, this tree spends less."""
    keys = ("wall_s", "cpu_s", "peak_tree_mb", "report_cold_s", "report_warm_s")
    return {key: round(after[key] / before[key], 3) for key in keys}


if __name__ == "__main__":
    main()
