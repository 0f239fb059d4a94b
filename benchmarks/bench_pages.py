"""The report's task pages and failure examples, timed on logs in the shape of a Table 1
run (`benchmarks/hss_shape.py`: 522 tasks, 234 clips of 500 frames, logs without
images, labelled), with the media cache warm:

  pages      the task pages of 11 tasks across 3 runs of 3 attempts (target: under 5 s)
  examples   the failure examples of 4 runs of 522 tasks x 3 attempts, one a subdomain,
             with their 11 task pages (target: under 20 s); one run at a frame cap of 250,
             so each clip is written twice

Each is `hss-inspect report`'s extra work for them (`report.pages.write_pages`, into a
fresh folder: every frame file written anew), beside the samples it reads (only those of
the tasks shown, counted) and, as the alternative, reading every sample of the logs
without messages, events or images (Inspect's streaming reader, as `logs.read_samples`).
Then `hss-inspect report LOG` without pages on one of the logs, start to end (wall and CPU
seconds), this tree taking turns with `--baseline REV`'s package (the commit before the
pages): it must not be slower. This tree's report is timed twice: reading the log afresh
(`this_first_read`: its kept records deleted before each run) and again (`this`: the
records `report.record_cache` kept; target 2 s). Medians of --repeats. `--only report`
times the report alone.

    python -m benchmarks.bench_pages [--repeats 3] [--folder benchmarks/.pages]
        [--baseline REV] [--only report] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import print_and_keep
from benchmarks.bench_full_shape import baseline_env
from benchmarks.hss_shape import SUBDOMAINS, RunShape, shape_logs
from hss_inspect.media.cache_folder import CACHE_ENV, REPORTS_SECTION
from hss_inspect.report import logs
from hss_inspect.report.pages import PagesWanted, write_pages
from hss_inspect.report.records import read_logs
from hss_inspect.report.tables import runs_of

HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))
RUNS = (
    RunShape("openai/gpt-a", seed=1),
    RunShape("openai/gpt-b", seed=2),
    RunShape("anthropic/claude-c", seed=3),
    RunShape("openai/gpt-a", max_frames=250, seed=4),
)
PAGE_TASKS = [f"t{index:04d}" for index in range(len(SUBDOMAINS))]


def counted_reads() -> Callable[[], int]:
    """Count the samples read from here on (the pages read samples only through
    `logs.read_chosen_samples`, which asks Inspect for them by id)."""
    calls = [0]
    original = logs.read_eval_log_samples_by_id

    def counting(path: str, samples: Sequence[tuple[str, int]], **options: Any) -> Any:
        calls[0] += len(samples)
        return original(path, samples, **options)

    logs.read_eval_log_samples_by_id = counting  # type: ignore[assignment]
    return lambda: calls[0]


def pages_once(paths: list[str], wanted: PagesWanted) -> dict[str, Any]:
    """Read the logs as the report does, then write the pages into a fresh folder."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        infos, records = read_logs(paths)
        read = time.perf_counter() - started
        cpu = time.process_time()
        written = write_pages(Path(folder), infos, runs_of(records), wanted)
        cpu = time.process_time() - cpu
        total = time.perf_counter() - started
        if written.problems:
            raise AssertionError(f"media not shown: {written.problems}")
        return {
            "read_logs_s": read,
            "pages_s": total - read,
            "pages_cpu_s": cpu,
            "task_pages": len(written.task_pages),
            "figures": written.figures,
            "media_mb": written.media_bytes / 1e6,
        }


def every_sample(paths: list[str]) -> float:
    started = time.perf_counter()
    for path in paths:
        for _ in logs.read_samples(path):
            pass
    return time.perf_counter() - started


def measure(paths: list[str], wanted: PagesWanted, repeats: int) -> dict[str, Any]:
    reads = counted_reads()
    pages_once(paths, wanted)  # the media cache warm, the logs' headers read
    before = reads()
    rows = [pages_once(paths, wanted) for _ in range(repeats)]
    samples_read = (reads() - before) // repeats
    whole = statistics.median(every_sample(paths) for _ in range(repeats))
    found = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
    return {
        "runs": len(paths),
        **{k: round(v, 3) for k, v in found.items()},
        "samples_read": samples_read,
        "every_sample_s": round(whole, 3),
        "every_sample_over_pages": round(whole / found["pages_s"], 1),
    }


def report_seconds(path: str, sides: dict[str, dict[str, str]], repeats: int) -> dict[str, Any]:
    """`hss-inspect report LOG` start to end under each side's package, the sides taking
    turns (so a busy moment of the machine falls on both): wall and CPU seconds."""
    wall: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    # the records kept for `this`, as a report run before leaves them
    report = [HSS_INSPECT, "report", path]
    subprocess.run(report, env=sides["this"], check=True, capture_output=True)
    for _ in range(repeats):
        for name, env in sides.items():
            if name.endswith("_first_read"):
                shutil.rmtree(Path(env[CACHE_ENV]) / REPORTS_SECTION, ignore_errors=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(report, env=env, check=True, capture_output=True)
            wall[name].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    found: dict[str, Any] = {}
    for name in sides:
        found[f"{name}_s"] = round(statistics.median(wall[name]), 3)
        found[f"{name}_cpu_s"] = round(statistics.median(cpu[name]), 3)
    for name in sides:
        if name != "baseline" and "baseline" in sides:
            found[f"{name}_over_baseline"] = round(found[f"{name}_s"] / found["baseline_s"], 2)
            found[f"{name}_over_baseline_cpu"] = round(
                found[f"{name}_cpu_s"] / found["baseline_cpu_s"], 2
            )
    return found


def run(
    folder: Path,
    repeats: int,
    tasks: int = 522,
    clip_tasks: int = 234,
    clip_seconds: int = 251,
    baseline: str | None = None,
    report_only: bool = False,
) -> dict[str, Any]:
    os.environ.setdefault(CACHE_ENV, str(folder / "cache"))
    _, paths = shape_logs(folder, RUNS, tasks, clip_tasks, clip_seconds)
    result: dict[str, Any] = {"tasks": tasks, "clip_tasks": clip_tasks}
    if not report_only:
        result["pages"] = measure(paths[:3], PagesWanted(tasks=PAGE_TASKS), repeats)
        result["examples"] = measure(paths, PagesWanted(examples=1), repeats)
    sides = {"this": dict(os.environ), "this_first_read": dict(os.environ)}
    if baseline:
        sides["baseline"] = baseline_env(folder / "baseline", baseline, sides["this"])
    result["report_without_pages"] = report_seconds(paths[0], sides, repeats)
    shutil.rmtree(folder / "baseline", ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--folder", type=Path, default=Path("benchmarks/.pages"))
    parser.add_argument("--tasks", type=int, default=522)
    parser.add_argument("--clip-tasks", type=int, default=234)
    parser.add_argument("--baseline", metavar="REV", help="the report of this commit beside")
    parser.add_argument("--only", choices=["report"], help="the report without pages alone")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(
        args.folder, args.repeats, args.tasks, args.clip_tasks, baseline=args.baseline,
        report_only=args.only == "report",
    )  # fmt: skip
    print_and_keep(result, args.json)


if __name__ == "__main__":
    main()
