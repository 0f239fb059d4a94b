"""The benchmark scripts still run (on a tiny clip): no timing is asserted here."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

import pytest

from benchmarks.bench_frames import bench_clip
from benchmarks.clips import ClipSpec, write_clip


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="the ffmpeg program is not installed")
def test_bench_frames_measures_every_column(tmp_path: Path) -> None:
    clip = tmp_path / "tiny.mp4"
    write_clip(ClipSpec("tiny", "libx264", 320, 240, 30, 3, {"preset": "ultrafast"}), clip)
    row = bench_clip("tiny", clip, 1, tmp_path)
    assert row["source_frames"] == 90
    for key in ("ours_s", "ffmpeg_s", "floor_s", "pyav_floor_s", "cache_cold_s", "cache_warm_s"):
        assert float(row[key]) > 0, key  # type: ignore[arg-type]
    assert float(row["ours_peak_mb"]) > 10  # type: ignore[arg-type]


def test_bench_sweep_measures_every_column_and_checks_identity(tmp_path: Path) -> None:
    from benchmarks.bench_sweep import bench_clip as bench_sweep_clip

    clip = tmp_path / "tiny.mp4"
    write_clip(ClipSpec("tiny", "libx264", 320, 240, 30, 4, {"preset": "ultrafast"}), clip)
    row = bench_sweep_clip("tiny", clip, 1, budgets=(2, 3, 8))
    assert row["frames_per_budget"] == [2, 3, 8]
    assert row["identical"] is True
    for key in ("alone_s", "sweep_s", "separate_s", "sweep_vs_alone", "alone_cpu_s", "sweep_cpu_s"):
        assert float(row[key]) > 0, key  # type: ignore[arg-type]


def test_bench_startup_times_every_case() -> None:
    from benchmarks.bench_startup import CASES, measure

    result = measure(1, None)
    assert set(result["median_s"]) == set(CASES)
    assert all(value > 0 for value in result["median_s"].values())
    assert set(result["ratios"]) == {
        "--help / python",
        "--help / import inspect_ai",
        "cache / import inspect_ai",
    }


def test_token_fit_table_fits_a_clip_to_each_window(tmp_path: Path) -> None:
    import asyncio

    from benchmarks.token_fit import fit_of
    from tests.support.fixture_repo import write_video

    clip = tmp_path / "long.mp4"
    write_video(clip, fps=2, seconds=250, size=(448, 252))
    small = asyncio.run(fit_of(clip, "vllm/Qwen/Qwen2.5-VL-7B-Instruct", 32_768))
    large = asyncio.run(fit_of(clip, "vllm/Qwen/Qwen2.5-VL-7B-Instruct", 1_000_000))
    # 146 tokens a frame (16 x 9 blocks + 2): far fewer than 500 fit 28k, all fit 1M
    assert 100 < small["frames"] < 200 and large["frames"] == 500
    assert small["image_tokens"] == 146 * small["frames"]
    assert small["estimated_tokens"] <= 32_768 - 4096


def test_bench_prepared_runs_both_arms(tmp_path: Path) -> None:
    from benchmarks.bench_prepared import bench

    clip = tmp_path / "tiny.mp4"
    write_clip(ClipSpec("tiny", "libx264", 320, 240, 30, 40, {"preset": "ultrafast"}), clip)
    result = bench({"tiny": clip}, 1)
    before, after = result["before"], result["after"]
    assert before["prepare_decode_s"] > 0 and after["prepare_decode_s"] > 0
    # 40 s at 2 fps: 80 frames. The old keys held the image cap, so the clip was decoded
    # again for Anthropic (600), OpenAI (1,500) and the vLLM server (999), not for the
    # OpenAI-compatible server (no cap)
    assert before["run_frames_decoded"] == 3 * 80
    assert after["run_frames_decoded"] == 0 and after["run_decode_s"] == 0


def test_bench_sparse_times_each_budget_in_wall_and_cpu_seconds(tmp_path: Path) -> None:
    import os

    from benchmarks.bench_sparse import BUDGETS, frames_command, summary

    clip = tmp_path / "tiny.mp4"
    write_clip(ClipSpec("tiny", "libx264", 320, 240, 30, 40, {"preset": "ultrafast"}), clip)
    env = {**os.environ, "HSS_INSPECT_CACHE": str(tmp_path / "cache")}
    runs = {b: [frames_command(env, clip, tmp_path / "out", b)] for b in BUDGETS}
    assert len(list((tmp_path / "out").glob("frame_*.jpg"))) == 10  # the last budget's
    row = summary(runs)
    assert all(row["cpu_s"][b] > 0 and row["wall_s"][b] > 0 for b in BUDGETS)
    assert 0 < row["sparse10_cpu_vs_dense"] < 1.5


@pytest.mark.slow
def test_bench_build_scale_plans_the_funnel_and_meets_it_over_http(tmp_path: Path) -> None:
    """At a tiny size: 30 items, 20 tasks in 2 imports, 3 reviewers and 2 authors at once."""
    import json
    import subprocess
    import sys

    from benchmarks.bench_build_scale import TARGETS, planned_funnel, verdict_plan

    out = tmp_path / "scale.json"
    subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_build_scale", "--items", "30", "--tasks", "20",
         "--authors", "2", "--reviewers", "3", "--repeats", "1", "--author-pause", "0.1",
         "--work", str(tmp_path / "work"), "--json", str(out)], check=True, timeout=900,
    )  # fmt: skip
    after = json.loads(out.read_text())["after"]
    # the paper's 3,466 -> 1,164 -> 559 -> 522, scaled to 20 tasks and rounded
    assert planned_funnel(20) == [20, 7, 3, 3] == after["funnel_printed"]
    assert after["exported_tasks"] == 3 and set(after["targets"]) == set(TARGETS)
    # every round decided: 20 + 7 + 3 rounds, and one Edit's revision again from round 1
    plan = verdict_plan([f"t{n}" for n in range(20)])
    edited = [p for p in plan.values() if p.edit_round is not None]
    assert len(edited) == 1 and after["verdicts"] == 30 + edited[0].edit_round
    assert after["author_home_kb"]["max"] > 1 and after["server_peak_rss_mb"] > 30


def test_the_scale_plan_is_the_papers_funnel_at_its_size() -> None:
    from collections import Counter

    from benchmarks.bench_build_scale import verdict_plan

    plan = verdict_plan([f"t{n}" for n in range(3466)])
    drops = Counter(p.drop_round for p in plan.values())
    assert drops == {1: 3466 - 1164, 2: 1164 - 559, 3: 559 - 522, None: 522}
    assert sum(p.edit_round is not None for p in plan.values()) == 173  # 5%


def test_bench_duplicates_finds_what_it_planted_and_times_each_side(tmp_path: Path) -> None:
    from benchmarks.bench_duplicates import run

    sizes = argparse.Namespace(
        images=4, clips=2, seconds=6.0, repeats=1, scale_pool=40, within=[60], text_tasks=[40],
        distinct=30, look_alikes=40, jobs=1,
    )  # fmt: skip
    result = run(sizes, tmp_path)
    # the indexed matching and text check find what comparing every pair finds
    assert result["within_pool"]["60"]["same_pairs"] is True
    assert result["text_repeats"]["40"]["same_repeats"] is True
    assert result["all_planted_found"] is True and result["unplanted_found"] == []
    assert len(result["planted"]) == 4  # two crops, a cut, a copy within the pool
    for key in ("clip_look_vs_full_decode", "warm_vs_cold_clip", "matching_s"):
        assert float(result[key]) > 0, key
    assert result["paper_scale_matching"]["release_items"] == 522
    distinct = result["distinct_pools"]
    assert distinct["shape_pictures"]["compared"] == 30
    assert distinct["shape_pictures"]["rule_s"] > 0
    for entry in distinct.values():
        assert entry["marked_by_rule"] <= entry["marked_by_hashes_alone"]
    alike = result["look_alike_pool"]
    assert alike["build_new_s"] > 0 and alike["home_marks_read_ms"] > 0
    assert any("fall in" in line for line in alike["lines"])


def test_bench_completion_wait_times_both_waits_on_the_same_looks(tmp_path: Path) -> None:
    from benchmarks.bench_completion_wait import run
    from hss_inspect.media import fingerprint, workers

    result = run([12, 30], 1, tmp_path)
    for size in (12, 30):
        entry = result[str(size)]
        # both waits return every look, in its place, for every item
        assert entry["items"] == size and entry["same_looks"] is True
        assert entry["queue_median_s"] > 0 and entry["wait_on_pending_median_s"] > 0
    assert fingerprint.completed is workers.completed  # the old wait is not left in place


def test_bench_releases_counts_what_a_carry_and_a_run_again_send(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.bench_releases import measure

    monkeypatch.setenv("HSS_INSPECT_CACHE", str(tmp_path / "cache"))  # restored after
    result = measure(tasks=12, fixes=2, repeats=1, root=tmp_path)
    assert result["diff"]["summary"] == "0 task(s) added, 0 removed, 2 changed (2 to grade again)"
    carry = result["carry"]
    assert carry["carry_calls"] == {"judge": 2 * 3, "candidate": 0}
    assert carry["run_again_calls"] == {"judge": 12 * 3, "candidate": 12 * 3}
    assert "Sends 6 judge conversation(s) and 0 candidate attempt(s)" in " ".join(carry["estimate"])
    assert result["report"]["logs"] == 4 and result["report"]["checked_median_s"] > 0


def test_bench_pages_reads_only_the_samples_of_the_tasks_shown(tmp_path: Path) -> None:
    from benchmarks.bench_pages import run

    result = run(tmp_path, repeats=1, tasks=22, clip_tasks=8, clip_seconds=3)
    pages, examples = result["pages"], result["examples"]
    # 11 tasks, each with 3 attempts in each run: 3 runs for the pages, 4 for the examples
    assert (pages["task_pages"], pages["samples_read"]) == (11, 11 * 3 * 3)
    assert (examples["figures"], examples["samples_read"]) == (11, 11 * 4 * 3)
    for key in ("pages_s", "read_logs_s", "every_sample_s", "media_mb"):
        assert pages[key] > 0 and examples[key] > 0, key
    report = result["report_without_pages"]
    assert report["this_cpu_s"] > 0 and report["this_first_read_cpu_s"] > 0
    assert list((Path(os.environ["HSS_INSPECT_CACHE"]) / "reports").glob("*.pickle"))
