"""Shared media preparation in a running eval: cancellation, time limits, errors.

These drive `media.service` on a real event loop with real clips; where a preparation
must fail or stall on cue, the decoding function of the cache is replaced by one that
waits on an event and checks its deadline as the real decoder does between packets.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media import frame_cache, service
from hss_inspect.media.errors import Deadline, MediaError, MediaTimeout
from hss_inspect.media.video import SampledVideo
from tests.support.fixture_repo import write_video

BUDGET = 32_000_000


@pytest.fixture
def clip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HSS_INSPECT_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "clip.mp4"
    write_video(path, fps=30, seconds=2.0)
    return path


def run_collecting_loop_errors(scenario: Any) -> list[dict[str, Any]]:
    """Run `scenario()` on a fresh loop; returns what reached the loop's exception handler."""
    reported: list[dict[str, Any]] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: reported.append(ctx))
        await scenario()
        gc.collect()  # a task nobody retrieved reports itself when it is collected
        await asyncio.sleep(0)

    asyncio.run(main())
    gc.collect()
    return reported


def test_cancelled_waiters_leave_no_unretrieved_exception(
    clip: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    finished = threading.Event()

    def failing_later(path: Path, *_: Any) -> list[SampledVideo]:
        release.wait(10)
        finished.set()
        raise MediaError(f"{path}: fails after its waiters are gone")

    monkeypatch.setattr(frame_cache, "sample_video_sweep", failing_later)

    async def scenario() -> None:
        # Three epochs share one preparation; Inspect cancels them all when another
        # sample fails.
        waiters = [
            asyncio.create_task(service.video_frames(clip, FrameSettings(), BUDGET))
            for _ in range(3)
        ]
        await asyncio.sleep(0.2)
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        release.set()
        while not finished.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # the worker's outcome reaches the loop

    reported = run_collecting_loop_errors(scenario)
    assert finished.is_set()
    assert [ctx["message"] for ctx in reported] == []


def test_a_waiter_that_stays_still_gets_the_error(
    clip: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(path: Path, *_: Any) -> list[SampledVideo]:
        time.sleep(0.2)
        raise MediaError(f"{path}: broken")

    monkeypatch.setattr(frame_cache, "sample_video_sweep", failing)

    async def scenario() -> None:
        first = asyncio.create_task(service.video_frames(clip, FrameSettings(), BUDGET))
        second = asyncio.create_task(service.video_frames(clip, FrameSettings(), BUDGET))
        await asyncio.sleep(0.05)
        first.cancel()
        with pytest.raises(MediaError, match="broken"):
            await second

    assert run_collecting_loop_errors(scenario) == []


def test_work_nobody_awaits_is_stopped_and_a_later_caller_starts_afresh(
    clip: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = frame_cache.sample_video_sweep

    def stalling_first(path: Path, sweep: Any, deadline: Deadline) -> list[SampledVideo]:
        calls.append("start")
        if len(calls) == 1:
            while True:  # as the decoder does between packets
                deadline.check(path)
                time.sleep(0.01)
        return real(path, sweep, deadline)

    monkeypatch.setattr(frame_cache, "sample_video_sweep", stalling_first)
    outcome: list[BaseException] = []

    async def scenario() -> None:
        waiter = asyncio.create_task(service.video_frames(clip, FrameSettings(), BUDGET))
        await asyncio.sleep(0.2)
        (shared,) = service._inflight.values()
        shared.future.add_done_callback(lambda f: outcome.append(f.exception()))  # type: ignore[arg-type]
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        while not outcome:
            await asyncio.sleep(0.01)
        video = await service.video_frames(clip, FrameSettings(), BUDGET)
        assert len(video.jpegs) == 4

    assert run_collecting_loop_errors(scenario) == []
    assert type(outcome[0]).__name__ == "MediaCancelled"
    assert calls == ["start", "start"]


def test_time_limit_stops_a_real_decode_and_names_the_file(clip: Path) -> None:
    async def scenario() -> None:
        await service.video_frames(clip, FrameSettings(), BUDGET, time_limit=1e-9)

    with pytest.raises(MediaTimeout, match=r"clip\.mp4: .* 1e-09 s media time limit"):
        asyncio.run(scenario())
    assert not list((clip.parent / "cache" / "frames").glob("[!.]*"))  # nothing half-written
