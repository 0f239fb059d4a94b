"""Peak memory of `inspect eval --batch` with many 500-frame-class video requests in flight.

Builds a release of high-entropy clips (768x432 noise, 100 frames: about 29 MB of JPEG
frames each, so each request is 30-40 MB once base64-encoded, as a 500-frame HSS clip is),
then runs `inspect eval hss_inspect/hss_video` against the provider stand-in
(tests/support/provider_server.py with its batch endpoints) side by side, `--repeats`
times each:

  direct     no batching, Inspect's default concurrency (the alternative)
  batch      `--batch`: Inspect then lets every sample run at once (max_samples 10,000)
  bounded    `--batch` with `--max-samples N` (the recipe of docs/batch.md)

and reports the inspect process's peak RSS (its own `ru_maxrss`), wall time and the
batches the stand-in received, as medians and ratios of medians.

    python -m benchmarks.bench_batch_memory [--clips 8] [--epochs 2] [--repeats 3]
        [--max-samples 4] [--provider anthropic] [--json benchmarks/results_batch_memory.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hss_inspect.providers.batching import batch_rules_for
from tests.support.fixture_repo import FixtureTask, build_repo, write_noise_video
from tests.support.runs import run_eval
from tests.support.servers import provider_stand_in, scripted_models

FRAMES = 100
MODELS = {
    "anthropic": ("anthropic/claude-opus-5", "ANTHROPIC", ("--max-tokens", "1000")),
    "openai": ("openai/gpt-6-astra", "OPENAI", ()),
}


def build_release(root: Path, clips: int) -> Path:
    tasks = tuple(
        FixtureTask(
            f"clip-{i}",
            "PASS",
            "Temporal & Causal Dynamics",
            "Extrapolation",
            "video",
            f"media/noise_{i}.mp4",
            ({"id": "c1", "title": "States the key fact"},),
        )
        for i in range(clips)
    )
    build_repo(root, tasks)
    for i in range(clips):
        write_noise_video(root / "media" / f"noise_{i}.mp4", FRAMES, seed=i)
    return root


def peak_rss_child() -> None:
    """`python -m benchmarks.bench_batch_memory --child OUT CMD...`: run CMD, write its
    peak RSS in bytes to OUT (Linux reports ru_maxrss in KiB)."""
    out, command = sys.argv[2], sys.argv[3:]
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    Path(out).write_text(str(usage.ru_maxrss * 1024))
    sys.exit(os.waitstatus_to_exitcode(status))


VARIANTS = ("direct", "batch", "bounded")


def one_run(
    variant: str,
    provider: str,
    release: Path,
    work: Path,
    judge_url: str,
    cache: Path,
    epochs: int,
    max_samples: int,
) -> dict[str, Any]:
    model, env_prefix, extra = MODELS[provider]
    work.mkdir(parents=True)
    config = work / "batch.yaml"
    config.write_text("send_delay: 2\ntick: 1\n")
    batch_args = ["--batch", str(config)] if variant != "direct" else []
    if variant == "bounded":
        batch_args += ["--max-samples", str(max_samples)]
    rss_file = work / "peak_rss"
    with provider_stand_in(work / "server", {"batch_seconds": 2}) as (url, wire):
        base = url if provider == "anthropic" else url + "/v1"
        started = time.perf_counter()
        log, _ = run_eval(
            "hss_inspect/hss_video",
            work / "logs",
            judge_url,
            "--no-log-images",
            *batch_args,
            *extra,
            model=model,
            epochs=epochs,
            task_args={"dataset": release},
            env={
                f"{env_prefix}_BASE_URL": base,
                f"{env_prefix}_API_KEY": "k",
                "HSS_INSPECT_CACHE": str(cache),
            },
            timeout=1800,
            program=(
                sys.executable,
                "-m",
                "benchmarks.bench_batch_memory",
                "--child",
                str(rss_file),
                str(Path(sys.executable).with_name("inspect")),
            ),
        )
        seconds = time.perf_counter() - started
        entries = [json.loads(line) for line in wire.read_text().splitlines()]
    assert log.status == "success", log.error
    batches = [e for e in entries if e["api"].endswith("-batch")]
    requests = [e for e in entries if e.get("images")]
    return {
        "peak_rss_bytes": int(rss_file.read_text()),
        "seconds": round(seconds, 2),
        "requests": len(requests),
        "request_bytes_max": max(e["body_bytes"] for e in requests),
        "batches": [{"requests": b["requests"], "bytes": b["body_bytes"]} for b in batches],
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        peak_rss_child()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-samples", type=int, default=4)
    parser.add_argument("--provider", choices=sorted(MODELS), default="anthropic")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        release = build_release(root / "release", args.clips)
        runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
        with scripted_models(root / "judge", log_requests=False) as (judge_url, _):
            for repeat in range(args.repeats):
                for variant in VARIANTS:  # interleaved, so drift hits each alike
                    work = root / f"{variant}-{repeat}"
                    result = one_run(
                        variant,
                        args.provider,
                        release,
                        work,
                        judge_url,
                        root / "cache",
                        args.epochs,
                        args.max_samples,
                    )
                    runs[variant].append(result)
                    print(
                        variant,
                        repeat,
                        result["peak_rss_bytes"] // 2**20,
                        "MiB",
                        result["seconds"],
                        "s",
                        flush=True,
                    )
    summary = summarize(runs, args)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


def summarize(runs: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> dict[str, Any]:
    rss = {v: statistics.median(r["peak_rss_bytes"] for r in runs[v]) for v in VARIANTS}
    seconds = {v: statistics.median(r["seconds"] for r in runs[v]) for v in VARIANTS}
    rules = batch_rules_for(MODELS[args.provider][0])
    all_batches = [b for v in ("batch", "bounded") for r in runs[v] for b in r["batches"]]
    return {
        "provider": args.provider,
        "samples": args.clips * args.epochs,
        "frames_per_request": FRAMES,
        "request_bytes_max": max(r["request_bytes_max"] for v in VARIANTS for r in runs[v]),
        "max_samples_bounded": args.max_samples,
        "repeats": args.repeats,
        "peak_rss_mib_median": {v: round(rss[v] / 2**20, 1) for v in VARIANTS},
        "seconds_median": seconds,
        "ratio_peak_rss_batch_to_direct": round(rss["batch"] / rss["direct"], 2),
        "ratio_peak_rss_bounded_to_batch": round(rss["bounded"] / rss["batch"], 2),
        "ratio_peak_rss_bounded_to_direct": round(rss["bounded"] / rss["direct"], 2),
        "batches_per_run": {v: [len(r["batches"]) for r in runs[v]] for v in ("batch", "bounded")},
        "largest_batch_bytes": max((b["bytes"] for b in all_batches), default=0),
        "largest_batch_requests": max((b["requests"] for b in all_batches), default=0),
        "documented_max_batch_bytes": rules.max_batch_bytes,
        "runs": runs,
    }


if __name__ == "__main__":
    main()
