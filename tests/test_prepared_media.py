"""Media prepared once and read by every model, and a cache that is never the reason a
sample fails: through the real `hss-inspect prepare`, `hss-inspect estimate` and `inspect
eval` against the provider stand-ins, with every opening of a clip counted where PyAV
opens it (tests/support/count_opens), in the commands' own processes."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import json
import logging
import os
import subprocess
import sys
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import pytest
from inspect_ai.log import EvalLog
from inspect_ai.model import ContentText

from hss_inspect.commands.cli import main as cli_main
from hss_inspect.conditions.prompt import native_video_note
from hss_inspect.conditions.turn import native_video_content
from hss_inspect.core.settings import FrameSettings
from hss_inspect.media import cache_folder, frame_cache, image_cache
from hss_inspect.media.activity import activity
from hss_inspect.media.facts import cached_clip_geometry
from hss_inspect.media.image import prepare_image
from hss_inspect.media.plan import thin_uniformly
from hss_inspect.media.probe import probe_duration, probe_frame_size
from hss_inspect.media.video import sample_video
from tests.support.fixture_repo import (
    FixtureTask,
    build_repo,
    one_criterion_task,
    write_noise_video,
    write_video,
)
from tests.support.runs import INSPECT, lines_after_banner, run_eval
from tests.support.servers import provider_stand_in

HERE = Path(__file__).parent
CLI = str(Path(sys.executable).with_name("hss-inspect"))
COUNT_OPENS = HERE / "support" / "count_opens"
CLIPS = {"clip-a": "media/a.mp4", "clip-b": "media/b.webm", "clip-c": "media/c.mp4"}
QWEN = "openai-api/standin/qwen2.5-vl-7b-instruct"  # a model family with an image-token rule


def _task(task_id: str, media_type: str, media_path: str) -> FixtureTask:
    return one_criterion_task(task_id, "PASS", media_type, media_path)


TASKS = (
    _task("img-small", "image", "media/img_pass.png"),
    _task("img-large", "image", "media/img_large.png"),  # 4200 px: re-encoded
    *(_task(task_id, "video", path) for task_id, path in CLIPS.items()),
)


def build_release(root: Path) -> Path:
    build_repo(root, TASKS)
    media = root / "media"
    write_video(media / "a.mp4", fps=30, seconds=12.0, size=(320, 180), options={"bf": "2"})
    write_video(media / "b.webm", codec="libvpx-vp9", fps=24, seconds=9.0, size=(256, 144))
    write_video(media / "c.mp4", fps=25, seconds=10.0, size=(240, 160), rotation=90)
    return root


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_release(tmp_path_factory.mktemp("prepared-release"))


def counted_env(cache: Path, opens: Path, **extra: str) -> dict[str, str]:
    """The environment of a child process whose clip openings are counted into `opens`."""
    path = os.pathsep.join(p for p in (str(COUNT_OPENS), os.environ.get("PYTHONPATH")) if p)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "HSS_TEST_OPEN_LOG": str(opens),
        "HSS_INSPECT_CACHE": str(cache),
        **extra,
    }


def clip_opens(opens: Path, release: Path) -> list[str]:
    """The clips of `release` that PyAV opened, one entry per opening."""
    if not opens.exists():
        return []
    media = str(release / "media")
    return [line.split(" ", 1)[1] for line in opens.read_text().splitlines() if media in line]


def command(
    args: list[str], env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def frame_hashes(clip: Path, settings: FrameSettings) -> list[str]:
    """The frames a fresh decode gives, no cache involved: the reference for the wire."""
    return [hashlib.sha256(j).hexdigest() for j in sample_video(clip, settings).jpegs]


def media_requests(wire_log: Path) -> list[dict[str, Any]]:
    """The stand-in's requests that carry media: every HSS request does (Inspect's openai
    provider sends one without, first)."""
    entries = [json.loads(line) for line in wire_log.read_text().splitlines()]
    return [e for e in entries if e.get("images")]


def sent(log: EvalLog) -> dict[str, dict[str, Any]]:
    return {str(s.id): s.metadata["sent_media"] for s in log.samples or []}


# ---- the rules, as pure functions and on the store --------------------------------------


def test_an_image_cap_at_or_above_max_frames_does_not_split_the_cache() -> None:
    # No clip is planned more than max_frames frames, and thinning to a cap at least that
    # large keeps every one of them: Anthropic's 600 and OpenAI's 1,500 change nothing.
    assert thin_uniformly(500, 600) == thin_uniformly(500, 1500) == list(range(500))
    keys = {
        frame_cache.frames_key("d" * 64, FrameSettings(max_images=cap)) for cap in (None, 500, 600)
    }
    assert keys == {frame_cache.frames_key("d" * 64, FrameSettings(max_images=1500))}
    assert frame_cache.frames_key("d" * 64, FrameSettings(max_images=499)) not in keys
    assert frame_cache.frames_key("d" * 64, FrameSettings(frame_side=767)) not in keys


@pytest.fixture
def counted_av_open(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real = av.open

    def counting(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(av, "open", counting)
    return opened


@pytest.mark.parametrize("cap", [3, 10, 23])
def test_a_thinned_set_comes_from_the_prepared_entry_byte_for_byte(
    tmp_path: Path, cap: int, counted_av_open: list[str]
) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=30, seconds=12.0, size=(160, 90), options={"g": "90", "bf": "2"})
    frame_cache.cached_sample_video(clip, FrameSettings())
    counted_av_open.clear()
    thinned = frame_cache.cached_sample_video(clip, FrameSettings(max_images=cap))
    assert counted_av_open == []  # taken from the entry: the clip is not opened
    decoded = sample_video(clip, FrameSettings(max_images=cap))  # a decode of its own
    assert thinned == decoded and len(thinned.jpegs) == cap
    # stored as an entry of its own: read next time without the unthinned one
    assert len(list((cache_folder.cache_root() / "frames").glob("*/frames.json"))) == 2


def test_a_clip_cut_short_thins_from_its_entry_as_a_decode_does(tmp_path: Path) -> None:
    whole = tmp_path / "whole.webm"
    write_video(whole, codec="libvpx-vp9", fps=24, seconds=6.0, size=(128, 72))
    cut = tmp_path / "cut.webm"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size * 2 // 3])
    full = frame_cache.cached_sample_video(cut, FrameSettings())
    assert full.truncation is not None  # the frames stop where the data does
    thinned = frame_cache.cached_sample_video(cut, FrameSettings(max_images=4))
    assert thinned == sample_video(cut, FrameSettings(max_images=4))


def test_clip_facts_spare_opening_a_prepared_clip(
    tmp_path: Path, counted_av_open: list[str]
) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=25, seconds=4.0, size=(240, 160), rotation=90)
    expected = (probe_duration(clip), *probe_frame_size(clip))
    frame_cache.cached_sample_video(clip, FrameSettings())
    counted_av_open.clear()
    assert cached_clip_geometry(clip) == expected == (4.0, 160, 240)
    assert counted_av_open == []
    # a damaged record is probed again, never served
    (facts,) = (cache_folder.cache_root() / "facts").glob("*.json")
    facts.write_text(facts.read_text().replace('"height": 240', '"height": 241'))
    assert cached_clip_geometry(clip) == expected
    assert len(counted_av_open) >= 1


def test_a_prepared_clip_sent_as_native_video_is_not_opened_for_its_duration(
    tmp_path: Path, counted_av_open: list[str]
) -> None:
    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=25, seconds=3.0, size=(240, 160))
    duration = probe_duration(clip)
    frame_cache.cached_sample_video(clip, FrameSettings())
    counted_av_open.clear()
    content, details = asyncio.run(native_video_content(clip))
    assert counted_av_open == []
    assert details["duration"] == duration == 3.0
    assert isinstance(content[0], ContentText)
    assert content[0].text == native_video_note(duration)


def test_an_image_is_prepared_once_for_every_providers_limits(
    release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small, large = release / "media" / "img_pass.png", release / "media" / "img_large.png"
    task_limits = (4096, 4_500_000, None)
    openai_limits = (4096, 4_500_000, 30_720_000)  # OpenAI's pixel cap: no image reaches it
    for path in (small, large):
        image_cache.cached_prepare_image(path, *task_limits[:2])

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("an image was prepared again for limits that change nothing")

    monkeypatch.setattr(image_cache, "prepare_image", refuse)
    for path in (small, large):
        side, size, pixels = openai_limits
        got = image_cache.cached_prepare_image(path, side, size, max_pixels=pixels)
        assert got == prepare_image(path, side, size, max_pixels=pixels)[0]
    assert image_cache.cached_prepare_image(large, 4096, 4_500_000).reencoded


@pytest.fixture
def full_disk(private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The private cache on a disk that is full: every write into it fails with ENOSPC, at
    the call that writes the bytes. This process has had no storage problem before."""
    real_write = Path.write_bytes

    def no_space(self: Path, data: Any) -> int:
        if private_cache in self.parents:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real_write(self, data)

    monkeypatch.setattr(Path, "write_bytes", no_space)
    monkeypatch.setattr(cache_folder, "_problems", {})
    monkeypatch.setattr(frame_cache, "_unstored", OrderedDict())
    return private_cache


def test_a_full_disk_at_the_write_sends_the_frames_from_memory_and_warns_once(
    tmp_path: Path, full_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    private_cache = full_disk
    clips = [tmp_path / f"clip{i}.mp4" for i in range(2)]
    for clip in clips:
        write_video(clip, fps=30, seconds=3.0, size=(160, 90))
    with caplog.at_level(logging.WARNING, logger="hss_inspect.media.cache_folder"):
        for clip in clips:
            got = frame_cache.cached_sample_video(clip, FrameSettings())
            assert [hashlib.sha256(j).hexdigest() for j in got.jpegs] == frame_hashes(
                clip, FrameSettings()
            )
    (warning,) = [r.getMessage() for r in caplog.records]
    assert f"the media cache {private_cache} cannot store prepared media" in warning
    assert "No space left on device" in warning and " free)" in warning
    assert "free space there, or point HSS_INSPECT_CACHE at a folder with room" in warning
    assert not list((private_cache / "frames").iterdir())  # nothing half-written left
    problem = cache_folder.storage_problem()
    assert problem is not None and problem.full and problem.free_bytes is not None


def test_estimate_says_what_a_cache_that_cannot_store_leaves_to_decode(
    release: Path, full_disk: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    args = ["estimate", "--model", "openai-api/standin/some-vlm", "--dataset", str(release)]
    monkeypatch.setenv("STANDIN_API_KEY", "k")
    assert cli_main([*args, "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert "media in the cache:  0 of 3 clip(s), 0 of 2 image(s)" in out
    frames = sum(len(sample_video(release / p, FrameSettings()).jpegs) for p in CLIPS.values())
    assert f"left to decode:      3 clip(s), {frames} frames: " in out
    assert "the cache could not keep them, so the run decodes them again" in out


def test_a_cache_path_that_is_a_file_is_one_error_naming_it(
    tmp_path: Path, release: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    for configured, why in ((blocker, "it is a file"), (blocker / "sub", f"{blocker} is a file")):
        monkeypatch.setenv("HSS_INSPECT_CACHE", str(configured))
        for args in (
            ["prepare", "--dataset", str(release), "--jobs", "1"],
            ["estimate", "--model", "openai-api/standin/some-vlm", "--dataset", str(release)],
            ["frames", str(release / CLIPS["clip-a"]), "--out", str(tmp_path / "out")],
            ["cache"],
        ):
            assert cli_main(args) == 1
            captured = capsys.readouterr()
            assert captured.out == ""
            assert captured.err == (
                f"hss-inspect {args[0]}: HSS_INSPECT_CACHE={configured} is not a usable folder "
                f"({why}): point HSS_INSPECT_CACHE at a folder, or unset it for "
                "~/.cache/hss_inspect\n"
            )
    assert blocker.read_text() == "x"


# ---- through the real commands and providers ---------------------------------------------

PROVIDERS = {
    # without a --max-tokens, Anthropic's SDK asks for streaming, which the stand-in lacks
    "anthropic/claude-opus-5": ("ANTHROPIC", "", ("-M", "streaming=false", "--max-tokens", "1000")),
    "openai/gpt-6-astra": ("OPENAI", "/v1", ()),
    "openai-api/standin/some-vlm": ("STANDIN", "/v1", ()),
}


@pytest.fixture(scope="module")
def prepared_cache(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("prepared-cache")
    done = command(
        ["prepare", "--dataset", str(release), "--jobs", "2"], counted_env(cache, cache / "x")
    )
    assert done.returncode == 0, done.stderr
    assert "prepared 3 clip(s)" in done.stdout and "0 failure(s)" in done.stdout
    return cache


@pytest.mark.slow  # an estimate and an eval per provider
@pytest.mark.parametrize("model", list(PROVIDERS))
def test_prepared_media_is_read_by_every_provider_without_a_decode(
    model: str,
    release: Path,
    prepared_cache: Path,
    model_server: tuple[str, Path],
    tmp_path: Path,
) -> None:
    prefix, suffix, model_args = PROVIDERS[model]
    opens = tmp_path / "opens.log"
    with provider_stand_in(tmp_path / "server", {}) as (url, wire_log):
        env = counted_env(
            prepared_cache,
            opens,
            **{f"{prefix}_BASE_URL": url + suffix, f"{prefix}_API_KEY": "test-key"},
        )
        estimate = command(["estimate", "--model", model, "--dataset", str(release)], env)
        assert estimate.returncode == 0, estimate.stderr
        # no banner of Inspect's hooks: the command prints only its own lines (for the
        # OpenAI-compatible stand-in, its warning that the server names no window)
        assert "hooks enabled" not in estimate.stderr and "inspect_ai v" not in estimate.stderr
        if not model.startswith("openai-api/"):
            assert estimate.stderr == ""
        assert "media in the cache:  3 of 3 clip(s), 2 of 2 image(s)" in estimate.stdout
        assert "left to decode:      nothing" in estimate.stdout
        log, _ = run_eval(
            "hss_inspect/hss",
            tmp_path / "logs",
            model_server[0],
            *model_args,
            model=model,
            epochs=1,
            task_args={"dataset": release},
            env={k: env[k] for k in ("PYTHONPATH", "HSS_TEST_OPEN_LOG", "HSS_INSPECT_CACHE")}
            | {f"{prefix}_BASE_URL": url + suffix, f"{prefix}_API_KEY": "test-key"},
        )
        requests = media_requests(wire_log)
    assert clip_opens(opens, release) == []  # neither the estimate nor the run opened a clip
    assert log.status == "success" and len(requests) == len(TASKS)
    records = sent(log)
    for task_id, path in CLIPS.items():
        assert records[task_id]["frame_sha256"] == frame_hashes(release / path, FrameSettings())
    images = sorted(len(r["images"]) for r in requests)
    assert images == sorted([1, 1, *(records[t]["frame_count"] for t in CLIPS)])


@pytest.mark.slow  # three commands and an eval
def test_a_context_fitted_model_prepared_with_model_decodes_nothing_in_its_run(
    release: Path, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    cache, opens = tmp_path / "cache", tmp_path / "opens.log"
    # a window in which no clip's 8 frames fit at their own size: thinned and shrunk
    fit = ["--context-window", "1500", "--max-tokens", "200"]
    with provider_stand_in(tmp_path / "server", {}) as (url, wire_log):
        env = counted_env(cache, opens, STANDIN_BASE_URL=url + "/v1", STANDIN_API_KEY="k")
        plain = command(["prepare", "--dataset", str(release), "--jobs", "1"], env)
        assert plain.returncode == 0, plain.stderr
        before = command(["estimate", "--model", QWEN, "--dataset", str(release), *fit], env)
        # what a plain prepare cannot hold: frames shrunk for this model's window
        assert "left to decode:      2 clip(s)" in before.stdout, before.stdout
        cache_dir = tmp_path / "cache-for-model"
        env["HSS_INSPECT_CACHE"] = str(cache_dir)
        prepared = command(
            ["prepare", "--dataset", str(release), "--jobs", "1", "--model", QWEN, *fit], env
        )
        assert prepared.returncode == 0, prepared.stderr
        assert "5 model turn(s)" in prepared.stdout, prepared.stdout
        assert all(line.startswith("[") for line in prepared.stderr.splitlines())  # progress only
        opens.unlink()
        log, _ = run_eval(
            "hss_inspect/hss",
            tmp_path / "logs",
            model_server[0],
            "--max-tokens",
            "200",
            model=QWEN,
            epochs=1,
            task_args={"dataset": release, "context_window": 1500},
            env={
                "PYTHONPATH": env["PYTHONPATH"],
                "HSS_TEST_OPEN_LOG": str(opens),
                "HSS_INSPECT_CACHE": str(cache_dir),
                "STANDIN_BASE_URL": url + "/v1",
                "STANDIN_API_KEY": "k",
            },
        )
        requests = media_requests(wire_log)
    assert clip_opens(opens, release) == []
    assert log.status == "success"
    records = sent(log)
    for task_id, path in CLIPS.items():
        record, fitted = records[task_id], records[task_id]["token_fit"]
        assert fitted["thinned_to_fit"] and record["frame_count"] == 8 < record["planned_frames"]
        side = fitted["frame_side_limit"]
        settings = FrameSettings(max_images=8, frame_side=side)
        assert record["frame_sha256"] == frame_hashes(release / path, settings)
    assert any(records[t]["token_fit"]["shrunk_to_fit"] for t in CLIPS)
    assert sorted(len(r["images"]) for r in requests) == [1, 1, 8, 8, 8]


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "1m") -> Iterator[Path]:
    """A real filesystem of `size` (tmpfs) at `folder`; the test is skipped where mounting
    is not permitted (the ENOSPC test at the write call runs everywhere)."""
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a {size} tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


WARNING = "cannot store prepared media"


@pytest.mark.slow  # two evals, one on a 1 MB filesystem
def test_a_cache_on_a_full_disk_scores_every_sample_with_a_fresh_caches_frames(
    tmp_path: Path, model_server: tuple[str, Path]
) -> None:
    root = build_release(tmp_path / "release")
    # about 2 MB of frames: more than the disk holds
    write_noise_video(root / "media" / "noise.mp4", 40, (320, 180))
    tasks = (*TASKS, _task("clip-noise", "video", "media/noise.mp4"))
    build_repo(root, tasks)
    with (
        small_disk(tmp_path / "small") as small,
        provider_stand_in(tmp_path / "server", {}) as (url, _),
    ):
        env = {"STANDIN_BASE_URL": url + "/v1", "STANDIN_API_KEY": "k"}
        runs = {}
        for name, cache in (("full", small / "cache"), ("fresh", tmp_path / "fresh")):
            runs[name] = run_eval(
                "hss_inspect/hss",
                tmp_path / f"logs-{name}",
                model_server[0],
                model="openai-api/standin/some-vlm",
                epochs=2,
                task_args={"dataset": root},
                env={**env, "HSS_INSPECT_CACHE": str(cache)},
            )
        prepared = command(
            ["prepare", "--dataset", str(root), "--jobs", "2"],
            {**os.environ, "HSS_INSPECT_CACHE": str(small / "prepare")},
        )
        left = list(small.rglob(".partial-*"))
    (full, full_run), (fresh, fresh_run) = runs["full"], runs["fresh"]
    assert full.status == fresh.status == "success"
    for log in (full, fresh):
        assert len(log.samples or []) == 2 * len(tasks)
        assert all(s.error is None and s.scores for s in log.samples or [])
    by_sample = {(s.id, s.epoch): s.metadata["sent_media"] for s in full.samples or []}
    for sample in fresh.samples or []:
        assert by_sample[(sample.id, sample.epoch)] == sample.metadata["sent_media"]
    noise = sent(full)["clip-noise"]
    assert noise["frame_sha256"] == frame_hashes(root / "media" / "noise.mp4", FrameSettings())
    output = full_run.stdout + full_run.stderr
    assert output.count(WARNING) == 1, output
    assert f"the media cache {small / 'cache'} {WARNING}" in output
    assert "free space there, or point HSS_INSPECT_CACHE at a folder with room" in output
    assert WARNING not in fresh_run.stdout + fresh_run.stderr
    assert left == []  # no half-written entry left behind
    # `prepare` says so too: once, and it does not call the cache prepared
    assert prepared.returncode == 1
    assert prepared.stderr.count(WARNING) == 1, prepared.stderr
    assert "NOT STORED: the cache could not keep the media of" in prepared.stdout


@pytest.mark.slow  # runs `inspect eval`
def test_a_cache_path_that_is_a_file_stops_the_run_before_any_request(
    release: Path, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    blocker = tmp_path / "cache-file"
    blocker.write_text("not a folder")
    judge_url, judge_log = model_server
    judged_before = judge_log.read_text()
    with provider_stand_in(tmp_path / "server", {}) as (url, wire_log):
        eval_args = ["hss_inspect/hss", "--model", "openai-api/standin/some-vlm"]
        eval_args += [
            "--model-role",
            "grader=openai-api/scripted/judge",
            "-T",
            f"dataset={release}",
        ]
        eval_args += ["--log-dir", str(tmp_path / "logs"), "--display", "plain"]
        done = subprocess.run(
            [INSPECT, "eval", *eval_args],
            env={
                **os.environ,
                "HSS_INSPECT_CACHE": str(blocker),
                "STANDIN_BASE_URL": url + "/v1",
                "STANDIN_API_KEY": "k",
                "SCRIPTED_BASE_URL": judge_url,
                "SCRIPTED_API_KEY": "k",
                "COLUMNS": "400",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert wire_log.read_text() == ""  # the model was never called
    assert judge_log.read_text() == judged_before  # nor the judge
    assert done.returncode != 0
    message = (
        f"HSS_INSPECT_CACHE={blocker} is not a usable folder (it is a file): point "
        "HSS_INSPECT_CACHE at a folder, or unset it for ~/.cache/hss_inspect"
    )
    output = done.stdout + done.stderr
    assert lines_after_banner(output) == [message], output
    assert "Traceback" not in output and blocker.read_text() == "not a folder"


@pytest.mark.slow  # builds the five models of the recipe
def test_prepare_for_a_recipe_leaves_nothing_for_its_runs_to_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counted_av_open: list[str]
) -> None:
    import asyncio

    from hss_inspect.conditions.turn import user_turn_for
    from hss_inspect.core.options import DEFAULTS, media_settings
    from hss_inspect.data.release import open_release
    from hss_inspect.providers.context import budget_for_name
    from hss_inspect.recipes.plans import plan_recipe

    root = tmp_path / "release"
    build_repo(root, (_task("clip-long", "video", "media/long.mp4"),))
    clip = root / "media" / "long.mp4"
    write_video(clip, fps=30, seconds=20.0, size=(160, 90))  # 40 frames at 2 fps
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")  # the models are built, never called
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    monkeypatch.setenv("FIREWORKS_API_KEY", "k")
    args = ["prepare", "--dataset", str(root), "--recipe", "judges", "--jobs", "1"]
    assert cli_main(args) == 0
    counted_av_open.clear()
    release = open_release(str(root), "main")
    (row,) = release.read_rows()
    before = activity()
    sent_frames, opened = {}, {}
    for planned in plan_recipe("judges"):
        media = media_settings({**DEFAULTS, **planned.task_args})
        budget = asyncio.run(
            budget_for_name(
                planned.model, None, media.output_reserve, None, planned.generate.get("max_tokens")
            )
        )
        turn = user_turn_for(release, media, planned.model, row.sample_metadata(), budget)
        sent_frames[planned.model] = asyncio.run(turn)[1]
        opened[planned.model] = len(counted_av_open)
        counted_av_open.clear()
    assert activity().since(before).clips == {}  # no run decoded a frame
    # a clip sent whole (Gemini's native video) takes its duration from the cache's facts
    assert opened == dict.fromkeys(sent_frames, 0)
    # GLM-5.3-flash on Fireworks: 30 images a request, so 30 of the 40 frames
    glm = next(r for m, r in sent_frames.items() if "glm" in m)
    assert glm["frame_count"] == 30 and glm["planned_frames"] == 40
    assert glm["frame_sha256"] == frame_hashes(clip, FrameSettings(max_images=30))
    assert {r["kind"] for r in sent_frames.values()} == {"frames", "native_video"}
