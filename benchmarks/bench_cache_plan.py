"""What a 3-attempt HSS run is billed, by caching strategy, against the caching stand-ins.

Every run goes through Inspect's real `anthropic/` and `openai/` providers to stand-ins that
cache and bill as those providers document (tests/support/prompt_cache.py), on a clock 60
times as fast (`faketime`) for both the stand-in and `inspect`, so that a run of a few real
minutes has a full run's gap between a sample's attempts. Each figure is Inspect's own
recorded cost at the given prices (`--model-cost-config`), its output tokens at the output
price taken off for "billed input", never the package's arithmetic; a batched run's at the
provider's documented batch price (Inspect's recorded cost applies no batch discount).

  python -m benchmarks.bench_cache_plan [--tasks 24] [--json benchmarks/results_cache_plan.json]

It prints, as ratios to caching off (the same tokens billed at the plain input price):
- a gap between attempts of about 15 minutes (5-60): Inspect's default, the plan, batch,
  and batch with the plan, for anthropic/ and openai/ (target for the plan: at most 0.75x
  on each);
- the same with a gap over an hour (the plan: never above 1.00x);
- an agentic run with the plan against caching off and Inspect's default;
- `hss-inspect estimate --pilot` from a 4-task pilot, against the full run's billed total
  (target: within 10%).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hss_inspect.providers.batching import batch_rules_for
from tests.support.billing import PRICES, BilledRun, billed_run, billing_release

MODELS = ("anthropic/claude-opus-5", "openai/gpt-6-astra")
# (label, -T cache_plan, through the batch API)
STRATEGIES = (
    ("caching off", "off", False),
    ("Inspect's default", "inspect", False),
    ("the plan", "plan", False),
    ("batch", "inspect", True),
    ("batch + the plan", "plan", True),
)
SPEED = 60.0
# the runs with a gap over an hour go faster still, to keep their real time short
LONG_SPEED = 240.0


def gap_runs(
    model: str, release: Path, work: Path, latency: float, media: Path, speed: float = SPEED
) -> dict[str, BilledRun]:
    runs = {}
    for label, strategy, batch in STRATEGIES:
        started = time.monotonic()
        runs[label] = billed_run(
            model,
            release,
            work / f"{label.replace(' ', '_').replace('+', 'and')}",
            strategy=strategy,
            speed=speed,
            latency=latency,
            batch=batch,
            cache=media,
        )
        print(f"  {model} {label}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    return runs


def ratios(runs: dict[str, BilledRun]) -> dict[str, Any]:
    billed = {label: billed_input(label, run) for label, run in runs.items()}
    return {
        "billed_input": billed,
        "vs_off": {label: amount / billed["caching off"] for label, amount in billed.items()},
        "gap_minutes": gap_minutes(runs["the plan"]),
    }


def billed_input(label: str, run: BilledRun) -> float:
    """Inspect's recorded input cost; a batched run's at the provider's batch price
    (Inspect's recorded cost applies no batch discount)."""
    if not label.startswith("batch"):
        return run.billed_input
    multiplier = batch_rules_for(run.model).price_multiplier
    assert multiplier is not None, f"{run.model} has no batch API"
    return run.billed_input * multiplier


def gap_minutes(run: BilledRun) -> float:
    """The median time between a sample's attempts in the run, from its log."""
    starts: dict[str, list[float]] = {}
    for sample in run.log.samples or []:
        starts.setdefault(str(sample.id), []).append(_seconds(sample.started_at))
    gaps = sorted(
        later - earlier
        for times in starts.values()
        for earlier, later in zip(sorted(times), sorted(times)[1:], strict=False)
    )
    return gaps[len(gaps) // 2] / 60 if gaps else 0.0


def _seconds(stamp: Any) -> float:
    from datetime import datetime

    return datetime.fromisoformat(str(stamp)).timestamp()


def agentic_runs(work: Path, tasks: int, latency: float) -> dict[str, Any]:
    release = billing_release(
        work / "agentic-release", videos=tasks - 1, images=1, behaviour="AGENT"
    )
    runs = {
        label: billed_run(
            MODELS[0],
            release,
            work / f"agentic-{strategy}",
            task="hss_inspect/hss_agentic",
            strategy=strategy,
            speed=SPEED,
            latency=latency,
        )
        for label, strategy, batch in STRATEGIES
        if not batch
    }
    return ratios(runs)


def estimate_against_run(release: Path, work: Path, latency: float, media: Path) -> dict[str, Any]:
    """A 4-task pilot of the plan, `hss-inspect estimate --pilot` from it, and the full run."""
    model = MODELS[0]
    pilot = billed_run(
        model, release, work / "pilot", "--limit", "4", speed=SPEED, latency=latency, cache=media
    )
    full = billed_run(model, release, work / "full", speed=SPEED, latency=latency, cache=media)
    prices = work / "prices.json"
    prices.write_text(json.dumps({model: PRICES[model]}))
    done = subprocess.run(
        [
            sys.executable, "-m", "hss_inspect.commands.cli", "estimate", "--model", model,
            "--dataset", str(release), "--pilot", str(pilot.log.location), "--max-connections",
            "1", "--model-cost-config", str(prices), "--grader", "hss/scripted", "--json",
        ],
        capture_output=True, text=True, check=True,
        env={**__import__("os").environ, "HSS_INSPECT_CACHE": str(media)},
    )  # fmt: skip
    estimate = json.loads(done.stdout)["cost"]
    plan = next(r for r in estimate["strategies"] if r["strategy"] == "the plan")
    estimated = plan["input_dollars"] + plan["output_dollars"]
    return {
        "pilot_tasks": 4,
        "estimated_dollars": estimated,
        "billed_dollars": full.billed,
        "estimate_vs_billed": estimated / full.billed,
        "assumptions": estimate["assumptions"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=24, help="tasks per run (2 of them images)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    results: dict[str, Any] = {
        "tasks": args.tasks,
        "epochs": 3,
        "clock_speed": {"gap_under_an_hour": SPEED, "gap_over_an_hour": LONG_SPEED},
    }
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        release = billing_release(work / "release", videos=args.tasks - 2, images=2)
        media = work / "media-cache"
        # a sample-epoch of about 40 s on the run's clock for 24 tasks: the next attempt
        # ~15 minutes later (inside OpenAI's 30-minute life, with a batch's turnaround too);
        # of about 3.5 minutes: ~85 minutes later (the work on this machine counts 4 times
        # as much on the faster clock). Under the SDKs' 600 s timeout.
        short = min(500.0, 15 * 60 / args.tasks - 20)
        long = min(500.0, 85 * 60 / args.tasks - 80)
        for model in MODELS:
            results.setdefault("gap_under_an_hour", {})[model] = ratios(
                gap_runs(model, release, work / f"short-{model.split('/')[0]}", short, media)
            )
            results.setdefault("gap_over_an_hour", {})[model] = ratios(
                gap_runs(
                    model, release, work / f"long-{model.split('/')[0]}", long, media, LONG_SPEED
                )
            )
        results["agentic"] = agentic_runs(work, 8, 60 * 20 / 8 / 3 - 10)
        results["estimate_from_pilot"] = estimate_against_run(release, work, short, media)
    print(render(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


def render(results: dict[str, Any]) -> str:
    lines = [f"{results['tasks']} tasks x 3 attempts; billed input / caching off:"]
    for part in ("gap_under_an_hour", "gap_over_an_hour"):
        for model, figures in results[part].items():
            cells = ", ".join(f"{k} {v:.2f}x" for k, v in figures["vs_off"].items())
            lines.append(f"  {part} ({figures['gap_minutes']:.0f} min) {model}: {cells}")
    agentic = results["agentic"]
    cells = ", ".join(f"{k} {v:.2f}x" for k, v in agentic["vs_off"].items())
    lines.append(f"  agentic ({agentic['gap_minutes']:.0f} min) {MODELS[0]}: {cells}")
    estimate = results["estimate_from_pilot"]
    lines.append(
        f"estimate from a {estimate['pilot_tasks']}-task pilot: "
        f"${estimate['estimated_dollars']:.4f} against ${estimate['billed_dollars']:.4f} billed "
        f"({estimate['estimate_vs_billed']:.3f}x)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
