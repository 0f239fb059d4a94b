"""A small media pool for builds (images, clips, one clip with an audio track, a file that
is not media and one that does not open), the real `hss-inspect build` command, and tasks
in the release's format to import into a build."""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.fixture_repo import write_image, write_video
from tests.support.human_study import HSS_INSPECT, write_video_with_sound

IMAGES = ("street.png", "kitchen.jpg", "park.png", "shop.png", "desk.jpg", "hall.png")
CLIPS = ("clips/ball.mp4", "clips/door.mp4", "clips/sound.mp4")
LINK = re.compile(r"^  (author|reviewer) (\S+): http://127\.0\.0\.1:\d+/b/(\S+)$", re.M)


def make_pool(root: Path) -> Path:
    for n, name in enumerate(IMAGES):
        write_image(root / name, (96 + 8 * n, 64), "JPEG" if name.endswith(".jpg") else "PNG")
    write_video(root / CLIPS[0], fps=10, seconds=2.0)
    write_video(root / CLIPS[1], fps=10, seconds=3.0)
    write_video_with_sound(root / CLIPS[2], seconds=2.0)
    (root / "README.txt").write_text("not media")
    (root / "broken.png").write_bytes(b"not an image")
    return root


def build(
    *args: str, env: dict[str, str] | None = None, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    """`hss-inspect build ...`; checked to succeed unless `ok=False`."""
    done = subprocess.run(
        [HSS_INSPECT, "build", *args], env=env or dict(os.environ), capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


@dataclass
class Build:
    path: Path
    pool: Path
    tokens: dict[tuple[str, str], str]  # (role, name) -> token

    def token(self, role: str, name: str) -> str:
        return self.tokens[(role, name)]


def new_build(tmp_path: Path, *flags: str) -> Build:
    pool = make_pool(tmp_path / "pool")
    path = tmp_path / "build.sqlite"
    done = build("new", str(path), "--pool", str(pool), *flags)
    tokens = {(role, name): token for role, name, token in LINK.findall(done.stdout)}
    return Build(path, pool, tokens)


def task_row(
    task_id: str, media_path: str, media_type: str = "image", **fields: Any
) -> dict[str, Any]:
    row = {
        "task_id": task_id,
        "domain": "Temporal & Causal Dynamics",
        "subdomain": "Retrodiction",
        "media_type": media_type,
        "media_path": media_path,
        "prompt": f"What happened just before {task_id}?",
        "golden_response": f"The reference answer of {task_id}.",
        "rubric_criteria": [{"id": "c1", "title": f"Says what {task_id} shows"}],
    }
    return {**row, **fields}


def write_tasks(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path
