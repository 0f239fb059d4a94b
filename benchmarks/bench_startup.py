"""Start-up of the `hss-inspect` command, side by side with what it must not pay for.

Times, interleaved in one run, each as a fresh process: the interpreter alone
(`python -c pass`), importing Inspect (`python -c "import inspect_ai"`, what every
command paid before subcommands were imported lazily), and `hss-inspect --help`, `cache`,
`frames --help` and `report --help` (the last needs Inspect). With `--before REV` it also
runs `--help` of the package as it was at that git revision (its `src`, `task_configs`
and `scorers` unpacked into a temporary folder), for the before/after ratio. Every time
is the median of --repeats runs.

    python -m benchmarks.bench_startup [--repeats 7] [--before a9f2081]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "hss_inspect.commands.cli"]
CASES: dict[str, list[str]] = {
    "python": [sys.executable, "-c", "pass"],
    "import inspect_ai": [sys.executable, "-c", "import inspect_ai"],
    "--help": [*CLI, "--help"],
    "cache": [*CLI, "cache"],
    "frames --help": [*CLI, "frames", "--help"],
    "report --help": [*CLI, "report", "--help"],
}


def seconds(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env)
    return time.perf_counter() - started


def unpack_revision(revision: str, into: Path) -> list[str]:
    """The package at `revision` in `into`; the command that prints its help."""
    archive = subprocess.run(
        ["git", "archive", revision, "src", "task_configs", "scorers"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    archive_path = into / "tree.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(into, filter="data")
    flat = (into / "src/hss_inspect/cli.py").is_file()
    return [sys.executable, "-m", "hss_inspect.cli" if flat else "hss_inspect.commands.cli"]


def measure(repeats: int, before: str | None) -> dict[str, Any]:
    cases = {name: (command, None) for name, command in CASES.items()}
    with tempfile.TemporaryDirectory() as tmp:
        if before is not None:
            old_cli = unpack_revision(before, Path(tmp))
            env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
            cases[f"--help at {before}"] = ([*old_cli, "--help"], env)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(repeats):  # interleaved, so a busy moment hits every case alike
            for name, (command, env) in cases.items():
                times[name].append(seconds(command, env))
    medians = {name: statistics.median(found) for name, found in times.items()}
    ratios = {
        "--help / python": medians["--help"] / medians["python"],
        "--help / import inspect_ai": medians["--help"] / medians["import inspect_ai"],
        "cache / import inspect_ai": medians["cache"] / medians["import inspect_ai"],
    }
    if before is not None:
        ratios[f"--help / --help at {before}"] = medians["--help"] / medians[f"--help at {before}"]
    return {"repeats": repeats, "median_s": medians, "ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", help="a git revision to compare --help with")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results_startup.json")
    args = parser.parse_args()
    result = measure(args.repeats, args.before)
    for name, value in result["median_s"].items():
        print(f"{name:28s} {value:6.3f} s")
    for name, value in result["ratios"].items():
        print(f"{name:28s} {value:6.3f}x")
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
