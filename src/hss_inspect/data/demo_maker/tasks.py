"""The demo set's rows (question, reference answer, rubric, and the scene that answers
them), and its writer.

Regenerate the shipped copy after changing a scene or a row:

    python -m hss_inspect.data.demo_maker.tasks src/hss_inspect/data/demo_data
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from hss_inspect.core.taxonomy import PARENT_OF_SUBDOMAIN, SUBDOMAIN_BY_LABEL
from hss_inspect.data.demo_maker.scenes import (
    BELIEF_SECONDS,
    CANDLE_SECONDS,
    FPS,
    GAP_SECONDS,
    ROLLING_SECONDS,
    SIZE,
    belief_frame,
    candle_frame,
    draw_dominoes,
    draw_pattern,
    draw_queue,
    draw_viewpoint,
    gap_frame,
    rolling_ball_frame,
)

# The scenes a task's media is drawn by: a picture, or a clip's frame at a time (in
# seconds) with the clip's length.
PICTURES: dict[str, Callable[[], Any]] = {
    "dominoes": draw_dominoes,
    "viewpoint": draw_viewpoint,
    "queue": draw_queue,
    "pattern": draw_pattern,
}
CLIPS: dict[str, tuple[Callable[[float], Any], float]] = {
    "rolling_ball": (rolling_ball_frame, ROLLING_SECONDS),
    "gap": (gap_frame, GAP_SECONDS),
    "belief": (belief_frame, BELIEF_SECONDS),
    "candle": (candle_frame, CANDLE_SECONDS),
}


@dataclass(frozen=True)
class DemoTask:
    """One task of the demo set (an entry of tasks.yaml): its row, and the scene that draws
    its media."""

    task_id: str
    subdomain: str  # a short label of the taxonomy
    media_file: str
    scene: str
    prompt: str
    golden_response: str
    criteria: tuple[dict[str, Any], ...]

    @property
    def media_type(self) -> str:
        return "image" if self.scene in PICTURES else "video"

    @property
    def seconds(self) -> float:
        """A clip's length (0 for a picture)."""
        return CLIPS[self.scene][1] if self.scene in CLIPS else 0.0

    def row(self) -> dict[str, Any]:
        subdomain = SUBDOMAIN_BY_LABEL[self.subdomain].name
        return {
            "task_id": self.task_id,
            "domain": PARENT_OF_SUBDOMAIN[subdomain],
            "subdomain": subdomain,
            "media_type": self.media_type,
            "media_path": f"media/{self.media_file}",
            "prompt": self.prompt,
            "golden_response": self.golden_response,
            "rubric_criteria": list(self.criteria),
            "num_criteria": len(self.criteria),
        }

    def write_media(self, folder: Path) -> None:
        if self.scene in PICTURES:
            PICTURES[self.scene]().save(folder / self.media_file, format="PNG", optimize=True)
        else:
            frame, seconds = CLIPS[self.scene]
            write_clip(folder / self.media_file, frame, seconds)


def read_tasks() -> tuple[DemoTask, ...]:
    entries = yaml.safe_load((Path(__file__).parent / "tasks.yaml").read_text(encoding="utf-8"))
    return tuple(
        DemoTask(**{**entry, "criteria": tuple(entry["criteria"])}) for entry in entries["tasks"]
    )


TASKS = read_tasks()


def demo_rows(tasks: Sequence[DemoTask] = TASKS) -> list[dict[str, Any]]:
    return [task.row() for task in tasks]


def rows_text(tasks: Sequence[DemoTask] = TASKS) -> str:
    """`data/test.jsonl` exactly as written: one JSON object per line."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in demo_rows(tasks))


def write_clip(path: Path, frame: Callable[[float], Any], seconds: float) -> None:
    """H.264 at FPS frames per second, single-threaded so the bytes do not vary by machine."""
    import av
    import numpy as np

    with av.open(str(path), "w", format="mp4") as container:
        stream = container.add_stream(
            "libx264", rate=FPS, options={"crf": "30", "preset": "veryslow", "threads": "1"}
        )
        stream.width, stream.height = SIZE
        stream.pix_fmt = "yuv420p"
        for index in range(round(seconds * FPS)):
            pixels = np.asarray(frame(index / FPS))
            video_frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            video_frame.pts = index
            video_frame.time_base = Fraction(1, FPS)
            container.mux(stream.encode(video_frame))
        container.mux(stream.encode())


def write_demo(root: Path, tasks: Sequence[DemoTask] = TASKS) -> Path:
    """Write `data/test.jsonl` and `media/` under `root`; returns `root`."""
    media = root / "media"
    media.mkdir(parents=True, exist_ok=True)
    (root / "data").mkdir(parents=True, exist_ok=True)
    for task in tasks:
        task.write_media(media)
    (root / "data" / "test.jsonl").write_text(rows_text(tasks), encoding="utf-8")
    return root


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Draw the HSS demo set into a folder.")
    parser.add_argument("out", type=Path, help="folder to write data/test.jsonl and media/ into")
    args = parser.parse_args(argv)
    write_demo(args.out)
    total = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"wrote {len(TASKS)} tasks to {args.out} ({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
