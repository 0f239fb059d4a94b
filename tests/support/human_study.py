"""A small release for human studies (images, clips, one with an audio track) and the real
`hss-inspect human serve` started on it, to be killed and started again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import av
import httpx
import numpy as np

from tests.support.fixture_repo import write_image, write_video
from tests.support.servers import free_port

HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))

# (task id, media type, domain, subdomain, media file)
TASKS = (
    ("h-img-1", "image", "Temporal & Causal Dynamics", "Retrodiction", "img_1.png"),
    ("h-img-2", "image", "Social Understanding", "Theory of Mind", "img_2.jpg"),
    ("h-img-3", "image", "Physical & Spatial Logic", "Hidden & Invisible", "img_3.png"),
    ("h-vid-1", "video", "Temporal & Causal Dynamics", "Extrapolation", "vid_1.mp4"),
    ("h-vid-2", "video", "Social Understanding", "Theory of Mind", "vid_sound.mp4"),
    ("h-vid-3", "video", "Physical & Spatial Logic", "Spatial Reachability", "vid_3.mp4"),
)


def reference(task_id: str) -> str:
    return f"REFERENCE-ANSWER-{task_id}-kept-from-annotators"


def criterion(task_id: str) -> str:
    return f"RUBRIC-CRITERION-{task_id}-kept-from-annotators"


def build_release(root: Path) -> Path:
    media = root / "media"
    write_image(media / "img_1.png", (120, 80), "PNG")
    write_image(media / "img_2.jpg", (80, 120), "JPEG")
    write_image(media / "img_3.png", (64, 64), "PNG")
    write_video(media / "vid_1.mp4", fps=10, seconds=3.0)
    write_video_with_sound(media / "vid_sound.mp4", seconds=2.0)
    write_video(media / "vid_3.mp4", fps=10, seconds=2.0)
    rows = [
        {
            "task_id": task_id,
            "domain": domain,
            "subdomain": subdomain,
            "media_type": media_type,
            "media_path": f"media/{file}",
            "prompt": f"What do you see in {task_id}?",
            "golden_response": reference(task_id),
            "rubric_criteria": [{"id": "c1", "title": criterion(task_id)}],
        }
        for task_id, media_type, domain, subdomain, file in TASKS
    ]
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def write_video_with_sound(path: Path, seconds: float, fps: int = 10) -> None:
    """An H.264 clip with an AAC track of a tone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        video = container.add_stream("libx264", rate=fps)
        video.width, video.height, video.pix_fmt = 96, 64, "yuv420p"
        audio = container.add_stream("aac", rate=16000)
        for index in range(round(seconds * fps)):
            pixels = np.full((64, 96, 3), index * 8 % 256, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(video.encode(frame))
        samples = np.sin(np.arange(int(16000 * seconds)) / 5.0).astype(np.float32)
        for start in range(0, len(samples), 1024):
            chunk = samples[start : start + 1024].reshape(1, -1)
            sound = av.AudioFrame.from_ndarray(chunk, format="flt", layout="mono")
            sound.sample_rate, sound.pts = 16000, start
            sound.time_base = Fraction(1, 16000)
            container.mux(audio.encode(sound))
        container.mux(video.encode())
        container.mux(audio.encode())


def has_audio(path: Path) -> bool:
    with av.open(str(path)) as container:
        return len(container.streams.audio) > 0


def human(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`hss-inspect human ...`, checked."""
    done = subprocess.run(
        [HSS_INSPECT, "human", *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@contextmanager
def served(
    study: Path, env: dict[str, str], port: int | None = None, command: str = "human"
) -> Iterator[Server]:
    """`hss-inspect COMMAND serve FILE` (a study's, or a build's with `command="build"`)."""
    server = Server(study, env, port or free_port(), command)
    server.start()
    try:
        yield server
    finally:
        server.kill()


class Server:
    """The study's server in its own process, which can be killed (SIGKILL) and started
    again on the same port."""

    def __init__(self, study: Path, env: dict[str, str], port: int, command: str = "human") -> None:
        self.study, self.env, self.port, self.command = study, env, port, command
        self.process: subprocess.Popen[str] | None = None
        self.base = f"http://127.0.0.1:{port}"

    def start(self) -> None:
        command = [HSS_INSPECT, self.command, "serve", str(self.study), "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(self.base + "/", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"`hss-inspect {self.command} serve` did not start")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None
