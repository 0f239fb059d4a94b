"""The shared media cache across processes, `prepare`, and preparation inside an eval."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from benchmarks.clips import ClipSpec, write_clip
from hss_inspect.commands.cli import main as cli_main
from hss_inspect.core.settings import FrameSettings
from hss_inspect.media import cache_folder, facts, frame_cache, service
from hss_inspect.media.video import SampledVideo, sample_video
from hss_inspect.media.workers import Stopped, completed, stopping_on_signals
from tests.support.fixture_repo import FixtureTask, build_repo, write_video

HERE = Path(__file__).parent
CLI = str(Path(sys.executable).with_name("hss-inspect"))


def test_two_processes_decode_a_clip_once(tmp_path: Path, private_cache: Path) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=30, seconds=4.0, size=(320, 240))
    log = tmp_path / "decodes.log"
    children = [
        subprocess.Popen(
            [sys.executable, str(HERE / "support" / "cache_child.py"), str(clip), str(log)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(HERE.parent)},
        )
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=120)[0].strip() for child in children]
    assert all(child.returncode == 0 for child in children)
    assert len(log.read_text().splitlines()) == 1
    expected = hashlib.sha256(b"".join(sample_video(clip, FrameSettings()).jpegs)).hexdigest()
    assert outputs == [expected, expected]


def test_epochs_of_one_clip_share_one_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=30, seconds=3.0, size=(320, 240))
    calls = []
    real = frame_cache.sample_video_sweep

    def counting(path: Path, *args: Any) -> list[SampledVideo]:
        calls.append(path)
        time.sleep(0.2)
        return real(path, *args)

    monkeypatch.setattr(frame_cache, "sample_video_sweep", counting)

    async def three_epochs() -> list[SampledVideo]:
        return await asyncio.gather(
            *(service.video_frames(clip, FrameSettings(), 32_000_000) for _ in range(3))
        )

    results = asyncio.run(three_epochs())
    assert len(calls) == 1
    assert results[0].jpegs == results[1].jpegs == results[2].jpegs


@pytest.mark.slow  # encodes and decodes a 20 s 720p clip
def test_event_loop_keeps_running_while_a_clip_is_prepared(tmp_path: Path) -> None:
    clip = tmp_path / "long.mp4"
    # Textured, panning content: real decoding work, unlike the flat test patterns.
    write_clip(ClipSpec("long", "libx264", 1280, 720, 30, 20, {"preset": "ultrafast"}), clip)

    async def measure() -> tuple[float, int, float]:
        gaps: list[float] = []
        done = asyncio.Event()

        async def ticker() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        started = time.perf_counter()
        await service.video_frames(clip, FrameSettings(), 32_000_000)
        elapsed = time.perf_counter() - started
        done.set()
        await tick
        return max(gaps), len(gaps), elapsed

    worst_gap, ticks, elapsed = asyncio.run(measure())
    assert elapsed > 0.3, "the clip decoded too fast to tell anything"
    # A blocked loop would show one gap as long as the whole preparation.
    assert worst_gap < elapsed / 3
    assert ticks > elapsed / 0.05


def _clip_tasks(count: int) -> tuple[FixtureTask, ...]:
    return tuple(
        FixtureTask(
            f"clip-{i}",
            "PASS",
            "Temporal & Causal Dynamics",
            "Retrodiction",
            "video",
            f"media/clip_{i}.mp4",
            ({"id": "c1", "title": "x"},),
        )
        for i in range(count)
    )


def _release_with_clips(root: Path, count: int) -> Path:
    tasks = _clip_tasks(count)
    build_repo(root, tasks)
    for i in range(count):
        write_video(root / "media" / f"clip_{i}.mp4", fps=30, seconds=6.0 + i, size=(640, 360))
    return root


def _entries(cache: Path) -> dict[str, bytes]:
    frames = cache / "frames"
    return {
        str(p.relative_to(frames)): p.read_bytes()
        for p in sorted(frames.rglob("*"))
        if p.is_file() and not p.parent.name.startswith(".")
    }


@pytest.mark.slow  # runs the hss-inspect command three times over five clips
def test_killed_prepare_resumes_to_identical_bytes(tmp_path: Path) -> None:
    release = _release_with_clips(tmp_path / "release", 5)
    command = [CLI, "prepare", "--dataset", str(release), "--max-frames", "500,4", "--jobs", "1"]
    interrupted, clean = tmp_path / "interrupted", tmp_path / "clean"
    process = subprocess.Popen(
        command,
        env={**os.environ, "HSS_INSPECT_CACHE": str(interrupted)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while not list((interrupted / "frames").glob("*/frames.json")):
        assert time.monotonic() < deadline and process.poll() is None, "prepare ended early"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished_before = len(list((interrupted / "frames").glob("*/frames.json")))
    assert 0 < finished_before < 10

    for cache in (interrupted, clean):
        done = subprocess.run(
            command,
            env={**os.environ, "HSS_INSPECT_CACHE": str(cache)},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "prepared 5 clip(s)" in done.stdout and "0 failure(s)" in done.stdout
    assert _entries(interrupted) == _entries(clean)
    assert len(list((clean / "frames").glob("*/frames.json"))) == 10


# How each signal reaches `hss-inspect prepare`: SIGKILL to the command alone, as the OOM
# killer or a scheduler sends it; SIGTERM as `kill` sends it, and to the process group as
# `timeout` and many schedulers do; SIGINT to the process group, as a terminal's Ctrl-C.
STOPS = {
    "SIGKILL": (signal.SIGKILL, False),
    "SIGTERM": (signal.SIGTERM, False),
    "SIGTERM to the group": (signal.SIGTERM, True),
    "SIGINT (Ctrl-C)": (signal.SIGINT, True),
}
STOPPED_CLIPS = 6


def _prepare_command(release: Path) -> list[str]:
    # 30 frames a second keep each worker busy about a second per clip on 2 cores
    return [CLI, "prepare", "--dataset", str(release), "--fps", "30", "--max-frames", "500"]


@pytest.fixture(scope="module")
def stopped_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """A release of clips, and what an uninterrupted prepare of it stores."""
    root = tmp_path_factory.mktemp("stopped")
    release = _release_with_clips(root / "release", STOPPED_CLIPS)
    clean = root / "clean"
    done = subprocess.run(
        [*_prepare_command(release), "--jobs", "1"],
        env={**os.environ, "HSS_INSPECT_CACHE": str(clean)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return release, _entries(clean)


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat from its state on (the name before it may hold spaces)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _descendants(pid: int) -> dict[int, str]:
    """Each process below `pid` (workers, a forkserver and its children), with its start
    time, which tells it from a later process given the same pid."""
    parents = {}
    for entry in Path("/proc").iterdir():
        stat = _stat(int(entry.name)) if entry.name.isdigit() else None
        if stat is not None:
            parents[int(entry.name)] = (int(stat[1]), stat[19])
    found: dict[int, str] = {}
    level = {pid}
    while level:
        level = {child for child, (parent, _) in parents.items() if parent in level}
        found.update({child: parents[child][1] for child in level})
    return found


def _running(pid: int, started: str) -> bool:
    stat = _stat(pid)  # a zombie has ended; only its parent, maybe init, can reap it
    return stat is not None and stat[19] == started and stat[0] != "Z"


def _as_from_a_terminal() -> None:
    """Ctrl-C as a terminal delivers it: a test run started in the background of a script
    (CI's `... &`) has SIGINT ignored, and the command rightly keeps an ignored signal
    ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _busy_workers(process: subprocess.Popen[bytes], cache: Path) -> dict[int, str]:
    """The command's workers, once they have stored a first clip and are on the next."""
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline and process.poll() is None, "prepare ended early"
        if list((cache / "frames").glob("*/frames.json")):
            workers = _descendants(process.pid)
            if workers:
                return workers
        time.sleep(0.02)


def _wait_until_ended(workers: dict[int, str], seconds: float) -> list[int]:
    """The workers still running after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        running = [pid for pid, started in workers.items() if _running(pid, started)]
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


@pytest.mark.slow  # runs the hss-inspect command twice over six clips per signal
@pytest.mark.skipif(sys.platform != "linux", reason="finds the workers in /proc")
@pytest.mark.parametrize("stop", list(STOPS))
def test_prepare_stopped_by_a_signal_leaves_no_worker_and_a_rerun_completes(
    stop: str, stopped_release: tuple[Path, dict[str, bytes]], tmp_path: Path
) -> None:
    release, clean = stopped_release
    number, to_group = STOPS[stop]
    command = [*_prepare_command(release), "--jobs", "2"]
    env = {**os.environ, "HSS_INSPECT_CACHE": str(tmp_path / "cache")}
    output = tmp_path / "output.txt"
    # Output to a file, not a pipe: a worker left alive would hold a pipe open.
    with output.open("wb") as out:
        process = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_as_from_a_terminal,
        )
    try:
        workers = _busy_workers(process, tmp_path / "cache")
        (os.killpg if to_group else os.kill)(process.pid, number)
        status = process.wait(timeout=60)
        assert _wait_until_ended(workers, 10) == [], f"workers outlived prepare ({stop})"
    finally:
        with contextlib.suppress(ProcessLookupError):  # whatever a failure left behind
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    said = output.read_text()
    if number == signal.SIGKILL:
        assert status == -signal.SIGKILL
    else:
        assert status == 128 + number, said
        assert "Traceback" not in said, said
        assert f"hss-inspect prepare: stopped by {signal.Signals(number).name}" in said, said
        assert "running the same command again prepares the rest" in said

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"prepared {STOPPED_CLIPS} clip(s)" in done.stdout and "0 failure(s)" in done.stdout
    assert _entries(tmp_path / "cache") == clean


def test_a_stop_whose_raise_went_nowhere_still_ends_the_wait() -> None:
    """A signal landing where Python only prints exceptions (logging's callbacks around a
    fork) still stops the command at its next wait, and the handlers are put back."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("only the main thread handles signals")
    before = signal.getsignal(signal.SIGTERM)
    later: Future[int] = Future()
    threading.Timer(1.0, later.set_result, (1,)).start()
    with pytest.raises(Stopped) as stopped, stopping_on_signals():
        with contextlib.suppress(Stopped):  # the raise that went nowhere
            signal.raise_signal(signal.SIGTERM)
        next(completed([later]))
    assert stopped.value.exit_status == 143
    assert signal.getsignal(signal.SIGTERM) is before


def test_completed_gives_each_job_once_in_the_order_they_finish() -> None:
    """A job already done and jobs finishing out of the order they were given in: each
    comes out once, as it finishes (what `looks_of` and `prepare` rely on to put every
    result in its place and to report progress as it happens)."""
    done_before: Future[int] = Future()
    done_before.set_result(-1)
    later: list[Future[int]] = [Future() for _ in range(4)]
    finishing = [3, 0, 2, 1]

    def finish() -> None:
        for n in finishing:
            time.sleep(0.05)
            later[n].set_result(n)

    threading.Thread(target=finish).start()
    came_out = list(completed([later[0], done_before, *later[1:]]))
    assert came_out == [done_before, *(later[n] for n in finishing)]
    assert [f.result() for f in came_out] == [-1, *finishing]


def test_prepare_reports_failures_with_their_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release_with_clips(tmp_path / "release", 2)
    (release / "media" / "clip_1.mp4").write_bytes(b"not a video")
    status = cli_main(["prepare", "--dataset", str(release), "--jobs", "1"])
    out = capsys.readouterr().out
    assert status == 1
    assert "prepared 1 clip(s)" in out and "1 failure(s)" in out
    assert "FAILED clip-1 (media/clip_1.mp4)" in out and "cannot decode video" in out


def test_cache_command_shows_and_clears(
    tmp_path: Path, private_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=30, seconds=2.0)
    frame_cache.cached_sample_video(clip, FrameSettings())
    assert cli_main(["cache"]) == 0
    shown = capsys.readouterr().out
    assert str(private_cache) in shown and "holds 1 frame set(s)" in shown
    assert cli_main(["cache", "--clear"]) == 0
    assert cache_folder.cache_stats().frame_entries == 0


def test_warm_cache_needs_no_decoding_or_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=30, seconds=2.0)
    first = frame_cache.cached_sample_video(clip, FrameSettings())

    def refuse(*_: object) -> None:
        raise AssertionError("a warm cache read the clip again")

    monkeypatch.setattr(frame_cache, "sample_video_sweep", refuse)
    monkeypatch.setattr(facts, "file_sha256", refuse)
    assert frame_cache.cached_sample_video(clip, FrameSettings()) == first


def test_sweep_decodes_once_into_entries_identical_to_one_budget_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import av

    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=30, seconds=8.0, size=(160, 120), options={"g": "60", "bf": "2"})
    sweep = [FrameSettings(max_frames=b) for b in (3, 7, 500)]
    decoded = 0
    original = av.Packet.decode

    def counting(packet: av.Packet) -> list[av.VideoFrame]:
        nonlocal decoded
        frames = original(packet)
        decoded += len(frames)
        return frames

    monkeypatch.setattr(av.Packet, "decode", counting)
    swept = frame_cache.cached_sample_videos(clip, sweep, root=tmp_path / "swept")
    decoded_in_sweep, decoded = decoded, 0
    alone = [frame_cache.cached_sample_video(clip, s, root=tmp_path / "alone") for s in sweep]
    assert swept == alone
    assert _entries(tmp_path / "swept") == _entries(tmp_path / "alone")
    assert len(_entries(tmp_path / "swept")) == 2 * len(sweep)  # frames.uris + frames.json
    # One pass: each of the clip's 240 frames decoded at most once, and fewer frames in
    # all than the three passes made one budget at a time.
    assert decoded_in_sweep < decoded
    assert decoded_in_sweep <= 8 * 30


def test_prepare_time_limit_fails_each_file_with_the_reason(
    tmp_path: Path, private_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = _release_with_clips(tmp_path / "release", 2)
    status = cli_main(
        ["prepare", "--dataset", str(release), "--jobs", "1", "--media-timeout", "1e-9"]
    )
    captured = capsys.readouterr()
    out = captured.out
    assert status == 1 and "2 failure(s)" in out, captured.err
    assert "FAILED clip-0 (media/clip_0.mp4)" in out and "1e-09 s media time limit" in out
