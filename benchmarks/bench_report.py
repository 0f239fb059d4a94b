"""Reading a full-size HSS log for the report, side by side with Inspect's other readers.

Builds one log the size of a Table 1 run (522 tasks x 3 attempts, each sample carrying an
image attachment as a real log carries its frames) with Inspect's log API, then times, in
one process, the ways to get every sample's scores and metadata out of it:

  ours          hss_inspect.report.records.read_logs (the sample summaries, one read)
  streamed      read_eval_log_samples(..., exclude_fields=messages, events, attachments)
  excluded      read_eval_log(..., exclude_fields=the same)
  full          read_eval_log(...) (everything, images included)

and checks that each gives the same pass@1; then times the whole `hss-inspect report LOG`
command (`command_s`). Every time is the median of --repeats runs;
ratios above 1 mean ours is faster.

    python -m benchmarks.bench_report [--repeats 3] [--tasks 522] [--image-kb 32]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalStats, read_eval_log, read_eval_log_samples, write_eval_log
from inspect_ai.model import ModelUsage

from hss_inspect.report.records import read_logs

HEAVY = {"messages", "events", "attachments", "store", "events_data", "timelines"}
MODEL = "anthropic/claude-test"


def build_log(path: Path, tasks: int, image_kb: int) -> None:
    """A log in the HSS shape with one incompressible image attachment per sample, and the
    usage Inspect records per sample and in the stats (by model and by role) with a cache
    plan's record, as the report's bill reads them."""
    from tests.support.logs import JUDGE, TAXONOMY, Item, Try, write_log

    labels = list(TAXONOMY)
    items = [
        Item(
            f"t{i}",
            labels[i % len(labels)],
            "image" if i % 2 else "video",
            tuple(Try((i + epoch) % 3 == 0, reasoning_tokens=100 + i) for epoch in range(3)),
        )
        for i in range(tasks)
    ]
    write_log(path, items, model=MODEL)
    log = read_eval_log(str(path))
    answer = ModelUsage(input_tokens=300, input_tokens_cache_write=220_000, output_tokens=900)
    judging = ModelUsage(input_tokens=4_000, output_tokens=700, reasoning_tokens=500)
    for sample in log.samples or []:
        image = base64.b64encode(os.urandom(image_kb * 1024)).decode()
        sample.attachments = {"frame": f"data:image/jpeg;base64,{image}"}
        sample.model_usage = {MODEL: answer, JUDGE: judging}
        sample.role_usage = {"grader": judging}
        sample.metadata["cache_plan"] = {"strategy": "plan", "write_ttl": "1h"}
    count = len(log.samples or [])
    log.stats = EvalStats(
        model_usage={MODEL: _times(answer, count), JUDGE: _times(judging, count)},
        role_usage={"grader": _times(judging, count)},
    )
    write_eval_log(log, str(path))


def _times(usage: ModelUsage, count: int) -> ModelUsage:
    return sum([usage] * count, ModelUsage())


def pass_at_1_from_samples(samples: Any) -> float:
    per_task: dict[str, list[float]] = {}
    for sample in samples:
        value = sample.scores["rubric_judge"].value
        per_task.setdefault(sample.metadata["task_id"], []).append(float(value["pass"]))
    means = [sum(v) / len(v) for v in per_task.values()]
    return sum(means) / len(means)


def readers(path: str) -> dict[str, Callable[[], float]]:
    def ours() -> float:
        _, records = read_logs([path])
        per_task: dict[str, list[float]] = {}
        for record in records:
            per_task.setdefault(record.task_id, []).append(record.pass_ or 0.0)
        return sum(sum(v) / len(v) for v in per_task.values()) / len(per_task)

    return {
        "ours": ours,
        "streamed": lambda: pass_at_1_from_samples(
            read_eval_log_samples(path, all_samples_required=False, exclude_fields=HEAVY)
        ),
        "excluded": lambda: pass_at_1_from_samples(
            read_eval_log(path, exclude_fields=HEAVY).samples
        ),
        "full": lambda: pass_at_1_from_samples(read_eval_log(path).samples),
    }


def check_bill(path: str, attempts: int) -> None:
    """The reader timed gets the bill's inputs too: every cache write at 1 hour, as each
    sample's cache plan recorded, and the judge's calls apart."""
    (info,), _ = read_logs([path])
    model, judge = info.parties
    if model.written_1h != 220_000 * attempts or judge.tokens.fresh_input != 4_000 * attempts:
        raise AssertionError(f"the bill's usage was not read: {info.parties}")


def measure(path: str, repeats: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {}
    results: dict[str, float] = {}
    for _ in range(repeats):
        for name, read in readers(path).items():
            start = time.perf_counter()
            results[name] = read()
            times.setdefault(name, []).append(time.perf_counter() - start)
    if len({round(v, 9) for v in results.values()}) != 1:
        raise AssertionError(f"the readers disagree: {results}")
    medians = {name: statistics.median(t) for name, t in times.items()}
    row: dict[str, Any] = {f"{name}_s": round(t, 3) for name, t in medians.items()}
    for name in ("streamed", "excluded", "full"):
        row[f"{name}_over_ours"] = round(medians[name] / medians["ours"], 1)
    row["pass_at_1"] = results["ours"]
    row["log_mb"] = round(Path(path).stat().st_size / 1e6, 1)
    row["command_s"] = round(command_seconds(path, repeats), 3)
    return row


def command_seconds(path: str, repeats: int) -> float:
    """`hss-inspect report LOG` as a user runs it, start to end (the leaderboard and the
    bill), median over the repeats."""
    command = [str(Path(sys.executable).with_name("hss-inspect")), "report", path]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=522)
    parser.add_argument("--image-kb", type=int, default=32)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table1.eval"
        build_log(path, args.tasks, args.image_kb)
        check_bill(str(path), 3 * args.tasks)
        row = {"tasks": args.tasks, "attempts": 3 * args.tasks, **measure(str(path), args.repeats)}
    print(json.dumps(row, indent=2))
    if args.json:
        args.json.write_text(json.dumps(row, indent=2) + "\n")


if __name__ == "__main__":
    main()
