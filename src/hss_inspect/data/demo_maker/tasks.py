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


@dataclass(frozen=True)
class DemoTask:
    task_id: str
    subdomain_label: str
    media_file: str
    prompt: str
    golden_response: str
    criteria: tuple[dict[str, Any], ...]
    draw: Callable[[], Any] | None = None
    frame: Callable[[float], Any] | None = None
    seconds: float = 0.0

    @property
    def media_type(self) -> str:
        return "image" if self.draw is not None else "video"

    def row(self) -> dict[str, Any]:
        subdomain = SUBDOMAIN_BY_LABEL[self.subdomain_label].name
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


TASKS: tuple[DemoTask, ...] = (
    DemoTask(
        "demo-dominoes",
        "retrodiction",
        "dominoes.png",
        "A row of dominoes stood upright on the floor until someone set it falling. "
        "From which end of the row was it pushed, and how many dominoes are still standing?",
        "It was pushed from the left end: the fallen dominoes lean and lie toward the "
        "right, so the fall ran from left to right and stopped at the gap. Three "
        "dominoes, on the right, are still standing.",
        (
            {"id": "dominoes-pushed-left", "title": "Says the row was pushed from the left end"},
            {"id": "dominoes-three-standing", "title": "Says three dominoes are still standing"},
        ),
        draw=draw_dominoes,
    ),
    DemoTask(
        "demo-rolling-ball",
        "extrapolation",
        "rolling_ball.mp4",
        "The red ball keeps moving in a straight line at the same speed after the clip "
        "ends. Which coloured box will it reach?",
        "The green box at the top right: the ball travels up and to the right, and its "
        "straight path, continued, runs into the green box.",
        ({"id": "rolling-green-box", "title": "Says the ball will reach the green box"},),
        frame=rolling_ball_frame,
        seconds=ROLLING_SECONDS,
    ),
    DemoTask(
        "demo-viewpoint",
        "alien_viewpoint",
        "viewpoint.png",
        "This picture looks straight down on a table. Ana sits at its top edge, facing "
        "the table (toward the bottom of the picture). From Ana's own point of view, is "
        "the red cup on her left or on her right?",
        "On her right. Facing the bottom of the picture, Ana's right hand points to the "
        "left side of the picture, which is where the red cup stands.",
        ({"id": "viewpoint-cup-right", "title": "Says the red cup is on Ana's right"},),
        draw=draw_viewpoint,
    ),
    DemoTask(
        "demo-narrow-gap",
        "affordance_feasibility",
        "narrow_gap.mp4",
        "Seen from above, the blue ball keeps rolling straight ahead. Can it pass "
        "through the opening between the two grey walls?",
        "No. The opening is only about half as wide as the ball, so the ball will hit "
        "the walls and be stopped instead of passing through.",
        (
            {"id": "gap-cannot-pass", "title": "Says the ball cannot pass through the opening"},
            {
                "id": "gap-too-narrow",
                "title": "Gives the reason: the opening is narrower than the ball",
            },
        ),
        frame=gap_frame,
        seconds=GAP_SECONDS,
    ),
    DemoTask(
        "demo-queue",
        "social_role_norm_power",
        "queue.png",
        "People are waiting to buy tickets at the counter on the left. Which person is "
        "breaking the usual rule of this place, and what are they doing?",
        "The person in red. The others wait in a single line for the counter, and the "
        "person in red has walked in from the side to the front of the line, jumping the "
        "queue ahead of people who were already waiting.",
        (
            {"id": "queue-person-in-red", "title": "Identifies the person in red"},
            {
                "id": "queue-jumping",
                "title": "Says that person is jumping the queue (pushing in ahead of "
                "the people waiting)",
            },
        ),
        draw=draw_queue,
    ),
    DemoTask(
        "demo-moved-ball",
        "theory_of_mind",
        "moved_ball.mp4",
        "Ana comes back into the room at the end of the clip. Where will she look for "
        "the orange ball first, and why?",
        "In the blue bin. Ana put the ball there and left before Ben moved it to the "
        "green bin, so she did not see the move and still believes the ball is in the "
        "blue bin.",
        (
            {"id": "moved-ball-blue-bin", "title": "Says Ana will look in the blue bin first"},
            {
                "id": "moved-ball-did-not-see",
                "title": "Explains that Ana did not see Ben move the ball, so she "
                "believes it is still in the blue bin",
            },
        ),
        frame=belief_frame,
        seconds=BELIEF_SECONDS,
    ),
    DemoTask(
        "demo-pattern",
        "patterns_pareidolia",
        "pattern.png",
        "The tiles follow a rule. How many dots belong on the tile with the question "
        "mark, and what colour should that tile be?",
        "Five dots on a red tile: each tile has one more dot than the one before it "
        "(1, 2, 3, 4, so 5 next), and the colours alternate red, blue, red, blue, so "
        "red comes next.",
        (
            {"id": "pattern-five-dots", "title": "Says the tile needs five dots", "weight": 2},
            {"id": "pattern-red", "title": "Says the tile should be red", "weight": 1},
        ),
        draw=draw_pattern,
    ),
    DemoTask(
        "demo-candle",
        "change_consequence",
        "candle.mp4",
        "What is happening to the candle during the clip, and what will happen if it "
        "goes on like this?",
        "The candle is burning down: it gets steadily shorter as its wax melts. If it "
        "goes on, the candle will burn away completely and the flame will go out.",
        (
            {"id": "candle-shorter", "title": "Says the candle is getting shorter as it burns"},
            {
                "id": "candle-goes-out",
                "title": "Says the candle will burn away and its flame will go out",
            },
        ),
        frame=candle_frame,
        seconds=CANDLE_SECONDS,
    ),
)


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
        if task.draw is not None:
            task.draw().save(media / task.media_file, format="PNG", optimize=True)
        elif task.frame is not None:
            write_clip(media / task.media_file, task.frame, task.seconds)
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
