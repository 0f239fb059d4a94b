"""Where a run's CPU went: a py-spy raw profile (`--format raw`, 50 samples a second)
summed into the categories the full-run guide names (docs/full-runs.md)."""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable
from pathlib import Path

RATE = 50  # samples a second, as bench_full_shape asks py-spy for

# the first rule a stack meets names its category
RULES: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("start-up (imports, hooks)", lambda s: "_find_and_load" in s or "init_hooks" in s),
    ("Inspect: diff of the task state", lambda s: "SolverTranscript" in s),
    ("Inspect: copy of the request for its event", lambda s: "_snapshot_message" in s),
    ("Inspect: sample to the log", lambda s: "log_sample" in s or "condense_sample" in s),
    ("SDK: request JSON", lambda s: "openapi_dumps" in s),
    ("SDK: request transforms", lambda s: "_transform" in s and "openai/" in s),
    ("sockets (httpx, asyncio)", lambda s: "httpx" in s or "httpcore" in s or "_Selector" in s),
    ("hss-inspect: base64 of the frames", lambda s: "b64encode" in s and "hss_inspect" in s),
    ("hss-inspect: data URIs", lambda s: "media/uri.py" in s),
    ("hss-inspect: reading and checking the frames", lambda s: "read_frames" in s),
    ("hss-inspect: the user turn, other", lambda s: "hss_input" in s),
    ("hss-inspect: judge and scorer", lambda s: "rubric_judge" in s),
)


def categories(profile: Path) -> tuple[int, collections.Counter[str]]:
    total, counts = 0, collections.Counter[str]()
    for line in profile.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        total += int(n)
        name = next((name for name, rule in RULES if rule(stack)), "other")
        counts[name] += int(n)
    return total, counts


def print_categories(profile: Path) -> None:
    total, counts = categories(profile)
    print(f"{profile.name}: {total / RATE:.1f} CPU seconds sampled")
    for name, n in counts.most_common():
        print(f"  {100 * n / total:5.1f}%  {n / RATE:7.1f} s  {name}")


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print_categories(Path(path))
