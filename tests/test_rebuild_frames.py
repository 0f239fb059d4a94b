"""A log written with --no-log-images still shows what the model saw: `hss-inspect
rebuild-frames` rebuilds the sent media from the log record, byte for byte, and refuses a
copy of the media that is not the one the eval read."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from tests.support.runs import run_eval

pytestmark = pytest.mark.slow

HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))
SAMPLES = ("vid-rot-flaky", "img-large")  # a rotated clip; an image re-encoded to fit


@pytest.fixture(scope="module")
def unlogged_run(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[EvalLog, Path, list[list[bytes]]]:
    """A run without images in its log; the images each candidate request carried."""
    base_url, request_log = model_server
    start = len(request_log.read_text().splitlines())
    log_dir = tmp_path_factory.mktemp("logs")
    log, done = run_eval(
        "hss_inspect/hss",
        log_dir,
        base_url,
        "--no-log-images",
        "--sample-id",
        ",".join(SAMPLES),
        task_args={"dataset": hss_repo},
        epochs=1,
        env={"HSS_INSPECT_CACHE": str(tmp_path_factory.mktemp("run-cache"))},
    )
    assert log.status == "success", done.stderr
    requests = [json.loads(line) for line in request_log.read_text().splitlines()[start:]]
    sent = [images_of(r) for r in requests if "candidate" in r["model"]]
    (log_file,) = log_dir.glob("*.eval")
    return log, log_file, sent


def images_of(request: dict) -> list[bytes]:
    parts = [p for m in request["messages"] for p in m["content"] if isinstance(p, dict)]
    uris = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    return [base64.b64decode(uri.split(",", 1)[1]) for uri in uris]


def rebuild(log_file: Path, sample: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            HSS_INSPECT,
            "rebuild-frames",
            str(log_file),
            "--sample",
            sample,
            "--out",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_log_holds_no_images(unlogged_run: tuple[EvalLog, Path, list[list[bytes]]]) -> None:
    _, log_file, sent = unlogged_run
    assert sorted(len(images) > 1 for images in sent) == [False, True]
    with zipfile.ZipFile(log_file) as archive:
        text = b"".join(archive.read(n) for n in archive.namelist())
    assert b"data:image/jpeg;base64" not in text
    assert b"data:image/png;base64" not in text


def test_rebuilt_frames_are_the_frames_the_model_received(
    unlogged_run: tuple[EvalLog, Path, list[list[bytes]]], tmp_path: Path
) -> None:
    log, log_file, sent = unlogged_run
    (frames_sent,) = [images for images in sent if len(images) > 1]
    done = rebuild(log_file, "vid-rot-flaky", tmp_path / "out")  # an empty media cache
    assert done.returncode == 0, done.stderr
    rebuilt = [p.read_bytes() for p in sorted((tmp_path / "out").glob("frame_*.jpg"))]
    assert rebuilt == frames_sent
    record = next(s for s in log.samples or [] if s.id == "vid-rot-flaky").metadata["sent_media"]
    assert record["frame_sha256"] == [hashlib.sha256(f).hexdigest() for f in frames_sent]
    manifest = json.loads((tmp_path / "out" / "sent_media.json").read_text())
    assert manifest["timestamps"] == record["timestamps"]
    assert f"{len(rebuilt) + 1} hash(es) match the log" in done.stdout


def test_rebuilt_image_is_the_image_the_model_received(
    unlogged_run: tuple[EvalLog, Path, list[list[bytes]]], tmp_path: Path
) -> None:
    _, log_file, sent = unlogged_run
    (image_sent,) = [images for images in sent if len(images) == 1]
    done = rebuild(log_file, "img-large", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    (written,) = (tmp_path / "out").glob("image.*")
    assert [written.read_bytes()] == image_sent


def test_a_different_copy_of_the_media_is_refused(
    unlogged_run: tuple[EvalLog, Path, list[list[bytes]]], hss_repo: Path, tmp_path: Path
) -> None:
    _, log_file, _ = unlogged_run
    copy = tmp_path / "copy"
    shutil.copytree(hss_repo, copy)
    clip = copy / "media" / "vid_rot.mp4"
    clip.write_bytes(clip.read_bytes() + b"\0")
    done = rebuild(log_file, "vid-rot-flaky", tmp_path / "out", "--dataset", str(copy))
    assert done.returncode == 1
    assert done.stderr.startswith(
        "hss-inspect rebuild-frames: sample vid-rot-flaky epoch 1: media/vid_rot.mp4 from "
    )
    assert "give the copy the eval read with --dataset" in done.stderr
    assert not list((tmp_path / "out").glob("frame_*.jpg"))
