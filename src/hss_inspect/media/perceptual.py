"""Perceptual hashes of pictures, as pure functions over pixels.

A picture's hash is the pattern of the lowest 8x8 frequencies of its grayscale downscale to
32x32 (a DCT hash), kept as numbers rather than as the usual bits: a bit taken at the
median flips for a shift of 1% of the picture, while the numbers move smoothly with it.
Two hashes are compared by correlation: the distance (1 - r) / 2 is 0 for the same pattern
and about 0.5 for unrelated pictures. Re-encoding, resizing and mild colour changes keep
the pattern. A crop changes the framing, so a picture also carries the hashes of its own
crops at many sizes and places; a crop of it lands near one of them.

The hash is the unit vector of the frequencies themselves (not centred), so a picture
turned a quarter or mirrored has a hash that is the same numbers moved and signed
(`turned`): a mirror negates the odd horizontal (or vertical) frequencies, and a
quarter-turn is a transpose and a mirror. The 8 ways a picture can lie cost no new hash.

A picture also keeps a small grayscale copy (`thumbnail`): the hashes find candidates, and
the copy lets a candidate be checked where it claims to lie (`media.alignment`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from PIL import Image

HASH_SIDE = 32  # the downscale the frequencies are taken of
LOW = 8  # the LOW x LOW lowest frequencies, less the constant term, make the hash
SIZE = LOW * LOW - 1
# The crops a picture's hash set covers: each share of the side, at each of 5 x 5 places
# across the room the crop leaves; a crop between two of them is at most 2.5% of the side
# off one (5% for the smallest share), which moves the distance by a few hundredths.
CROP_SHARES = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6)
CROP_PLACES = (0.0, 0.25, 0.5, 0.75, 1.0)
# Hashes are stored as int8 (the numbers of a unit vector times 127): a quarter of float32,
# and the rounding moves a distance by less than 0.001.
STORED_SCALE = 127
# A picture with less contrast than this (grayscale standard deviation, 0-255) has no
# pattern to match: a blank, black or faded-out frame. It gets no hash (a blank crop of a
# busy picture keeps its place as a row of zeros, which nothing is near).
BLANK_CONTRAST = 4.0
# Work on a copy no larger than this: the hash reads only the coarsest structure.
WORKING_SIDE = 128
# The grayscale copy a picture keeps, to check a match at a finer scale than the hash.
THUMB_SIDE = 128
# The 8 ways a picture can lie: bit 1 mirrors left-right, bit 2 upside-down, bit 4
# transposes after the mirrors (0 as it is; 5 and 6 are the quarter-turns, 3 the half).
VARIANTS = 8
MIRRORED = frozenset({1, 2, 4, 7})

Hashes = NDArray[np.float32]


def dct_matrix(n: int) -> NDArray[np.float64]:
    k = np.arange(n)[:, None]
    x = np.arange(n)[None, :]
    return np.cos(np.pi * (2 * x + 1) * k / (2 * n))


_DCT = dct_matrix(HASH_SIDE)[:LOW]


def grayscale(image: Image.Image) -> Image.Image:
    """The picture in grayscale, shrunk to WORKING_SIDE at most (its aspect kept)."""
    return _shrunk(image.convert("L"), WORKING_SIDE)


def _shrunk(gray: Image.Image, side: int) -> Image.Image:
    scale = side / max(gray.size)
    if scale < 1:
        size = (max(1, round(gray.width * scale)), max(1, round(gray.height * scale)))
        gray = gray.resize(size, Image.Resampling.BOX)
    return gray


def thumbnail(gray: Image.Image) -> NDArray[np.uint8]:
    """The grayscale picture at THUMB_SIDE on its longer side at most, as pixels."""
    return np.asarray(_shrunk(gray, THUMB_SIDE), np.uint8)


def picture_hash(gray: Image.Image) -> Hashes | None:
    """The hash of a grayscale picture, a unit vector of SIZE numbers; None when blank."""
    (found,) = _hashes([gray.resize((HASH_SIDE, HASH_SIDE), Image.Resampling.BOX)])
    return found if found.any() else None


def _hashes(downscaled: Sequence[Image.Image]) -> Hashes:
    """The hashes of pictures downscaled to HASH_SIDE, at once: a row of zeros for a blank
    one."""
    pixels = np.stack([np.asarray(small, np.float64) for small in downscaled])
    values = (_DCT @ pixels @ _DCT.T).reshape(len(pixels), -1)[:, 1:]
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    busy = (pixels.std(axis=(1, 2)) >= BLANK_CONTRAST)[:, None] & (norms > 0)
    return np.where(busy, values / np.where(norms == 0, 1, norms), 0).astype(np.float32)


def crop_fractions() -> list[tuple[float, float, float, float]]:
    """Each crop of `crop_boxes` as (left, top, right, bottom) shares of the picture."""
    return [
        (fx * (1 - share), fy * (1 - share), fx * (1 - share) + share, fy * (1 - share) + share)
        for share in CROP_SHARES
        for fy in CROP_PLACES
        for fx in CROP_PLACES
    ]


def crop_boxes(width: int, height: int) -> list[tuple[int, int, int, int]]:
    boxes = []
    for share in CROP_SHARES:
        w, h = round(width * share), round(height * share)
        for fy in CROP_PLACES:
            for fx in CROP_PLACES:
                left, top = round((width - w) * fx), round((height - h) * fy)
                boxes.append((left, top, left + w, top + h))
    return boxes


def picture_hashes(gray: Image.Image) -> Hashes:
    """The hash of the whole grayscale picture (row 0), then of each of its crops, in the
    order of `crop_fractions` (a blank crop a row of zeros); no rows when the picture is
    blank (crops of a blank picture's one busy corner are not its likeness)."""
    side, box_filter = (HASH_SIDE, HASH_SIDE), Image.Resampling.BOX
    boxes = [(0, 0, gray.width, gray.height), *crop_boxes(gray.width, gray.height)]
    found = _hashes([gray.resize(side, box_filter, box=box) for box in boxes])
    return found if found[0].any() else np.zeros((0, SIZE), np.float32)


def _variant_maps() -> tuple[NDArray[np.intp], NDArray[np.float32]]:
    """For each variant, where each number of its hash comes from and its sign."""
    u, v = np.meshgrid(np.arange(LOW), np.arange(LOW), indexing="ij")
    sources, signs = [], []
    for variant in range(VARIANTS):
        sign = np.where((variant & 1) & v, -1.0, 1.0) * np.where((variant & 2) >> 1 & u, -1.0, 1.0)
        index = u * LOW + v
        if variant & 4:
            index, sign = index.T, sign.T
        sources.append(index.ravel()[1:] - 1)
        signs.append(sign.ravel()[1:])
    return np.asarray(sources), np.asarray(signs, np.float32)


_SOURCES, _SIGNS = _variant_maps()


def turned(hashes: Hashes, variant: int) -> Hashes:
    """The hashes of the pictures lying the `variant` way (see VARIANTS)."""
    found: Hashes = hashes[..., _SOURCES[variant]] * _SIGNS[variant]
    return found


def turned_pixels(pixels: NDArray[np.uint8], variant: int) -> NDArray[np.uint8]:
    """The picture itself lying the `variant` way: the pixels `turned` hashes."""
    if variant & 1:
        pixels = pixels[:, ::-1]
    if variant & 2:
        pixels = pixels[::-1, :]
    return np.ascontiguousarray(pixels.T if variant & 4 else pixels)


def stored(hashes: Hashes) -> NDArray[np.int8]:
    return np.round(hashes * STORED_SCALE).astype(np.int8)


def unstored(kept: NDArray[np.int8]) -> Hashes:
    values = kept.astype(np.float32)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    return (values / np.where(norms == 0, 1, norms)).astype(np.float32)


def distances(a: Hashes, b: Hashes) -> NDArray[np.float32]:
    """(1 - r) / 2 of every row of `a` against every row of `b`: 0 the same, 1 opposite."""
    return np.clip((1 - a @ b.T) / 2, 0, 1).astype(np.float32)
