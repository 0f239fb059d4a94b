"""The near-duplicate matching as it was before `construction.media_match` indexed it:
every image's whole against every other's crops, both ways, and every clip probed against
all later clips' frames one clip at a time. Kept for `bench_duplicates` to time the new
matching against, and to check that both find the same pairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from hss_inspect.media.fingerprint import LOOK_FPS, Look
from hss_inspect.media.perceptual import SIZE, distances

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
# Images are compared in blocks of this many rows against this many looks' crops at once:
# a few tens of MB of distances, whatever the pool's size.
ROW_BLOCK = 512
LOOK_BLOCK = 64


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


def find_matches(
    looks: Sequence[tuple[str, Look]], others: Sequence[tuple[str, Look]], same: bool
) -> list[Match]:
    """Every near-duplicate of an item of `looks` among `others` (`same`: the two are one
    list, and each pair is reported once, never an item with itself)."""

    def of_kind(items: Sequence[tuple[str, Look]], kind: str) -> list[tuple[str, Look]]:
        return [(key, look) for key, look in items if look.media_type == kind and not look.blank]

    found = _image_matches(of_kind(looks, "image"), of_kind(others, "image"), same)
    mine, theirs = of_kind(looks, "video"), of_kind(others, "video")
    frames = ClipFrames(theirs)
    for n, (key, look) in enumerate(mine):
        for m in frames.candidates(look, n + 1 if same else 0):
            result = clip_match(look, theirs[m][1])
            if result is not None:
                found.append(Match(key, theirs[m][0], *result))
    return found


def _image_matches(
    mine: Sequence[tuple[str, Look]], theirs: Sequence[tuple[str, Look]], same: bool
) -> list[Match]:
    """`picture_match` over every pair at once, in blocks of rows (a pool of thousands)."""
    found: list[Match] = []
    if not mine or not theirs:
        return found
    their_looks = [look for _, look in theirs]
    their_wholes = np.stack([look.hashes[0] for look in their_looks])
    for start in range(0, len(mine), ROW_BLOCK):
        block = mine[start : start + ROW_BLOCK]
        looks = [look for _, look in block]
        wholes = np.stack([look.hashes[0] for look in looks])
        whole = distances(wholes, their_wholes)
        cropped = np.minimum(
            nearest_crops(wholes, their_looks), nearest_crops(their_wholes, looks).T
        )
        for row, col in zip(*np.nonzero((whole <= PICTURE_DISTANCE) | (cropped <= CROP_DISTANCE)),
                            strict=True):  # fmt: skip
            n = start + int(row)
            if same and int(col) <= n:
                continue
            near = float(whole[row, col])
            how = (near, "same picture") if near <= PICTURE_DISTANCE else (
                float(cropped[row, col]), "crop")  # fmt: skip
            found.append(Match(block[row][0], theirs[col][0], *how))
    return found


def nearest_crops(wholes: NDArray[np.float32], looks: Sequence[Look]) -> NDArray[np.float32]:
    """For each whole picture, its distance to the nearest crop of each look (1 where a
    look has no crop hashes)."""
    nearest = np.ones((len(wholes), len(looks)), np.float32)
    for start in range(0, len(looks), LOOK_BLOCK):
        block = [(n, look.hashes[1:]) for n, look in enumerate(looks[start : start + LOOK_BLOCK])
                 if len(look.hashes) > 1]  # fmt: skip
        if not block:
            continue
        crops = np.concatenate([hashes for _, hashes in block])
        starts = np.cumsum([0] + [len(hashes) for _, hashes in block[:-1]])
        least = np.minimum.reduceat(distances(wholes, crops), starts, axis=1)
        nearest[:, [start + n for n, _ in block]] = least
    return nearest


class ClipFrames:
    """Every frame of a list of clips in one table, to find at once which clips have a
    frame near one of another clip's."""

    def __init__(self, clips: Sequence[tuple[str, Look]]) -> None:
        self.frames = np.concatenate(
            [look.hashes[look.seen] for _, look in clips] or [np.zeros((0, SIZE), np.float32)]
        )
        counts = [int(look.seen.sum()) for _, look in clips]
        self.starts = np.cumsum([0, *counts[:-1]]).astype(np.int64)
        self.count = len(clips)

    def candidates(self, look: Look, first: int) -> list[int]:
        """The clips from the `first` on worth the full rule: a frame of theirs within
        FRAME_CANDIDATE of one of every CANDIDATE_STEP-th frame of `look`."""
        if first >= self.count:
            return []
        start = int(self.starts[first])
        probes = look.hashes[look.seen][::CANDIDATE_STEP]
        # the largest correlation per frame: distance (1 - r) / 2, taken once at the end
        nearest = (probes @ self.frames[start:].T).max(axis=0)
        per_clip = np.maximum.reduceat(nearest, self.starts[first:] - start)
        return [first + int(n) for n in np.nonzero((1 - per_clip) / 2 <= FRAME_CANDIDATE)[0]]
