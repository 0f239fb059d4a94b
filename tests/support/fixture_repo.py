"""A small HSS-format release generated on the spot: rows, images and PyAV-encoded clips.

Each question carries a behaviour word that the scripted models of `scripted_server.py`
act on, so the expected grades of every attempt are known in advance:

  PASS       the candidate answers, the judge marks every criterion met
  FAIL       the judge marks the first criterion unmet
  ONCE       the candidate's first attempt passes, later attempts fail (pass@1 = 1/3)
  FLAKY      the judge's first reply is unreadable, its re-ask is good (all met)
  GARBLE     the judge never replies readably: a grading failure
  EMPTY      the candidate returns no text: 'no answer', a zero
"""

from __future__ import annotations

import io
import json
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image

EXIF_ORIENTATION = 0x0112


@dataclass(frozen=True)
class FixtureTask:
    task_id: str
    behaviour: str
    domain: str
    subdomain: str
    media_type: str
    media_path: str
    criteria: tuple[dict[str, Any], ...]

    def row(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "domain": self.domain,
            "subdomain": self.subdomain,
            "media_type": self.media_type,
            "media_path": self.media_path,
            "prompt": f"What happens here? [{self.behaviour}]",
            "golden_response": f"The reference answer for {self.task_id}.",
            "rubric_criteria": list(self.criteria),
            "num_criteria": len(self.criteria),
        }


def _one(title: str = "States the key fact") -> tuple[dict[str, Any], ...]:
    return ({"id": "c1", "title": title},)


def one_criterion_task(
    task_id: str, behaviour: str, media_type: str, media_path: str
) -> FixtureTask:
    """A task of one domain with a single criterion: where only the media matter."""
    return FixtureTask(
        task_id,
        behaviour,
        "Temporal & Causal Dynamics",
        "Retrodiction",
        media_type,
        media_path,
        _one(),
    )


TASKS: tuple[FixtureTask, ...] = (
    FixtureTask(
        "img-pass",
        "PASS",
        "Temporal & Causal Dynamics",
        "Retrodiction",
        "image",
        "media/img_pass.png",
        _one(),
    ),
    FixtureTask(
        "img-fail",
        "FAIL",
        "Physical & Spatial Logic",
        "Hidden & Invisible",
        "image",
        "media/img_fail.jpg",
        ({"id": "c1", "title": "Names the object"}, {"id": "c2", "title": "Says where"}),
    ),
    FixtureTask(
        "img-exif-once",
        "ONCE",
        "Social Understanding",
        "Theory of Mind",
        "image",
        "media/img_exif.jpg",
        _one(),
    ),
    FixtureTask(
        "img-large",
        "PASS",
        "Abstract & Contextual Inference",
        "Patterns & Pareidolia",
        "image",
        "media/img_large.png",
        _one(),
    ),
    FixtureTask(
        "img-empty",
        "EMPTY",
        "Abstract & Contextual Inference",
        "Change & Consequence",
        "image",
        "media/img_pass.png",
        _one(),
    ),
    FixtureTask(
        "vid-pass",
        "PASS",
        "Temporal & Causal Dynamics",
        "Extrapolation",
        "video",
        "media/vid_cfr.mp4",
        _one(),
    ),
    FixtureTask(
        "vid-rot-flaky",
        "FLAKY",
        "Physical & Spatial Logic",
        'Spatial "Alien Viewpoint"',
        "video",
        "media/vid_rot.mp4",
        (
            {"id": "a", "title": "Gives the direction", "weight": 2},
            {"id": "b", "title": "Gives the reason", "weight": 1},
        ),
    ),
    FixtureTask(
        "vid-garble",
        "GARBLE",
        "Social Understanding",
        "Social Role, Norm & Power Dynamics",
        "video",
        "media/vid_vp9.webm",
        _one(),
    ),
)

# What each behaviour gives per attempt (pass, rubric) over 3 epochs; None = grading failure.
EXPECTED_ATTEMPTS: dict[str, list[tuple[int, float] | None]] = {
    "PASS": [(1, 1.0)] * 3,
    "FAIL": [(0, 0.5)] * 3,
    "ONCE": [(1, 1.0), (0, 0.0), (0, 0.0)],
    "FLAKY": [(1, 1.0)] * 3,
    "GARBLE": [None] * 3,
    "EMPTY": [(0, 0.0)] * 3,
}


def gradient_frame(width: int, height: int, index: int) -> np.ndarray:
    """Left half red, right half blue, with a brightness stripe that moves with `index`."""
    frame = np.zeros((height, width, 3), np.uint8)
    frame[:, : width // 2] = (220, 30, 30)
    frame[:, width // 2 :] = (30, 30, 220)
    frame[: max(1, height // 8), :, 1] = (index * 37) % 256
    return frame


INDEX_BITS = 12


def index_frame(width: int, height: int, index: int) -> np.ndarray:
    """A frame whose index survives lossy coding: 12 large black-or-white blocks."""
    frame = np.zeros((height, width, 3), np.uint8)
    columns, rows = 4, 3
    for bit in range(INDEX_BITS):
        if index >> bit & 1:
            row, column = divmod(bit, columns)
            frame[
                row * height // rows : (row + 1) * height // rows,
                column * width // columns : (column + 1) * width // columns,
            ] = 255
    return frame


def read_index(pixels: np.ndarray) -> int:
    """The index `index_frame` drew, read back from decoded (possibly scaled) pixels."""
    height, width = pixels.shape[:2]
    columns, rows = 4, 3
    value = 0
    for bit in range(INDEX_BITS):
        row, column = divmod(bit, columns)
        block = pixels[
            row * height // rows + height // 12 : (row + 1) * height // rows - height // 12,
            column * width // columns + width // 16 : (column + 1) * width // columns - width // 16,
        ]
        if block.mean() > 128:
            value |= 1 << bit
    return value


def write_video(
    path: Path,
    *,
    codec: str = "libx264",
    fps: int = 30,
    seconds: float = 3.0,
    size: tuple[int, int] = (96, 64),
    rotation: int = 0,
    frame_times: list[float] | None = None,
    options: dict[str, str] | None = None,
    numbered: bool = False,
    container_options: dict[str, str] | None = None,
) -> list[float]:
    """Encode a synthetic clip; returns the presentation time of every frame written.

    With `frame_times` the clip has those (variable) frame times, on a 1/1000 s clock;
    `numbered` draws each frame's index in it (see `index_frame`); `container_options`
    go to the muxer (e.g. `{"movflags": "faststart"}`).
    """
    draw = index_frame if numbered else gradient_frame
    if codec == "libx265":
        options = x265_without_threads(options or {})
    path.parent.mkdir(parents=True, exist_ok=True)
    times = frame_times or [i / fps for i in range(round(fps * seconds))]
    with av.open(str(path), "w", options=dict(container_options or {})) as container:
        stream = container.add_stream(codec, rate=fps, options=dict(options or {}))
        stream.width, stream.height = size
        stream.pix_fmt = "yuv420p"
        if frame_times is not None:
            stream.codec_context.time_base = Fraction(1, 1000)
        if rotation and hasattr(stream, "set_display_rotation"):
            stream.set_display_rotation(rotation)
        for index, time in enumerate(times):
            frame = av.VideoFrame.from_ndarray(draw(*size, index), format="rgb24")
            if frame_times is not None:
                frame.pts = round(time * 1000)
                frame.time_base = Fraction(1, 1000)
            else:
                frame.pts = index
                frame.time_base = Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    if rotation and not hasattr(stream, "set_display_rotation"):
        rotate_with_ffmpeg(path, rotation)
    return times


def x265_without_threads(options: dict[str, str]) -> dict[str, str]:
    """x265's options with its thread pool and frame threads off.

    A CI run lost a test worker to a native crash in a test that encodes a 2 s HEVC
    clip and samples it; 3,000 such encodes and 20,000 samplings alone did not crash,
    and x265's own tracker holds races in its thread pool. The package never encodes
    HEVC, so its fixtures encode on one thread, as fast at this size.
    """
    params = [p for p in options.get("x265-params", "").split(":") if p]
    params += ["pools=none", "frame-threads=1"]
    return {**options, "x265-params": ":".join(params)}


def rotate_with_ffmpeg(path: Path, rotation: int) -> None:
    """The display rotation PyAV before 16 cannot write (lmms-eval's venv pins av<16):
    the ffmpeg program's remux writes the same display matrix from the `rotate` tag."""
    remuxed = path.with_name(f"rotated-{path.name}")
    command = ["ffmpeg", "-y", "-loglevel", "error", "-i", str(path), "-c", "copy"]
    command += ["-metadata:s:v:0", f"rotate={rotation}", str(remuxed)]
    subprocess.run(command, check=True)
    remuxed.replace(path)


def write_noise_video(
    path: Path, frames: int, size: tuple[int, int] = (768, 432), seed: int = 0
) -> None:
    """High-entropy frames at 2 fps: JPEGs of a few hundred KB each at a modest count."""
    rng = np.random.default_rng(seed)
    with av.open(str(path), "w") as container:
        stream = container.add_stream(
            "libx264", rate=2, options={"crf": "4", "preset": "ultrafast"}
        )
        stream.width, stream.height = size
        stream.pix_fmt = "yuv420p"
        for index in range(frames):
            pixels = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts, frame.time_base = index, Fraction(1, 2)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def write_image(
    path: Path, size: tuple[int, int], fmt: str, orientation: int | None = None
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(gradient_frame(*size, 0))
    if orientation is not None:
        exif = Image.Exif()
        exif[EXIF_ORIENTATION] = orientation
        image.save(path, format=fmt, exif=exif.tobytes(), quality=90)
    else:
        image.save(path, format=fmt)


def build_repo(root: Path, tasks: tuple[FixtureTask, ...] = TASKS) -> Path:
    """Write the release under `root` (data/test.jsonl + media/); returns `root`."""
    media = root / "media"
    write_image(media / "img_pass.png", (64, 48), "PNG")
    write_image(media / "img_fail.jpg", (64, 48), "JPEG")
    write_image(media / "img_exif.jpg", (80, 40), "JPEG", orientation=6)
    write_image(media / "img_large.png", (4200, 300), "PNG")
    write_video(media / "vid_cfr.mp4", fps=30, seconds=3.0)
    write_video(media / "vid_rot.mp4", fps=25, seconds=2.5, rotation=90)
    write_video(media / "vid_vp9.webm", codec="libvpx-vp9", fps=24, seconds=2.0)
    (root / "data").mkdir(parents=True, exist_ok=True)
    with (root / "data" / "test.jsonl").open("w") as handle:
        for task in tasks:
            handle.write(json.dumps(task.row()) + "\n")
    return root


def jpeg_bytes(size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(gradient_frame(*size, 0)).save(buffer, format="JPEG")
    return buffer.getvalue()
