"""Several models at the providers' pace: one process against one process a model.

Builds a release of video tasks whose requests are the size of a 500-frame HSS clip's
(100 high-entropy 768x432 frames: ~29 MB of JPEG, ~39 MB once base64-encoded), prepares
their frames once (`hss-inspect prepare`), and runs `hss-inspect recipe table1` against
an OpenAI-compatible stand-in with a fixed latency (benchmarks/latency_stand_in.py), side
by side, `--repeats` times each:

  one                         one model (its eval set in the recipe's process)
  three-in-one                three models in one process (`--processes 1`, as before)
  three-apart                 three models, each in its own process (the default)
  three-apart-logging-images  three-apart without `--no-log-images` (the option's effect)
  three-apart-no-realtime     three-apart with `--no-log-realtime` too (that one's effect)
  three-ray                   three models as Ray tasks on a local Ray cluster (`--engine
                              ray`), when Ray is installed (its workers' CPU and memory are
                              the cluster's, outside the recipe's process tree)

All but three-apart-logging-images run with `--no-log-images`, as the full-run checklist
says.

For each: wall time against the latency floor (the samples' requests end to end at the
stand-in's latency, at `--max-samples` a model), the CPU of the whole process tree per
sample-epoch against the floor measured in the same run (base64 plus one JSON encoding of
every byte sent, timed here on bytes of the same size), and the tree's peak memory
(sampled every 0.2 s). Medians over the repeats; ratios of medians.

    python -m benchmarks.bench_processes [--clips 12] [--latency 4] [--repeats 3]
        [--max-samples 12] [--json benchmarks/results_processes.json]
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_batch_memory import FRAMES, build_release

HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))
PAPER_MODELS = ("GPT-6-astra", "Claude-Opus-5.5", "Gemini-3.8-flash")
JUDGE = "judge-claude-opus-5"


def start_stand_in(work: Path, latency: float) -> tuple[subprocess.Popen[bytes], str, Path]:
    port_file, stats = work / "port", work / "stats.jsonl"
    port_file.unlink(missing_ok=True)  # a kept folder's, from the last run
    stats.touch()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.latency_stand_in",
            str(port_file),
            str(latency),
            str(stats),
        ]
    )
    deadline = time.monotonic() + 30
    while not (port_file.exists() and port_file.read_text()):
        if time.monotonic() > deadline:
            raise RuntimeError("the stand-in did not start")
        time.sleep(0.1)
    return server, f"http://127.0.0.1:{port_file.read_text()}/v1", stats


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and everything under it."""
    total, frontier, seen = 0, [pid], set()
    while frontier:
        current = frontier.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next(
                int(row.split()[1]) * 1024
                for row in status.splitlines()
                if row.startswith("VmRSS:")
            )
            for task in Path(f"/proc/{current}/task").iterdir():
                frontier += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, StopIteration):
            continue
    return total


def run_recipe(
    models: tuple[str, ...],
    flags: list[str],
    release: Path,
    work: Path,
    env: dict[str, str],
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> dict[str, Any]:
    """Run the recipe (inside `wrap`'s command, a profiler's, if given): its wall seconds,
    the CPU seconds of its process tree and the tree's peak resident bytes."""
    command = [HSS_INSPECT, "recipe", "table1", "--models", ",".join(models)]
    for n, name in enumerate(models):
        command += ["--as", f"{name}=openai-api/standin/model-{n}"]
    command += ["--as", f"{JUDGE}=openai-api/standin/judge", "-T", f"dataset={release}"]
    command += ["--log-dir", str(work / "logs"), *flags]
    peak = 0
    started = time.perf_counter()
    child = subprocess.Popen(
        wrap(command) if wrap else command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(child.pid))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch)
    watcher.start()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    done.set()
    watcher.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command}: {child.stderr.read().decode() if child.stderr else ''}")
    # wait4's usage counts the child and every descendant it waited for (its processes)
    return {"seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime, "peak_bytes": peak}


def encoding_seconds_per_byte(sample_bytes: int, parts: int = FRAMES) -> float:
    """Base64 and one JSON encoding of a request holding this many bytes of JPEG in this
    many images, per byte sent (the least any client must spend on it)."""
    jpegs = [os.urandom(sample_bytes // parts) for _ in range(parts)]
    timings = []
    for _ in range(9):
        started = time.perf_counter()
        parts = [
            {
                "type": "image_url",
                "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(j).decode()},
            }
            for j in jpegs
        ]
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": parts}]})
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) / len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=12)
    parser.add_argument("--latency", type=float, default=4.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-samples", type=int, default=12)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    limits = ["--max-samples", str(args.max_samples), "--max-connections", str(args.max_samples)]
    lean = [*limits, "--no-log-images"]  # the full-run checklist's
    scenarios: dict[str, tuple[tuple[str, ...], list[str]]] = {
        "one": (PAPER_MODELS[:1], lean),
        "three-in-one": (PAPER_MODELS, [*lean, "--processes", "1"]),
        "three-apart": (PAPER_MODELS, lean),
        "three-apart-logging-images": (PAPER_MODELS, limits),
        "three-apart-no-realtime": (PAPER_MODELS, [*lean, "--no-log-realtime"]),
    }
    try:
        import ray  # noqa: F401

        scenarios["three-ray"] = (PAPER_MODELS, [*lean, "--engine", "ray"])
    except ModuleNotFoundError:
        pass
    with tempfile.TemporaryDirectory(dir="/tmp") as temp:
        work = Path(temp)
        release = build_release(work / "release", args.clips)
        env = {
            **os.environ,
            "HSS_INSPECT_CACHE": str(work / "cache"),
            "STANDIN_API_KEY": "k",
            "RAY_TMPDIR": str(work),
            "INSPECT_DISPLAY": "none",
        }
        subprocess.run(
            [HSS_INSPECT, "prepare", "--dataset", str(release), "--media", "video"],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        server, url, stats = start_stand_in(work, args.latency)
        env["STANDIN_BASE_URL"] = url
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in scenarios}
        sent: dict[str, list[int]] = {name: [] for name in scenarios}
        try:
            for repeat in range(args.repeats):
                for name, (models, flags) in scenarios.items():
                    before = len(stats.read_text().splitlines())
                    result = run_recipe(models, flags, release, work / f"{name}-{repeat}", env)
                    lines = stats.read_text().splitlines()[before:]
                    sent[name].append(sum(json.loads(line)["bytes"] for line in lines))
                    result["requests"] = len(lines)
                    runs[name].append(result)
                    print(name, repeat, {k: round(v, 2) for k, v in result.items()}, flush=True)
        finally:
            server.terminate()
        per_byte = encoding_seconds_per_byte(29_000_000)
    print(json.dumps(summarize(runs, sent, per_byte, args), indent=2))
    if args.json:
        args.json.write_text(json.dumps(summarize(runs, sent, per_byte, args), indent=2) + "\n")


def summarize(
    runs: dict[str, list[dict[str, Any]]],
    sent: dict[str, list[int]],
    per_byte: float,
    args: argparse.Namespace,
) -> dict[str, Any]:
    # a sample-epoch is its candidate request then its judge's, max_samples at once
    floor = math.ceil(args.clips * 3 / args.max_samples) * 2 * args.latency
    table: dict[str, Any] = {}
    for name, results in runs.items():
        models = 1 if name == "one" else len(PAPER_MODELS)
        sample_epochs = models * args.clips * 3  # table1: 3 attempts
        wall = statistics.median(r["seconds"] for r in results)
        cpu = statistics.median(r["cpu"] for r in results)
        cpu_floor = statistics.median(sent[name]) * per_byte
        table[name] = {
            "wall_s": round(wall, 1),
            "wall_over_latency_floor": round(wall / floor, 2),
            "cpu_s": round(cpu, 1),
            "cpu_s_per_sample_epoch": round(cpu / sample_epochs, 3),
            "cpu_over_encoding_floor": round(cpu / cpu_floor, 2) if cpu_floor else None,
            "peak_tree_mb": round(statistics.median(r["peak_bytes"] for r in results) / 1e6),
        }
    one = table["one"]["wall_s"]
    return {
        "clips": args.clips,
        "latency_s": args.latency,
        "repeats": args.repeats,
        "latency_floor_s": floor,
        "encoding_floor_s_per_mb": round(per_byte * 1e6, 4),
        "scenarios": table,
        "three_over_one_wall": {
            name: round(table[name]["wall_s"] / one, 2) for name in table if name != "one"
        },
    }


if __name__ == "__main__":
    main()
