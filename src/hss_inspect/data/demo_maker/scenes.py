"""The demo set's scenes: each picture and clip drawn from geometry kept as data, so
that tests can check that every reference answer follows from what the media shows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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
