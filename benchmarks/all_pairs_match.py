"""The near-duplicate matching as it was before `construction.media_match` indexed it:
every image's whole against every other's crops, both ways, and every clip probed against
all later clips' frames one clip at a time. Kept for `bench_duplicates` to time the new
matching against, and to check that both find the same pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from hss_inspect.construction.media_match import (
    CANDIDATE_STEP,
    CROP_DISTANCE,
    FRAME_CANDIDATE,
    PICTURE_DISTANCE,
    Match,
    clip_match,
    of_kind,
)
from hss_inspect.media.fingerprint import Look
from hss_inspect.media.perceptual import SIZE, distances

# Images are compared in blocks of this many rows against this many looks' crops at once:
# a few tens of MB of distances, whatever the pool's size.
ROW_BLOCK = 512
LOOK_BLOCK = 64


def all_pairs_matches(
    looks: Sequence[tuple[str, Look]], others: Sequence[tuple[str, Look]], same: bool
) -> list[Match]:
    """What `media_match.find_matches` finds, the old way: every image against every
    other at once, and each clip probed against the later clips' frames."""
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
