"""A long clip's sparse plans against its dense plan, for this tree's package and for
other commits' side by side: `hss-inspect frames CLIP --no-cache` at 500, 50 and 10
frames, in wall time and in the CPU seconds of the command's process (a shared machine's
load moves the CPU far less than the wall time), the versions interleaved, their order
reversed every repeat, medians over the repeats.

Each other commit's `src/` is exported with `git archive` and put first on PYTHONPATH (as
`bench_full_shape --baseline` does); its command is run through its own module, so a
commit from before the command's move to `hss_inspect.commands` runs too. How the slip
of the 50-frame plan of the 28-minute clip was found (docs/media.md).

    python -m benchmarks.bench_sparse [--clip h264_480p_28min] [--repeats 4]
        [--baseline REV ...] [--clip-dir benchmarks/.clips] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.bench_frames import Measured, run_process
from benchmarks.bench_full_shape import baseline_env
from benchmarks.clips import ensure_clips

BUDGETS = (500, 50, 10)
THIS_TREE = "this tree"


def command_module(env: dict[str, str]) -> str:
    """The module of the `hss-inspect` command in the package `env` imports."""
    source = env.get("PYTHONPATH", "").split(os.pathsep)[0]
    moved = not source or (Path(source) / "hss_inspect" / "commands" / "cli.py").is_file()
    return "hss_inspect.commands.cli" if moved else "hss_inspect.cli"


def frames_command(env: dict[str, str], clip: Path, out: Path, frames: int) -> Measured:
    shutil.rmtree(out, ignore_errors=True)
    program = f"import sys; from {command_module(env)} import main; sys.exit(main())"
    command = [sys.executable, "-c", program, "frames", str(clip), "--out", str(out)]
    return run_process([*command, "--no-cache", "--max-frames", str(frames)], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clip", default="h264_480p_28min", help="a name from benchmarks/clips.py")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--baseline", nargs="*", default=[], metavar="REV")
    parser.add_argument("--clip-dir", type=Path, default=Path("benchmarks/.clips"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    clip = ensure_clips(args.clip_dir, [args.clip])[args.clip]
    with tempfile.TemporaryDirectory(dir="/tmp") as temp:
        work = Path(temp)
        env = {**os.environ, "HSS_INSPECT_CACHE": str(work / "cache")}
        sides = {THIS_TREE: env, **{rev: baseline_env(work, rev, env) for rev in args.baseline}}
        runs: dict[str, dict[int, list[Measured]]] = {s: {b: [] for b in BUDGETS} for s in sides}
        for repeat in range(args.repeats):
            order = list(sides) if repeat % 2 == 0 else list(reversed(sides))
            for side in order:
                for budget in BUDGETS:
                    measured = frames_command(sides[side], clip, work / "out", budget)
                    runs[side][budget].append(measured)
    result = {"clip": args.clip, "repeats": args.repeats, **{s: summary(runs[s]) for s in sides}}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


def summary(runs: dict[int, list[Measured]]) -> dict[str, Any]:
    wall = {b: statistics.median(m.seconds for m in runs[b]) for b in BUDGETS}
    cpu = {b: statistics.median(m.cpu_seconds for m in runs[b]) for b in BUDGETS}
    dense = BUDGETS[0]
    return {
        "wall_s": {b: round(s, 2) for b, s in wall.items()},
        "cpu_s": {b: round(s, 2) for b, s in cpu.items()},
        **{f"sparse{b}_vs_dense": round(wall[b] / wall[dense], 3) for b in BUDGETS[1:]},
        **{f"sparse{b}_cpu_vs_dense": round(cpu[b] / cpu[dense], 3) for b in BUDGETS[1:]},
    }


if __name__ == "__main__":
    main()
