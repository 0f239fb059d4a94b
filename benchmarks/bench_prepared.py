"""Decoding in a prepare-then-run, before and after the cache's keys held only the frame
settings that matter (issue 20), side by side in one run.

The shape of a full run: `hss-inspect prepare` over the clips (its own jobs, in-process),
then the run's user turn of every clip for each model of a full-run set (`anthropic/`,
`openai/`, an `openai-api/` server and a vLLM model whose 32k context window thins the
frames), built by the run's own code (`conditions.turn.user_turn_for`, as `hss-inspect
estimate` builds it). Two arms, each on a fresh cache:

  before   the old rules: the frame settings in a key as the model's limits make them
           (Anthropic's cap of 600 images, OpenAI's 1,500), no thinned set taken from an
           entry, a clip's facts not kept (it is probed by every process)
  after    this package's rules

Decoding time is what the cache measures around each decode of a clip; the run's wall
time also holds reading the cache and fitting frames to the request size. Every figure is
the median of --repeats runs of both arms, interleaved.

    python -m benchmarks.bench_prepared [--repeats 3] [--clips NAME ...] [--json out.json]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

from benchmarks.clips import bench_arguments, ensure_clips
from hss_inspect.conditions.prepared_turns import ModelTarget
from hss_inspect.conditions.turn import user_turn_for
from hss_inspect.core.settings import DEFAULT_MEDIA, MediaSettings
from hss_inspect.data.release import open_release
from hss_inspect.media import facts, frame_cache, image_cache, service
from hss_inspect.media.activity import activity
from hss_inspect.media.cache_folder import CACHE_ENV
from hss_inspect.media.prepare import jobs_for, run_job
from hss_inspect.providers.context import budget_for_name
from tests.support.fixture_repo import FixtureTask, build_repo

DEFAULT_CLIPS = ("h264_1080p_2min", "hevc_720p_1min", "vp9_720p_1min", "h264_720p_rot90_1min")
MODELS = {
    "anthropic/claude-opus-5": None,
    "openai/gpt-6-astra": None,
    "openai-api/server/some-vlm": None,
    "vllm/Qwen/Qwen2.5-VL-7B-Instruct": 32_768,  # its window thins every clip's frames
}


def release_of(clips: dict[str, Path], root: Path) -> Path:
    """An HSS-format copy holding the clips, one task each (images are not timed here)."""
    tasks = tuple(
        FixtureTask(
            name,
            "PASS",
            "Temporal & Causal Dynamics",
            "Retrodiction",
            "video",
            f"media/{path.name}",
            ({"id": "c1", "title": "x"},),
        )
        for name, path in clips.items()
    )
    build_repo(root, tasks)
    for path in clips.values():
        target = root / "media" / path.name
        target.unlink(missing_ok=True)
        target.symlink_to(path.resolve())
    return root


@contextlib.contextmanager
def old_rules() -> Iterator[None]:
    """The cache as it was: every frame setting in the key, nothing derived, no facts."""
    with (
        mock.patch.object(frame_cache, "frames_that_matter", lambda settings: settings),
        mock.patch.object(frame_cache, "_thinned_entry", lambda *_: None),
        mock.patch.object(facts, "read_facts", lambda *_: None),
        mock.patch.object(image_cache, "read_facts", lambda *_: None),
    ):
        yield


def targets() -> list[ModelTarget]:
    async def budgets() -> list[ModelTarget]:
        return [
            ModelTarget(
                name,
                await budget_for_name(name, window, DEFAULT_MEDIA.output_reserve, None, None),
                MediaSettings(context_window=window),
            )
            for name, window in MODELS.items()
        ]

    os.environ.setdefault("OPENAI_API_KEY", "bench")  # builds the clients; nothing is sent
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench")
    os.environ.setdefault("SERVER_API_KEY", "bench")
    os.environ.setdefault("SERVER_BASE_URL", "http://127.0.0.1:9/v1")
    return asyncio.run(budgets())


def one_arm(release: Path, models: list[ModelTarget], old: bool) -> dict[str, float]:
    """Prepare, then the run's turns for every model, on a fresh cache: seconds each."""
    cache = Path(tempfile.mkdtemp(prefix="hss-bench-prepared-"))
    os.environ[CACHE_ENV] = str(cache)
    service._geometry.clear()  # each arm is a new set of processes
    opened = open_release(str(release), "main")
    rows = opened.read_rows()
    try:
        with old_rules() if old else contextlib.nullcontext():
            start, prepare_wall = activity(), time.perf_counter()
            for job in jobs_for(rows, [DEFAULT_MEDIA]):
                result = run_job(opened.media_file, job)
                assert result.error is None, result.error
            prepared, prepare_wall = activity(), time.perf_counter() - prepare_wall
            run_wall = time.perf_counter()
            asyncio.run(run_turns(opened, rows, models))
            run_wall = time.perf_counter() - run_wall
            ran = activity()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "prepare_decode_s": prepared.since(start).decode_seconds,
        "prepare_wall_s": prepare_wall,
        "run_decode_s": ran.since(prepared).decode_seconds,
        "run_frames_decoded": sum(ran.since(prepared).clips.values()),
        "run_wall_s": run_wall,
    }


async def run_turns(release: Any, rows: list[Any], models: list[ModelTarget]) -> None:
    for model in models:
        for row in rows:
            meta = row.sample_metadata()
            await user_turn_for(release, model.media, model.name, meta, model.budget)


def bench(clips: dict[str, Path], repeats: int) -> dict[str, Any]:
    models = targets()
    with tempfile.TemporaryDirectory(prefix="hss-bench-release-") as folder:
        release = release_of(clips, Path(folder))
        arms: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for _ in range(repeats):
            for name in arms:
                arms[name].append(one_arm(release, models, old=name == "before"))
    median = {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in arms.items()
    }
    before, after = median["before"], median["after"]

    def total(arm: dict[str, float]) -> float:
        return arm["prepare_decode_s"] + arm["run_decode_s"]

    return {
        "clips": list(clips),
        "models": list(MODELS),
        "repeats": repeats,
        "before": before,
        "after": after,
        "run_decode_after_vs_before": after["run_decode_s"] / before["run_decode_s"],
        "run_wall_after_vs_before": after["run_wall_s"] / before["run_wall_s"],
        "total_decode_after_vs_before": total(after) / total(before),
    }


def print_result(result: dict[str, Any]) -> None:
    print(f"clips: {', '.join(result['clips'])}; models: {', '.join(result['models'])}")
    print("| arm | prepare decode s | run decode s | frames decoded in the run | run wall s |")
    print("|---|---|---|---|---|")
    for arm in ("before", "after"):
        row = result[arm]
        print(
            f"| {arm} | {row['prepare_decode_s']:.2f} | {row['run_decode_s']:.2f} | "
            f"{row['run_frames_decoded']:.0f} | {row['run_wall_s']:.2f} |"
        )
    print(
        f"run decode after/before: {result['run_decode_after_vs_before']:.3f}x; "
        f"run wall after/before: {result['run_wall_after_vs_before']:.3f}x; "
        f"prepare+run decode after/before: {result['total_decode_after_vs_before']:.3f}x "
        f"(medians of {result['repeats']})"
    )


def main() -> None:
    args = bench_arguments(__doc__, DEFAULT_CLIPS)
    result = bench(ensure_clips(args.clip_dir, args.clips), args.repeats)
    print_result(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
