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


def admit_all(b: Build, author: str) -> list[str]:
    """Pass each task of `author` through every round (the store's own calls); their ids."""
    from hss_inspect.construction import store
    from hss_inspect.construction.rules import rules

    rounds = rules().rounds
    admitted = [t.task_id for t in store.tasks_of_author(b.path, author)]
    for task_id in admitted:
        for _ in range(rounds):
            (slot,) = [
                s
                for h in store.histories(b.path)
                if h.view.task_id == task_id
                for s in h.reviews
                if s.verdict is None
            ]
            task = (task_id, slot.revision, slot.round)
            assert store.decide(b.path, slot.reviewer, task, "pass", None, None, rounds)
    return admitted


# Tasks of every media the pool holds: images (PNG, JPEG) and clips (one with sound).
SPLIT_ROWS = (
    ("s-street", "street.png", "image"),
    ("s-kitchen", "kitchen.jpg", "image"),
    ("s-ball", "clips/ball.mp4", "video"),
    ("s-sound", "clips/sound.mp4", "video"),
)


def admitted_build(tmp_path: Path, drop_canary: bool = False) -> tuple[Build, Path]:
    """A build whose tasks of `SPLIT_ROWS` are all admitted, exported to `tmp_path/release`;
    `drop_canary`: the build as made before builds had a canary."""
    from hss_inspect.construction import store

    b = new_build(tmp_path, "--authors", "bob", "--reviewers", "r1,r2,r3")
    if drop_canary:
        with store.connect(b.path) as db:
            db.execute("DELETE FROM build WHERE key = 'canary'")
    rows = [task_row(task_id, path, media) for task_id, path, media in SPLIT_ROWS]
    build(
        "import", str(b.path), str(write_tasks(tmp_path / "tasks.jsonl", rows)), "--author", "bob"
    )
    admit_all(b, "bob")
    out = tmp_path / "release"
    build("export", str(b.path), "--out", str(out), "--title", "A lab's split")
    return b, out
