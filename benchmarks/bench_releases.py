"""Releases at HSS's size (issue 48): a release of 522 tasks (288 images, 234 clips) and an
erratum of it that fixes the rubrics of 10 tasks, as two local copies.

- diff: `release diff` of the two copies with the media's hashes remembered (warm),
  against the first diff, which hashes every file (cold). Target: under 5 s warm.
- carry: a 522 x 3 log of the first release carried to the second (`release carry`),
  against running the second release again, each in this process with the scripted models,
  which count the calls each side makes (candidate requests, judge conversations). With
  what `release carry --estimate` said beforehand.
- report: the leaderboard of four such logs, with the comparability check as it is against
  every run put in one release (the check skipped), alternated; and the check's own time on
  the logs read, as a share of the report's. Target: within 10%.

Medians over --repeats (the run again once: it is the expensive side).

    python -m benchmarks.bench_releases [--tasks 522] [--fixes 10] [--repeats 3]
        [--json benchmarks/results_releases.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image

from benchmarks import print_and_keep
from hss_inspect.core.taxonomy import DOMAINS
from hss_inspect.media.cache_folder import CACHE_ENV

ANSWER = "The shelf gives way under the weight."
IMAGE_SHARE = 288 / 522


def write_release(root: Path, tasks: int) -> Path:
    """`tasks` rows over the taxonomy, images and one-second clips, small and distinct."""
    rng = np.random.default_rng(0)
    subdomains = [(d.name, s.name) for d in DOMAINS for s in d.subdomains]
    rows = []
    images = round(tasks * IMAGE_SHARE)
    for n in range(tasks):
        domain, subdomain = subdomains[n % len(subdomains)]
        kind = "image" if n < images else "video"
        path = f"media/{n:04d}.{'png' if kind == 'image' else 'mp4'}"
        (root / "media").mkdir(parents=True, exist_ok=True)
        if kind == "image":
            pixels = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / path)
        else:
            write_clip(root / path, rng)
        reference = ANSWER if n % 2 else "The shelf holds."
        rows.append(
            {
                "task_id": f"t{n:04d}",
                "domain": domain,
                "subdomain": subdomain,
                "media_type": kind,
                "media_path": path,
                "prompt": f"What happens next in scene {n}?",
                "golden_response": reference,
                "rubric_criteria": [{"id": "c1", "title": "Says what happens next"}],
            }
        )
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def write_clip(path: Path, rng: np.random.Generator) -> None:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for _ in range(8):
            frame = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode())


def erratum(first: Path, second: Path, fixes: int) -> list[str]:
    """The second release: the first with the references of `fixes` failing tasks fixed."""
    shutil.copytree(first, second)
    rows = [json.loads(line) for line in (first / "data" / "test.jsonl").read_text().splitlines()]
    fixed = []
    for row in rows:
        if len(fixed) < fixes and row["golden_response"] != ANSWER:
            row["golden_response"] = ANSWER
            fixed.append(row["task_id"])
    (second / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return fixed


@contextlib.contextmanager
def counted_calls() -> Iterator[Counter[str]]:
    """The scripted models' calls, by who answered: the judge or the candidate (every call
    counts its usage once; the judge's calls also write a verdict)."""
    from hss_inspect import scripted

    calls: Counter[str] = Counter()
    verdict, usage = scripted.scripted_verdict, scripted.word_usage

    def judged(request: str) -> str:
        calls["judge"] += 1
        return verdict(request)

    def used(messages: Any, reply: str) -> Any:
        calls["any"] += 1
        return usage(messages, reply)

    scripted.scripted_verdict, scripted.word_usage = judged, used
    try:
        yield calls
    finally:
        scripted.scripted_verdict, scripted.word_usage = verdict, usage
        calls["candidate"] = calls.pop("any", 0) - calls["judge"]


def run_release(root: Path, logs: Path) -> str:
    from inspect_ai import eval as inspect_eval

    (log,) = inspect_eval(
        "hss_inspect/hss",
        task_args={"dataset": str(root)},
        model="hss/scripted",
        model_args={"answer": ANSWER},
        model_roles={"grader": "hss/scripted"},
        log_dir=str(logs),
        log_images=False,
        display="none",
        max_connections=64,
    )
    assert log.status == "success", log.error
    return str(log.location)


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    found = action()
    return time.perf_counter() - started, found


def diff_seconds(first: Path, second: Path, repeats: int) -> dict[str, Any]:
    from hss_inspect.commands.cli import main

    def diff() -> str:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["release", "diff", str(first), str(second), "--format", "json"]) == 0
        return out.getvalue()

    cold, said = timed(diff)
    warm = [timed(diff)[0] for _ in range(repeats)]
    return {
        "cold_s": round(cold, 3),
        "warm_median_s": round(statistics.median(warm), 3),
        "warm_s": [round(s, 3) for s in warm],
        "warm_vs_cold": round(statistics.median(warm) / cold, 3),
        "summary": json.loads(said)["summary"],
    }


def carry_figures(old_log: str, second: Path, folder: Path, repeats: int) -> dict[str, Any]:
    from hss_inspect.commands.cli import main
    from hss_inspect.data.release import open_release
    from hss_inspect.recipes.carry import carry_log

    with contextlib.redirect_stdout(io.StringIO()) as said:
        main(["release", "carry", old_log, str(second), "--estimate"])
    seconds, calls = [], Counter[str]()
    for n in range(repeats):
        with counted_calls() as counted:
            elapsed, _ = timed(
                lambda n=n: carry_log(
                    old_log, open_release(str(second), "main"), folder / f"c{n}.eval"
                )
            )
        seconds.append(elapsed)
        calls = counted
    with counted_calls() as again:
        rerun_s, _ = timed(lambda: run_release(second, folder / "again"))
    carry_s = statistics.median(seconds)
    return {
        "estimate": said.getvalue().strip().splitlines(),
        "carry_median_s": round(carry_s, 2),
        "carry_s": [round(s, 2) for s in seconds],
        "carry_calls": dict(calls),
        "run_again_s": round(rerun_s, 2),
        "run_again_calls": dict(again),
        "carry_vs_run_again": round(carry_s / rerun_s, 3),
    }


def other_run(log: str, folder: Path, n: int) -> str:
    """The log as another model's run of the same release (its own ids and model name)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    found = read_eval_log(log)
    found.eval.eval_id, found.eval.task_id = f"other-eval-{n}", f"other-task-{n}"
    found.eval.model = f"hss/scripted-{n}"
    path = str(folder / f"other{n}.eval")
    write_eval_log(found, path)
    return path


def report_figures(logs: list[str], repeats: int) -> dict[str, Any]:
    """The report's leaderboard, the check as it is against every run put in one release
    (alternated, so both see the same load), and the check's own time on the logs read."""
    from hss_inspect.commands import report
    from hss_inspect.commands.cli import main
    from hss_inspect.report import releases
    from hss_inspect.report.records import read_logs

    def leaderboard() -> float:
        with contextlib.redirect_stdout(io.StringIO()):
            return timed(lambda: main(["report", *logs, "--format", "json"]))[0]

    def one_release(infos: Any) -> list[Any]:
        group = releases.Release()
        for info in infos:
            group.add(info)
        return [group]

    leaderboard()  # imports and the page cache, outside the timing
    checked, unchecked = [], []
    for _ in range(repeats):
        checked.append(leaderboard())
        report.releases_of = one_release  # type: ignore[assignment]
        try:
            unchecked.append(leaderboard())
        finally:
            report.releases_of = releases.releases_of
    infos, _ = read_logs(logs)
    check = [timed(lambda: releases.releases_of(infos))[0] for _ in range(repeats)]
    return {
        "logs": len(logs),
        "checked_median_s": round(statistics.median(checked), 3),
        "unchecked_median_s": round(statistics.median(unchecked), 3),
        "checked_vs_unchecked": round(statistics.median(checked) / statistics.median(unchecked), 3),
        "check_alone_median_s": round(statistics.median(check), 5),
        "check_share_of_report": round(statistics.median(check) / statistics.median(checked), 4),
    }


def measure(tasks: int, fixes: int, repeats: int, root: Path) -> dict[str, Any]:
    os.environ[CACHE_ENV] = str(root / "cache")
    first = write_release(root / "first", tasks)
    fixed = erratum(first, root / "second", fixes)
    result: dict[str, Any] = {"tasks": tasks, "fixed": len(fixed)}
    result["diff"] = diff_seconds(first, root / "second", repeats)
    old_log = run_release(first, root / "logs")
    result["carry"] = carry_figures(old_log, root / "second", root / "carried", repeats)
    copies = [old_log, *(other_run(old_log, root / "logs", n) for n in range(3))]
    result["report"] = report_figures(copies, repeats)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=522)
    parser.add_argument("--fixes", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.tasks, args.fixes, args.repeats, Path(folder))
    print_and_keep(result, args.json)


if __name__ == "__main__":
    main()
