"""Whether one picture is another, or a part of another, checked where the claim puts it:
pure functions over the small grayscale copies pictures keep (`perceptual.thumbnail`).

The hash compares the lowest 8x8 frequencies, the broad layout, so two pictures that share
only a dark shape in one corner can look alike to it, the more so among the 200 crops a
picture is matched by. A copy is a claim about geometry: the picture is the other one, or
the part of it in a given box. So the box the hash found is refined (its place and its
width and height, in steps that shrink) until the whole picture and the part agree best,
and the two are compared there at a finer scale, with each frequency weighted by how fine
it is: the edges must fall in the same places, not only the masses.

The parts are sampled by area, as a box filter downscales, straight from the copy's pixels
into the frequencies: separable, so a 9 x 9 grid of boxes around the current one costs two
small products.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np
from numpy.typing import NDArray

from hss_inspect.media.perceptual import dct_matrix

# The finest grid the parts are compared on: no finer than the pixels either picture's copy
# holds there (at least COARSEST), with the lowest 3/8 of its frequencies.
FINEST = 64
COARSEST = 16
# The refinement: steps (shares of the box's side) that shrink, each taken while the box
# moves, up to MOVES times: the first on the hash's own scale and weighting (plain), the
# second with half the frequencies of the last. A pair farther than GIVE_UP after the
# second is no copy (copies are within a few hundredths there): the last is not taken.
LEVELS = ((0.05, "hash"), (0.02, "half"), (0.007, "fine"))
MOVES = 3
GIVE_UP = 0.15
_OFFSETS = np.array([-1.0, 0.0, 1.0])

Pixels = NDArray[np.uint8]
Box = tuple[float, float, float, float]  # left, top, right, bottom: shares of the sides
Floats = NDArray[np.float32]


@cache
def _dct(n: int, low: int) -> Floats:
    return dct_matrix(n)[:low].astype(np.float32)


@cache
def _dct_sums(n: int, low: int) -> Floats:
    """Each frequency's cosine summed over the cells before each cell edge: (low, n + 1)."""
    return np.concatenate([np.zeros((low, 1), np.float32), _dct(n, low).cumsum(axis=1)], axis=1)


@cache
def _weights(low: int, plain: bool) -> Floats:
    """How much each frequency counts, less the constant term: all alike (plain, as the
    hash), or by how fine it is (its distance from the constant term)."""
    u = np.arange(low, dtype=np.float32)
    found = np.ones((low, low), np.float32) if plain else np.hypot(u[:, None], u[None, :])
    return found.ravel()[1:]


def _projections(spans: Floats, n: int, low: int, size: int) -> Floats:
    """For each (start, end) span of pixels 0..size: what each pixel adds to each of the
    low lowest frequencies of the span sampled into n cells by area, (spans, low, size).
    A frequency's cosine is constant over a cell, so its sum up to any point is read off
    `_dct_sums` by linear interpolation, and a pixel's part is the difference across it."""
    width = (spans[:, 1] - spans[:, 0]) / n
    at = np.clip((np.arange(size + 1) - spans[:, :1]) / width[:, None], 0, n)  # in cells
    cell = np.minimum(at.astype(np.intp), n - 1)
    summed = _dct_sums(n, low)[:, cell] + (at - cell) * _dct(n, low)[:, cell]
    return np.asarray((summed[..., 1:] - summed[..., :-1]).transpose(1, 0, 2), np.float32)


def _frequencies(pixels: Floats, xs: Floats, ys: Floats, n: int, low: int) -> Floats:
    """The low x low lowest frequencies of every box (ys[i], xs[j]) sampled to n x n by
    area, as a box filter downscales: (boxes down, boxes across, low down, low across)."""
    # only the pixels some box covers count
    left, top = int(xs[:, 0].min()), int(ys[:, 0].min())
    right, bottom = int(np.ceil(xs[:, 1].max())), int(np.ceil(ys[:, 1].max()))
    pixels, xs, ys = pixels[top:bottom, left:right], xs - left, ys - top
    height, width = pixels.shape
    across = _projections(xs, n, low, width).reshape(-1, width)  # (across x low, width)
    down = _projections(ys, n, low, height).reshape(-1, height)  # (down x low, height)
    # einsum rather than BLAS: BLAS would spread these small products over threads and
    # spend longer waiting on them than computing
    found: Floats = np.einsum("kh,hj->kj", down, np.einsum("hw,jw->hj", pixels, across))
    return found.reshape(len(ys), low, len(xs), low).transpose(0, 2, 1, 3)


def _signatures(frequencies: Floats, plain: bool) -> Floats:
    low = frequencies.shape[-1]
    flat = frequencies.reshape(*frequencies.shape[:-2], low * low)[..., 1:] * _weights(low, plain)
    norms = np.linalg.norm(flat, axis=-1, keepdims=True)
    return np.asarray(flat / np.where(norms == 0, 1, norms), np.float32)


def _spans(centre: float, side: float, step: float, size: int) -> Floats:
    """The 9 spans around (centre, side): moved and widened by -step, 0, +step of the side,
    each kept inside 0..size; the unchanged one fifth (index 4)."""
    centres = (centre + _OFFSETS * step * side).repeat(3)
    sides = np.minimum(np.tile(side * (1 + _OFFSETS * step), 3), size)
    starts = np.clip(centres - sides / 2, 0, size - sides)
    return np.stack([starts, starts + sides], axis=1).astype(np.float32)


def _scales(whole: Floats, box_side: float) -> dict[str, tuple[int, int, bool]]:
    """Each level's grid, frequencies kept and weighting (plain or by fineness)."""
    side = min(*whole.shape, box_side)
    n = int(np.clip(2 ** np.floor(np.log2(max(side, 1.0))), COARSEST, FINEST))
    return {"hash": (32, 8, True), "half": (n, n * 3 // 16, False), "fine": (n, n * 3 // 8, False)}


def aligned_distance(whole: Pixels, other: Pixels, box: Box, refine: bool = True) -> float:
    """How far `whole` is from the part of `other` at `box`, once the box is refined
    (unless not to `refine`: a claim that one whole picture is the other, re-encoded or
    resized, has no box to find): (1 - r) / 2 of their weighted frequencies, 0 the same
    (see the module's docstring); anything above GIVE_UP means no copy, whatever its
    value."""
    a, b = whole.astype(np.float32), other.astype(np.float32)
    height, width = b.shape
    x, w = (box[0] + box[2]) / 2 * width, (box[2] - box[0]) * width
    y, h = (box[1] + box[3]) / 2 * height, (box[3] - box[1]) * height
    scales = _scales(a, min(w, h))
    whole_spans = _box_spans(a.shape, None)

    @cache
    def mine(scale: str) -> Floats:
        n, low, plain = scales[scale]
        found: Floats = _signatures(_frequencies(a, *whole_spans, n, low), plain)[0, 0]
        return found

    if not refine:
        return _fine_distance(b, (x, w, y, h), scales["fine"], mine("fine"))
    for step, scale in LEVELS:
        n, low, plain = scales[scale]
        for _ in range(MOVES):
            xs, ys = _spans(x, w, step, width), _spans(y, h, step, height)
            found = _signatures(_frequencies(b, xs, ys, n, low), plain) @ mine(scale)
            row, col = (int(k) for k in np.unravel_index(int(found.argmax()), found.shape))
            (x0, x1), (y0, y1) = xs[col], ys[row]
            x, w, y, h = (x0 + x1) / 2, x1 - x0, (y0 + y1) / 2, y1 - y0
            if (row, col) == (4, 4):  # the box in the middle of the grid: it stays
                break
        if step != LEVELS[-1][0] and _half_distance(b, (x, w, y, h), scales, mine) > GIVE_UP:
            return 1.0
    return _fine_distance(b, (x, w, y, h), scales["fine"], mine("fine"))


def _half_distance(
    pixels: Floats,
    place: tuple[float, float, float, float],
    scales: dict[str, tuple[int, int, bool]],
    mine: Callable[[str], Floats],
) -> float:
    return _fine_distance(pixels, place, scales["half"], mine("half"))


def _fine_distance(
    pixels: Floats, place: tuple[float, float, float, float], scale: tuple[int, int, bool],
    mine: Floats,
) -> float:  # fmt: skip
    """The distance of the part of `pixels` at `place` (centre and side across, then down)
    to `mine`, on the finest scale."""
    x, w, y, h = place
    n, low, plain = scale
    spans = _box_spans(pixels.shape, (x - w / 2, y - h / 2, x + w / 2, y + h / 2))
    return (1 - float(_signatures(_frequencies(pixels, *spans, n, low), plain)[0, 0] @ mine)) / 2


def _box_spans(
    shape: tuple[int, ...], box: tuple[float, float, float, float] | None
) -> tuple[Floats, Floats]:
    """The spans across and down of `box` (pixels; None: the whole picture)."""
    left, top, right, bottom = box or (0.0, 0.0, float(shape[1]), float(shape[0]))
    return np.array([[left, right]], np.float32), np.array([[top, bottom]], np.float32)
