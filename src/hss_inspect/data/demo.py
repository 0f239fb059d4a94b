"""The demo set: eight small HSS-format tasks whose media this module draws.

`-T dataset=demo` (and the `hss_demo` task) reads the copy shipped in the package under
`demo_data/` (`data/test.jsonl` + `media/`, the release's own layout). Every picture and
clip is a simple scene drawn here, so the set is this project's own work, free of any
licence, and each question can be answered from what the media shows. The scenes'
geometry is kept as data (the constants below) so tests can check that every reference
answer follows from it.

Regenerate the shipped copy after changing a scene or a row:

    python -m hss_inspect.data.demo src/hss_inspect/data/demo_data
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from importlib.resources import files
from pathlib import Path
from typing import Any

from hss_inspect.core.taxonomy import PARENT_OF_SUBDOMAIN, SUBDOMAIN_BY_LABEL

DEMO_DATASET = "demo"
DEMO_FOLDER = "demo_data"
SIZE = (320, 240)
FPS = 10

Colour = tuple[int, int, int]
Point = tuple[float, float]

PAPER: Colour = (246, 244, 238)
INK: Colour = (40, 40, 40)
RED: Colour = (205, 50, 45)
BLUE: Colour = (50, 90, 205)
GREEN: Colour = (40, 150, 70)
YELLOW: Colour = (230, 185, 30)
GREY: Colour = (140, 140, 140)
BROWN: Colour = (150, 100, 60)
ORANGE: Colour = (240, 140, 30)
FLOOR_Y = 200


def demo_root() -> Path:
    """The demo copy inside the installed package (or the source tree when editable)."""
    return Path(str(files("hss_inspect.data"))) / DEMO_FOLDER


# ---- Scene geometry: the facts each reference answer rests on ----------------------


@dataclass(frozen=True)
class Box:
    left: float
    top: float
    right: float
    bottom: float
    colour: Colour

    def contains(self, point: Point) -> bool:
        x, y = point
        return self.left <= x <= self.right and self.top <= y <= self.bottom


# Dominoes: the first four have fallen to the right (pushed from the left); the rest stand.
DOMINO_WIDTH, DOMINO_HEIGHT = 10, 56
DOMINO_LEFTS = (30, 58, 86, 114, 200, 228, 256)
DOMINO_TILTS = (35.0, 35.0, 35.0, 80.0, 0.0, 0.0, 0.0)  # degrees, leaning right

# Viewpoint: Ana sits at the top edge facing down; the cup is on the picture's left.
TABLE = Box(60, 75, 260, 205, BROWN)
ANA_SEAT: Point = (160, 45)
CUP_CENTRE: Point = (95, 140)
BOOK = Box(205, 115, 235, 165, BLUE)

# Queue: four people wait in line for the counter; the person in red steps in at the front.
COUNTER = Box(10, 95, 50, FLOOR_Y, BROWN)
QUEUE_XS = (120, 160, 200, 240)
CUTTER_X = 80
CUTTER_PATH: tuple[Point, ...] = ((118, 236), (104, 227), (92, 218), (84, 209))

# Pattern: tile k holds k dots and the colours alternate; the fifth tile is the question.
TILE_COLOURS: tuple[Colour, ...] = (RED, BLUE, RED, BLUE)
TILE_SIDE, TILE_TOP, TILE_LEFTS = 50, 95, (15, 75, 135, 195, 255)

# Rolling ball: constant velocity up and to the right; the boxes wait at the right edge.
BALL_START: Point = (30, 200)
BALL_VELOCITY: Point = (50, -30)  # pixels per second
BALL_RADIUS = 10
TARGET_BOXES = (
    Box(270, 30, 310, 70, GREEN),
    Box(270, 100, 310, 140, BLUE),
    Box(270, 170, 310, 210, YELLOW),
)
ROLLING_SECONDS = 3.0

# Narrow gap, seen from above: the ball is twice as wide as the opening.
GAP_BALL_RADIUS = 30
GAP_BALL_Y = 120
GAP_BALL_START_X, GAP_BALL_SPEED = 40, 40
GAP_WALL_X = (230, 250)
GAP_OPENING = (105, 135)  # top and bottom of the opening, in pixels
GAP_SECONDS = 3.0

# Moved ball (false belief): Ana leaves, Ben moves the ball, Ana comes back.
BLUE_BIN = Box(110, 160, 160, FLOOR_Y, BLUE)
GREEN_BIN = Box(210, 160, 260, FLOOR_Y, GREEN)
DOOR = Box(5, 100, 35, FLOOR_Y, BROWN)
BELIEF_PHASES = {
    "ana_places_ball": (0.0, 1.5),
    "ana_leaves": (1.5, 2.5),
    "ben_walks_over": (2.5, 3.5),
    "ben_moves_ball": (3.5, 4.5),
    "ben_walks_back": (4.5, 5.5),
    "ana_returns": (5.5, 7.0),
}
BELIEF_SECONDS = 7.0

# Candle: it shortens steadily while it burns.
CANDLE_HEIGHTS = (120.0, 40.0)  # at the first and last frame, in pixels
CANDLE_SECONDS = 4.0


def rolling_ball_at(t: float) -> Point:
    return (BALL_START[0] + BALL_VELOCITY[0] * t, BALL_START[1] + BALL_VELOCITY[1] * t)


def gap_ball_x(t: float) -> float:
    return GAP_BALL_START_X + GAP_BALL_SPEED * t


def candle_height(t: float) -> float:
    start, end = CANDLE_HEIGHTS
    return start + (end - start) * t / CANDLE_SECONDS


def _progress(t: float, phase: str) -> float:
    start, end = BELIEF_PHASES[phase]
    return min(1.0, max(0.0, (t - start) / (end - start)))


def belief_ball_at(t: float) -> Point:
    """Where the ball is: from Ana's hand into the blue bin, later over to the green bin."""
    blue_rest = (135.0, FLOOR_Y - 9.0)
    green_rest = (235.0, FLOOR_Y - 9.0)
    if t < BELIEF_PHASES["ana_places_ball"][1]:
        return _lerp((100.0, 140.0), blue_rest, _progress(t, "ana_places_ball"))
    if t < BELIEF_PHASES["ben_moves_ball"][0]:
        return blue_rest
    share = _progress(t, "ben_moves_ball")
    x, y = _lerp(blue_rest, green_rest, share)
    return x, y - 70 * math.sin(math.pi * share)


def belief_people_at(t: float) -> dict[str, float | None]:
    """Each person's x position, or None while out of the room."""
    ana: float | None
    if t < BELIEF_PHASES["ana_leaves"][0]:
        ana = 90.0
    elif t < BELIEF_PHASES["ana_leaves"][1]:
        ana = 90.0 - 70.0 * _progress(t, "ana_leaves")
    elif t < BELIEF_PHASES["ana_returns"][0]:
        ana = None
    else:
        ana = 20.0 + 45.0 * _progress(t, "ana_returns")
    if t < BELIEF_PHASES["ben_walks_over"][0]:
        ben = 290.0
    elif t < BELIEF_PHASES["ben_moves_ball"][0]:
        ben = 290.0 - 105.0 * _progress(t, "ben_walks_over")
    elif t < BELIEF_PHASES["ben_walks_back"][0]:
        ben = 185.0
    else:
        ben = 185.0 + 105.0 * _progress(t, "ben_walks_back")
    return {"Ana": ana, "Ben": ben}


def _lerp(a: Point, b: Point, share: float) -> Point:
    return (a[0] + (b[0] - a[0]) * share, a[1] + (b[1] - a[1]) * share)


# ---- Drawing ------------------------------------------------------------------------


def _canvas(background: Colour = PAPER) -> Any:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", SIZE, background)
    return image, ImageDraw.Draw(image)


def _font(size: int = 14) -> Any:
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _floor(draw: Any) -> None:
    draw.line([(0, FLOOR_Y), (SIZE[0], FLOOR_Y)], fill=INK, width=2)


def _person(draw: Any, x: float, colour: Colour, label: str | None = None) -> None:
    """A stick figure standing on the floor at `x`, its name above its head."""
    feet = FLOOR_Y
    draw.ellipse([x - 9, feet - 80, x + 9, feet - 62], fill=colour, outline=INK)
    draw.line([(x, feet - 62), (x, feet - 28)], fill=colour, width=5)
    draw.line([(x - 16, feet - 50), (x + 16, feet - 50)], fill=colour, width=4)
    draw.line([(x, feet - 28), (x - 11, feet)], fill=colour, width=4)
    draw.line([(x, feet - 28), (x + 11, feet)], fill=colour, width=4)
    if label:
        draw.text((x, feet - 86), label, fill=INK, font=_font(13), anchor="ms")


def _bin(draw: Any, box: Box) -> None:
    """An open-topped bin seen from the side: its contents stay visible."""
    outline = [(box.left, box.top), (box.left, box.bottom)]
    outline += [(box.right, box.bottom), (box.right, box.top)]
    draw.line(outline, fill=box.colour, width=5)


def _rotated_domino(left: float, tilt_degrees: float) -> list[Point]:
    """The domino's corners after tipping right about its bottom-right corner."""
    pivot = (left + DOMINO_WIDTH, FLOOR_Y)
    angle = math.radians(tilt_degrees)
    corners = [(-DOMINO_WIDTH, 0), (0, 0), (0, -DOMINO_HEIGHT), (-DOMINO_WIDTH, -DOMINO_HEIGHT)]
    return [
        (
            pivot[0] + dx * math.cos(angle) - dy * math.sin(angle),
            pivot[1] + dx * math.sin(angle) + dy * math.cos(angle),
        )
        for dx, dy in corners
    ]


def draw_dominoes() -> Any:
    image, draw = _canvas()
    _floor(draw)
    for left, tilt in zip(DOMINO_LEFTS, DOMINO_TILTS, strict=True):
        draw.polygon(_rotated_domino(left, tilt), fill=INK, outline=INK)
        for dot in (0.3, 0.7):
            corners = _rotated_domino(left, tilt)
            bottom = _lerp(corners[0], corners[1], 0.5)
            top = _lerp(corners[3], corners[2], 0.5)
            x, y = _lerp(bottom, top, dot)
            draw.ellipse([x - 2, y - 2, x + 2, y + 2], fill=PAPER)
    return image


def draw_viewpoint() -> Any:
    image, draw = _canvas()
    draw.rectangle([TABLE.left, TABLE.top, TABLE.right, TABLE.bottom], fill=TABLE.colour)
    x, y = ANA_SEAT
    draw.ellipse([x - 32, y - 12, x + 32, y + 12], fill=(120, 80, 170), outline=INK)
    draw.ellipse([x - 13, y - 13, x + 13, y + 13], fill=(235, 195, 160), outline=INK)
    draw.polygon([(x - 5, y + 11), (x + 5, y + 11), (x, y + 20)], fill=(235, 195, 160))
    draw.text((x + 40, y - 8), "Ana", fill=INK, font=_font(14))
    cx, cy = CUP_CENTRE
    draw.ellipse([cx - 14, cy - 14, cx + 14, cy + 14], fill=RED, outline=INK, width=2)
    draw.rectangle([cx + 13, cy - 3, cx + 22, cy + 3], fill=RED, outline=INK)
    draw.rectangle([BOOK.left, BOOK.top, BOOK.right, BOOK.bottom], fill=BOOK.colour, outline=INK)
    return image


def draw_queue() -> Any:
    image, draw = _canvas()
    _floor(draw)
    draw.rectangle([COUNTER.left, COUNTER.top, COUNTER.right, COUNTER.bottom], fill=BROWN)
    draw.text((8, 70), "TICKETS", fill=INK, font=_font(12))
    for x in QUEUE_XS:
        _person(draw, x, GREY)
    for px, py in CUTTER_PATH:
        draw.ellipse([px - 3, py - 2, px + 3, py + 2], fill=RED)
    _person(draw, CUTTER_X, RED)
    return image


def _dot_layout(count: int) -> list[Point]:
    """Dot centres for 1 to 4 dots, as fractions of the tile."""
    layouts: dict[int, list[Point]] = {
        1: [(0.5, 0.5)],
        2: [(0.3, 0.3), (0.7, 0.7)],
        3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
        4: [(0.3, 0.3), (0.7, 0.3), (0.3, 0.7), (0.7, 0.7)],
    }
    return layouts[count]


def draw_pattern() -> Any:
    image, draw = _canvas()
    for index, left in enumerate(TILE_LEFTS):
        box = [left, TILE_TOP, left + TILE_SIDE, TILE_TOP + TILE_SIDE]
        if index < len(TILE_COLOURS):
            draw.rectangle(box, fill=TILE_COLOURS[index], outline=INK)
            for fx, fy in _dot_layout(index + 1):
                x, y = left + fx * TILE_SIDE, TILE_TOP + fy * TILE_SIDE
                draw.ellipse([x - 5, y - 5, x + 5, y + 5], fill=PAPER)
        else:
            draw.rectangle(box, fill=PAPER, outline=INK, width=2)
            centre = (left + TILE_SIDE / 2, TILE_TOP + TILE_SIDE / 2)
            draw.text(centre, "?", fill=INK, font=_font(30), anchor="mm")
    return image


def rolling_ball_frame(t: float) -> Any:
    image, draw = _canvas()
    for box in TARGET_BOXES:
        draw.rectangle([box.left, box.top, box.right, box.bottom], fill=box.colour, outline=INK)
    x, y = rolling_ball_at(t)
    r = BALL_RADIUS
    draw.ellipse([x - r, y - r, x + r, y + r], fill=RED, outline=INK)
    return image


def gap_frame(t: float) -> Any:
    image, draw = _canvas()
    left, right = GAP_WALL_X
    top, bottom = GAP_OPENING
    draw.rectangle([left, 0, right, top], fill=GREY, outline=INK)
    draw.rectangle([left, bottom, right, SIZE[1]], fill=GREY, outline=INK)
    x, r = gap_ball_x(t), GAP_BALL_RADIUS
    draw.ellipse([x - r, GAP_BALL_Y - r, x + r, GAP_BALL_Y + r], fill=BLUE, outline=INK)
    return image


def belief_frame(t: float) -> Any:
    image, draw = _canvas()
    _floor(draw)
    draw.rectangle([DOOR.left, DOOR.top, DOOR.right, DOOR.bottom], fill=DOOR.colour, outline=INK)
    x, y = belief_ball_at(t)
    draw.ellipse([x - 8, y - 8, x + 8, y + 8], fill=ORANGE, outline=INK)
    _bin(draw, BLUE_BIN)
    _bin(draw, GREEN_BIN)
    colours = {"Ana": RED, "Ben": YELLOW}
    for name, position in belief_people_at(t).items():
        if position is not None:
            _person(draw, position, colours[name], name)
    return image


def candle_frame(t: float) -> Any:
    image, draw = _canvas((55, 55, 75))
    height = candle_height(t)
    pool = 22 + 4 * t
    draw.ellipse([160 - pool, FLOOR_Y - 5, 160 + pool, FLOOR_Y + 5], fill=(235, 225, 195))
    draw.rectangle([145, FLOOR_Y - height, 175, FLOOR_Y], fill=(240, 232, 205), outline=INK)
    top = FLOOR_Y - height
    draw.line([(160, top), (160, top - 6)], fill=INK, width=2)
    flame = 20 + 3 * math.sin(2 * math.pi * 3 * t)
    draw.ellipse([152, top - 6 - flame, 168, top - 4], fill=ORANGE)
    draw.ellipse([156, top - 2 - flame * 0.6, 164, top - 5], fill=YELLOW)
    return image


# ---- The rows ---------------------------------------------------------------------


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


# ---- Writing ----------------------------------------------------------------------


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
