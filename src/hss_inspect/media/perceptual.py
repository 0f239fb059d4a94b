"""Perceptual hashes of pictures, as pure functions over pixels.

A picture's hash is the pattern of the lowest 8x8 frequencies of its grayscale downscale to
32x32 (a DCT hash), kept as numbers rather than as the usual bits: a bit taken at the
median flips for a shift of 1% of the picture, while the numbers move smoothly with it.
Two hashes are compared by correlation: the distance (1 - r) / 2 is 0 for the same pattern
and about 0.5 for unrelated pictures. Re-encoding, resizing and mild colour changes keep
the pattern. A crop changes the framing, so a picture also carries the hashes of its own
crops at many sizes and places; a crop of it lands near one of them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from PIL import Image

HASH_SIDE = 32  # the downscale the frequencies are taken of
LOW = 8  # the LOW x LOW lowest frequencies, less the constant term, make the hash
SIZE = LOW * LOW - 1
# The crops a picture's hash set covers: each share of the side, at each of 5 x 5 places
# across the room the crop leaves; a crop between two of them is at most 2.5% of the side
# off one, which moves the distance by a few hundredths.
CROP_SHARES = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6)
CROP_PLACES = (0.0, 0.25, 0.5, 0.75, 1.0)
# Hashes are stored as int8 (the numbers of a unit vector times 127): a quarter of float32,
# and the rounding moves a distance by less than 0.001.
STORED_SCALE = 127
# A picture with less contrast than this (grayscale standard deviation, 0-255) has no
# pattern to match: a blank, black or faded-out frame. It gets no hash.
BLANK_CONTRAST = 4.0
# Work on a copy no larger than this: the hash reads only the coarsest structure.
WORKING_SIDE = 256

Hashes = NDArray[np.float32]


def _dct_matrix(n: int) -> NDArray[np.float64]:
    k = np.arange(n)[:, None]
    x = np.arange(n)[None, :]
    return np.cos(np.pi * (2 * x + 1) * k / (2 * n))


_DCT = _dct_matrix(HASH_SIDE)[:LOW]


def grayscale(image: Image.Image) -> Image.Image:
    """The picture in grayscale, shrunk to WORKING_SIDE at most (its aspect kept)."""
    gray = image.convert("L")
    scale = WORKING_SIDE / max(gray.size)
    if scale < 1:
        size = (max(1, round(gray.width * scale)), max(1, round(gray.height * scale)))
        gray = gray.resize(size, Image.Resampling.BOX)
    return gray


def picture_hash(gray: Image.Image) -> Hashes | None:
    """The hash of a grayscale picture, a unit vector of SIZE numbers; None when blank."""
    pixels = np.asarray(gray.resize((HASH_SIDE, HASH_SIDE), Image.Resampling.BOX), np.float64)
    if pixels.std() < BLANK_CONTRAST:
        return None
    values = (_DCT @ pixels @ _DCT.T).ravel()[1:]
    values -= values.mean()
    norm = float(np.linalg.norm(values))
    if norm == 0:
        return None
    return np.asarray(values / norm, np.float32)


def crop_boxes(width: int, height: int) -> list[tuple[int, int, int, int]]:
    boxes = []
    for share in CROP_SHARES:
        w, h = round(width * share), round(height * share)
        for fy in CROP_PLACES:
            for fx in CROP_PLACES:
                left, top = round((width - w) * fx), round((height - h) * fy)
                boxes.append((left, top, left + w, top + h))
    return boxes


def picture_hashes(image: Image.Image) -> Hashes:
    """The hash of the whole picture (row 0), then of each of its crops; no rows when the
    picture is blank (crops of a blank picture's one busy corner are not its likeness)."""
    gray = grayscale(image)
    whole = picture_hash(gray)
    if whole is None:
        return np.zeros((0, SIZE), np.float32)
    rows = [whole]
    for box in crop_boxes(gray.width, gray.height):
        found = picture_hash(gray.crop(box))
        if found is not None:
            rows.append(found)
    return np.stack(rows)


def stored(hashes: Hashes) -> NDArray[np.int8]:
    return np.round(hashes * STORED_SCALE).astype(np.int8)


def unstored(kept: NDArray[np.int8]) -> Hashes:
    values = kept.astype(np.float32)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    return (values / np.where(norms == 0, 1, norms)).astype(np.float32)


def distances(a: Hashes, b: Hashes) -> NDArray[np.float32]:
    """(1 - r) / 2 of every row of `a` against every row of `b`: 0 the same, 1 opposite."""
    return np.clip((1 - a @ b.T) / 2, 0, 1).astype(np.float32)
