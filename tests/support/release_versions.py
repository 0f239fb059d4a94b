"""Two releases of a small HSS-format dataset, the second an erratum of the first, as two
commits of one git repo (served as a hub by olah) and as two local copies.

The scripted candidate always answers ANSWER; the scripted judge marks a criterion met when
the answer contains the reference. So each task's outcome on each release is known:

  task       release 1                     release 2                        change
  t-clip     a clip: passes                the same                         none
  t-keep     passes                        the same                         none
  t-fix      reference another: fails      reference fixed: passes          grade again
  t-ask      passes                        another question: passes         answer again
  t-media    passes                        another picture: passes          answer again
  t-label    fails                         another subdomain: fails         recount
  t-gone     passes                        removed                          removed
  t-new      -                             added: passes                    added
  t-new2     -                             added: fails                     added
"""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from tests.support.fixture_repo import write_video
from tests.support.servers import git_commit_all

REPO_ID = "lab/hss-errata"
ANSWER = "The kettle is about to boil over."
OTHER = "The kettle has been unplugged."


def row(
    task_id: str,
    reference: str,
    media: str,
    prompt: str = "What happens next?",
    subdomain: str = "Extrapolation",
    domain: str = "Temporal & Causal Dynamics",
) -> dict[str, Any]:
    return {
        "task_id": task_id,
        "domain": domain,
        "subdomain": subdomain,
        "media_type": "video" if media.endswith(".mp4") else "image",
        "media_path": f"media/{media}",
        "prompt": prompt,
        "golden_response": reference,
        "rubric_criteria": [{"id": "c1", "title": "Says what happens next"}],
        "num_criteria": 1,
    }


FIRST = [
    row("t-clip", ANSWER, "clip.mp4"),
    row("t-keep", ANSWER, "keep.png"),
    row("t-fix", OTHER, "fix.png"),
    row("t-ask", ANSWER, "ask.png"),
    row("t-media", ANSWER, "media.png"),
    row("t-label", OTHER, "label.png"),
    row("t-gone", ANSWER, "gone.png"),
]
SECOND = [
    row("t-clip", ANSWER, "clip.mp4"),
    row("t-keep", ANSWER, "keep.png"),
    row("t-fix", ANSWER, "fix.png"),
    row("t-ask", ANSWER, "ask.png", prompt="What will the kettle do?"),
    row("t-media", ANSWER, "media.png"),
    row("t-label", OTHER, "label.png", subdomain="Retrodiction"),
    row("t-new", ANSWER, "new.png"),
    row("t-new2", OTHER, "new2.png", subdomain="Mechanistic Causality"),
]
# What each task's change is, as `release diff` must class it.
EXPECTED = {
    "t-fix": ("grade again", ["answer_key"]),
    "t-ask": ("answer again", ["prompt"]),
    "t-media": ("answer again", ["media"]),
    "t-label": ("recount", ["labels"]),
}


def picture(path: Path, seed: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.random.default_rng(seed).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(path, format="PNG")


def write_release(root: Path, rows: list[dict[str, Any]], media_seed: int) -> Path:
    """The rows and their pictures under `root`; `t-media`'s picture comes from `media_seed`,
    the others from their own names (the same bytes in every release)."""
    if (root / "media").exists():
        shutil.rmtree(root / "media")
    for found in rows:
        name = Path(found["media_path"]).name
        if name.endswith(".mp4"):  # the same bytes each time too
            write_video(root / found["media_path"], fps=10, seconds=1.0)
        else:
            seed = media_seed if name == "media.png" else zlib.crc32(name.encode())
            picture(root / found["media_path"], seed)
    (root / "data").mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (root / "data" / "test.jsonl").write_text(lines, encoding="utf-8")
    return root


def write_both(root: Path) -> tuple[Path, Path]:
    """The two releases as local copies: (first, second)."""
    return write_release(root / "first", FIRST, 1), write_release(root / "second", SECOND, 2)


def commit_both(mirrors: Path, first: Path, second: Path) -> tuple[str, str]:
    """The two releases as two commits of the dataset repo REPO_ID under `mirrors`."""
    repo = mirrors / "datasets" / REPO_ID
    shutil.copytree(first, repo)
    old = git_commit_all(repo, "release 1")
    shutil.rmtree(repo / "media")
    shutil.copytree(second / "media", repo / "media")
    shutil.copy(second / "data" / "test.jsonl", repo / "data" / "test.jsonl")
    new = git_commit_all(repo, "release 2: an erratum")
    return old, new
