"""When two media items are near-duplicates, from their looks (`media.fingerprint`): the
rules, with their thresholds defined once, here.

- Two images match when their whole pictures are within PICTURE_DISTANCE (a re-encode, a
  resize), or one's whole picture is within CROP_DISTANCE of a crop of the other's (a
  crop).
- Two clips match when a run of one's sampled frames lies within CLIP_DISTANCE, on
  average, of a run of the other's at the same pace: the same clip re-encoded or resized,
  or one cut from the other. The run is the shorter clip whole, or at least MIN_RUN_SECONDS
  of both where they only overlap.

The thresholds were set on generated media (tests/test_duplicates.py prints the distances):
re-encodes, resizes, crops and cuts fall far below them, unrelated items far above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from hss_inspect.media.fingerprint import LOOK_FPS, Look
from hss_inspect.media.perceptual import distances

PICTURE_DISTANCE = 0.05
CROP_DISTANCE = 0.06
CLIP_DISTANCE = 0.05
MIN_RUN_SECONDS = 3.0
MIN_RUN_FRAMES = max(1, round(MIN_RUN_SECONDS * LOOK_FPS))
# A clip pair is compared run by run only when some frame of one is this near a frame of
# the other: a cheap first pass over every frame of every clip at once.
FRAME_CANDIDATE = 0.1
# ... probing one frame in every CANDIDATE_STEP: a run of MIN_RUN_FRAMES holds two.
CANDIDATE_STEP = max(1, MIN_RUN_FRAMES // 2)
# Pictures are compared in blocks of this many wholes against this many looks' crops at
# once: a few MB of correlations, whatever the pool's size.
ROW_BLOCK = 1024
LOOK_BLOCK = 32
# ... and clips in blocks of as many clips as keep a block's table of probe frames against
# the others' frames within this many correlations (16 MB).
TABLE_CELLS = 4_000_000
# A correlation is kept for the exact distance when within this of a rule's threshold: the
# threshold's own rounding, so the filter never drops a pair the rule would take.
SLACK = 1e-4


@dataclass(frozen=True)
class Match:
    """`item` nearly repeats `other` (their keys): how, and how near (0 the same)."""

    item: str
    other: str
    distance: float
    how: str  # "same picture", "crop", "same clip", "cut"


def picture_match(a: Look, b: Look) -> tuple[float, str] | None:
    """How near two images are and how they relate, or None when neither rule holds."""
    if a.blank or b.blank:
        return None
    found = _image_matches([("a", a)], [("b", b)], same=False)
    return (found[0].distance, found[0].how) if found else None


def clip_match(a: Look, b: Look) -> tuple[float, str] | None:
    """The nearest run of frames the two clips share at the same pace, or None."""
    found = best_run(a, b)
    if found is None or found[0] > CLIP_DISTANCE:
        return None
    distance, length = found
    seen_a, seen_b = int(a.seen.sum()), int(b.seen.sum())
    how = "same clip" if length >= 0.9 * max(seen_a, seen_b) else "cut"
    return distance, how


def best_run(a: Look, b: Look) -> tuple[float, int] | None:
    """The smallest mean frame distance over a diagonal run (one clip shifted against the
    other), with the run's frame count; runs shorter than the rule's are not counted."""
    if a.blank or b.blank:
        return None
    table = distances(a.hashes, b.hashes).astype(np.float64)
    table[~a.seen, :] = np.nan
    table[:, ~b.seen] = np.nan
    shortest = min(MIN_RUN_FRAMES, int(a.seen.sum()), int(b.seen.sum()))
    best: tuple[float, int] | None = None
    for offset in range(-(len(a.hashes) - 1), len(b.hashes)):
        run = np.diagonal(table, offset)
        counted = run[~np.isnan(run)]
        if len(counted) < shortest:
            continue
        mean = float(counted.mean())
        if best is None or mean < best[0]:
            best = (mean, len(counted))
    return best


def of_kind(items: Sequence[tuple[str, Look]], kind: str) -> list[tuple[str, Look]]:
    """The items of one media type that can be compared (a blank one matches everything)."""
    return [(key, look) for key, look in items if look.media_type == kind and not look.blank]


def find_matches(
    looks: Sequence[tuple[str, Look]], others: Sequence[tuple[str, Look]], same: bool
) -> list[Match]:
    """Every near-duplicate of an item of `looks` among `others` (`same`: the two are one
    list, and each pair is reported once, never an item with itself)."""

    found = _image_matches(of_kind(looks, "image"), of_kind(others, "image"), same)
    mine, theirs = of_kind(looks, "video"), of_kind(others, "video")
    for n, m in clip_candidates([look for _, look in mine], [look for _, look in theirs], same):
        result = clip_match(mine[n][1], theirs[m][1])
        if result is not None:
            found.append(Match(mine[n][0], theirs[m][0], *result))
    return found


def least_correlation(distance: float) -> float:
    """The correlation below which a pair is surely farther than `distance`."""
    return 1 - 2 * distance - SLACK


def _image_matches(
    mine: Sequence[tuple[str, Look]], theirs: Sequence[tuple[str, Look]], same: bool
) -> list[Match]:
    """`picture_match` over every pair, keeping only the pairs near enough to matter: the
    wholes against the wholes, and each whole against the crops of every look (once when
    `same`, the one table serving both ways)."""
    if not mine or not theirs:
        return []
    my_wholes = np.stack([look.hashes[0] for _, look in mine])
    their_wholes = np.stack([look.hashes[0] for _, look in theirs])
    whole = _near_wholes(my_wholes, their_wholes)
    cropped = _near_crops(my_wholes, [look for _, look in theirs])
    # the other way round: their wholes in my crops (the same table when `same`)
    turned = dict(cropped) if same else _near_crops(their_wholes, [look for _, look in mine])
    for (row, col), near in turned.items():
        cropped[(col, row)] = min(near, cropped.get((col, row), near))
    found = []
    for row, col in sorted(set(whole) | set(cropped)):
        if same and col <= row:
            continue
        near = whole.get((row, col), 1.0)
        if near <= PICTURE_DISTANCE:
            found.append(Match(mine[row][0], theirs[col][0], near, "same picture"))
        elif cropped.get((row, col), 1.0) <= CROP_DISTANCE:
            found.append(Match(mine[row][0], theirs[col][0], cropped[(row, col)], "crop"))
    return found


def _near_wholes(a: NDArray[np.float32], b: NDArray[np.float32]) -> dict[tuple[int, int], float]:
    """The distance of each pair of wholes within PICTURE_DISTANCE (by the correlation)."""
    found: dict[tuple[int, int], float] = {}
    floor = least_correlation(PICTURE_DISTANCE)
    for start in range(0, len(a), ROW_BLOCK):
        block = a[start : start + ROW_BLOCK]
        for row, col in zip(*np.nonzero(block @ b.T >= floor), strict=True):
            near = float(distances(block[row : row + 1], b[col : col + 1])[0, 0])
            found[(start + int(row), int(col))] = near
    return found


def _near_crops(wholes: NDArray[np.float32], looks: Sequence[Look]) -> dict[tuple[int, int], float]:
    """For each whole and look whose nearest crop lies within CROP_DISTANCE: that crop's
    distance. The correlations are reduced to each look's largest before any distance is
    taken, so only the few near pairs cost more than a product."""
    found: dict[tuple[int, int], float] = {}
    floor = least_correlation(CROP_DISTANCE)
    for first in range(0, len(looks), LOOK_BLOCK):
        chosen = enumerate(looks[first : first + LOOK_BLOCK], start=first)
        block = [(n, look.hashes[1:]) for n, look in chosen if len(look.hashes) > 1]
        if not block:
            continue
        crops = np.concatenate([hashes for _, hashes in block])
        starts = np.cumsum([0] + [len(hashes) for _, hashes in block[:-1]])
        for start in range(0, len(wholes), ROW_BLOCK):
            rows = wholes[start : start + ROW_BLOCK]
            largest = np.maximum.reduceat(rows @ crops.T, starts, axis=1)
            for row, n in zip(*np.nonzero(largest >= floor), strict=True):
                col, hashes = block[int(n)]
                near = float(distances(rows[row : row + 1], hashes).min())
                found[(start + int(row), col)] = near
    return found


def clip_candidates(
    mine: Sequence[Look], theirs: Sequence[Look], same: bool
) -> list[tuple[int, int]]:
    """The pairs of clips (indexes into `mine` and `theirs`; the later only, when `same`)
    worth the full rule: a frame of one within FRAME_CANDIDATE of one of every
    CANDIDATE_STEP-th frame of the other. Blocks of clips at once, one product each."""
    if not mine or not theirs:
        return []
    frames = np.concatenate([look.hashes[look.seen] for look in theirs])
    frame_starts = np.cumsum([0] + [int(look.seen.sum()) for look in theirs[:-1]])
    floor = least_correlation(FRAME_CANDIDATE)
    found = []
    probes_per_clip = max(len(look.hashes) for look in mine) // CANDIDATE_STEP + 1
    step = max(1, TABLE_CELLS // (probes_per_clip * len(frames)))
    for first in range(0, len(mine), step):
        block = mine[first : first + step]
        probes = [look.hashes[look.seen][::CANDIDATE_STEP] for look in block]
        probe_starts = np.cumsum([0] + [len(rows) for rows in probes[:-1]])
        # from the block's first clip on, when `same`: earlier clips were paired already
        skip = first + 1 if same else 0
        if skip >= len(theirs):
            break
        offset = int(frame_starts[skip])
        table = np.concatenate(probes) @ frames[offset:].T
        per_frame = np.maximum.reduceat(table, probe_starts, axis=0)
        per_clip = np.maximum.reduceat(per_frame, frame_starts[skip:] - offset, axis=1)
        for n, m in zip(*np.nonzero(per_clip >= floor), strict=True):
            pair = (first + int(n), skip + int(m))
            if not same or pair[1] > pair[0]:
                found.append(pair)
    return found
