"""When two media items are near-duplicates, from their looks (`media.fingerprint`): the
rules, with their thresholds defined once, here.

- Two images match when one's whole picture, as it is or turned a quarter, a half or
  mirrored, is within PICTURE_DISTANCE of the other's (a re-encode, a resize, a turned
  or mirrored copy), or within CROP_DISTANCE of a crop of the other's (a crop). The hash
  only proposes: a match is a claim that the one picture is the other, or lies in it at
  the crop's box, and it holds only when the two agree there at a finer scale once the
  box is refined (`media.alignment`, within ALIGNED_DISTANCE). Distinct pictures that
  share only their broad layout pass the hash and fail the check.
- Two clips match when a run of one's sampled frames (as they are, or all turned or
  mirrored alike) lies within CLIP_DISTANCE, on average, of a run of the other's at the
  same pace: the same clip re-encoded or resized, or one cut from the other. The run is
  the shorter clip whole, or at least MIN_RUN_SECONDS of both where they only overlap.

The thresholds were set on generated media and photographs (tests/test_duplicates.py
prints the distances): copies fall far below them, distinct items far above.

Given `Groups`, a pair already in one group is not compared again, so a pool of
look-alikes costs about one check per item, not one per pair (`construction.groups`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from hss_inspect.construction.groups import Groups
from hss_inspect.media.alignment import aligned_distance
from hss_inspect.media.fingerprint import LOOK_FPS, Look
from hss_inspect.media.perceptual import (
    MIRRORED,
    VARIANTS,
    Hashes,
    crop_fractions,
    distances,
    turned,
    turned_pixels,
)

PICTURE_DISTANCE = 0.05
CROP_DISTANCE = 0.06
ALIGNED_DISTANCE = 0.05
CLIP_DISTANCE = 0.05
MIN_RUN_SECONDS = 3.0
MIN_RUN_FRAMES = max(1, round(MIN_RUN_SECONDS * LOOK_FPS))
# A clip pair is compared run by run only when some frame of one is this near a frame of
# the other: a cheap first pass over every frame of every clip at once.
FRAME_CANDIDATE = 0.1
# ... probing one frame in every CANDIDATE_STEP: a run of MIN_RUN_FRAMES holds two.
CANDIDATE_STEP = max(1, MIN_RUN_FRAMES // 2)
# Pictures are compared in blocks of this many wholes against this many looks' crops at
# once: a few MB of correlations, whatever the pool's size; wholes against wholes, in
# blocks of about WHOLE_CELLS pairs (in a pool of look-alikes, every pair is near: each
# near pair of a block is held in a few arrays at once).
ROW_BLOCK = 1024
LOOK_BLOCK = 32
WHOLE_CELLS = 1_000_000
# ... and clips in blocks of as many clips as keep a block's table of probe frames against
# the others' frames within this many correlations (16 MB).
TABLE_CELLS = 4_000_000
# A correlation is kept for the exact distance when within this of a rule's threshold: the
# threshold's own rounding, so the filter never drops a pair the rule would take.
SLACK = 1e-4
WHOLE = (0.0, 0.0, 1.0, 1.0)
# A block's pairs are checked this many at a time (or a sixteenth of what is left) between
# two filterings of the rest by their groups.
CHUNK = 512
# The ways a picture or a clip's frames are tried lying (`perceptual.VARIANTS`): as they
# are, turned a quarter, a half or three quarters, and mirrored each way. A picture's 8
# are its hash's numbers moved and signed; a crop is looked for as it lies only.
TURNS = tuple(range(VARIANTS))
_CROPS = crop_fractions()


@dataclass(frozen=True)
class Match:
    """`item` nearly repeats `other` (their keys): how, and how near (0 the same)."""

    item: str
    other: str
    distance: float
    how: str  # "same picture", "crop", "same clip", "cut"; "turned picture", "mirrored cut"...


class Proposed(NamedTuple):
    """A block of claims the hashes make, nearest first: that the whole picture of one of
    `mine[rows[k]]` and `theirs[cols[k]]` (mine when `mine_whole`), lying the `variant`
    way, is the other's whole picture (crop -1) or its part at crop `crops[k]`."""

    rows: NDArray[np.intp]
    cols: NDArray[np.intp]
    near: NDArray[np.float32]
    crops: NDArray[np.intp]
    how: str
    mine_whole: bool
    variant: int

    def box(self, k: int) -> tuple[float, float, float, float]:
        crop = int(self.crops[k])
        return WHOLE if crop < 0 else _CROPS[crop]


def picture_match(a: Look, b: Look) -> tuple[float, str] | None:
    """How near two images are and how they relate, or None when no rule holds."""
    if a.blank or b.blank:
        return None
    pair = ([("a", a)], [("b", b)])
    found = _image_matches(*pair, _Checks(*pair, same=False, groups=None))
    return (found[0].distance, found[0].how) if found else None


def clip_match(a: Look, b: Look, variant: int = 0) -> tuple[float, str] | None:
    """The nearest run of frames the two clips share at the same pace (`a`'s frames lying
    the `variant` way), or None."""
    found = best_run(a, b, variant)
    if found is None or found[0] > CLIP_DISTANCE:
        return None
    distance, length = found
    seen_a, seen_b = int(a.seen.sum()), int(b.seen.sum())
    how = "same clip" if length >= 0.9 * max(seen_a, seen_b) else "cut"
    return distance, _turned_how(how, variant)


def _turned_how(how: str, variant: int) -> str:
    """ "same picture" as it is; "turned picture", "mirrored cut" and the like otherwise."""
    if variant == 0:
        return how
    return f"{'mirrored' if variant in MIRRORED else 'turned'} {how.removeprefix('same ')}"


def best_run(a: Look, b: Look, variant: int = 0) -> tuple[float, int] | None:
    """The smallest mean frame distance over a diagonal run (one clip shifted against the
    other), with the run's frame count; runs shorter than the rule's are not counted."""
    if a.blank or b.blank:
        return None
    table = distances(turned(a.hashes, variant), b.hashes).astype(np.float64)
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
    looks: Sequence[tuple[str, Look]],
    others: Sequence[tuple[str, Look]],
    same: bool,
    groups: Groups | None = None,
) -> list[Match]:
    """Every near-duplicate of an item of `looks` among `others` (`same`: the two are one
    list, and each pair is reported once, never an item with itself). With `groups` (of
    every key of both), each match joins its two items, and a pair already in one group
    is skipped: then the matches found are what joined the groups."""
    images = of_kind(looks, "image"), of_kind(others, "image")
    found = _image_matches(*images, _Checks(*images, same, groups))
    mine, theirs = of_kind(looks, "video"), of_kind(others, "video")
    checks = _Checks(mine, theirs, same, groups)
    for n, m, variant in clip_candidates([lk for _, lk in mine], [lk for _, lk in theirs], same):
        if checks.open(n, m):
            result = clip_match(mine[n][1], theirs[m][1], variant)
            checks.settle(n, m, result is not None)
            if result is not None:
                found.append(Match(mine[n][0], theirs[m][0], *result))
    return found


def least_correlation(distance: float) -> float:
    """The correlation below which a pair is surely farther than `distance`."""
    return 1 - 2 * distance - SLACK


class _Checks:
    """Which candidate pairs are still worth checking: with groups, pairs in two groups
    (neither item given up on); without, pairs not matched yet."""

    def __init__(
        self,
        mine: Sequence[tuple[str, Look]],
        theirs: Sequence[tuple[str, Look]],
        same: bool,
        groups: Groups | None,
    ) -> None:
        self.groups = groups
        self.same = same
        self.matched: set[tuple[int, int]] = set()
        self.joins = 0
        if groups is not None:
            self.mine = groups.ids([key for key, _ in mine])
            self.theirs = groups.ids([key for key, _ in theirs])

    def worth(self, rows: NDArray[np.intp], cols: NDArray[np.intp]) -> NDArray[np.bool_]:
        if self.groups is None:
            return np.ones(len(rows), np.bool_)
        return self.groups.worth_checking(self.mine[rows], self.theirs[cols])

    def open(self, row: int, col: int) -> bool:
        if self.groups is not None:
            return self.groups.apart(int(self.mine[row]), int(self.theirs[col]))
        return self._pair(row, col) not in self.matched

    def pending(self, rows: NDArray[np.intp], cols: NDArray[np.intp]) -> Iterator[int]:
        """The places of a block's pairs still open, in order; what is left of the block is
        filtered again after each share of it in which groups were joined (a pool of
        look-alikes proposes millions of pairs, which its first joins settle)."""
        left = np.arange(len(rows))
        while len(left):
            share = max(CHUNK, len(left) // 16)
            chunk, left = left[:share], left[share:]
            joins = self.joins
            for k in chunk:
                if self.open(int(rows[k]), int(cols[k])):
                    yield int(k)
            if self.joins != joins and len(left):
                left = left[self.worth(rows[left], cols[left])]

    def live_rows(
        self, rows: NDArray[np.intp], cols: NDArray[np.intp], mine_rows: bool
    ) -> NDArray[np.bool_]:
        """Which of the wholes `rows` may still pair with one of the looks `cols` (of mine
        when not `mine_rows`): all but those in the one group every look is in."""
        if self.groups is None:
            return np.ones(len(rows), np.bool_)
        ours, others = (self.mine, self.theirs) if mine_rows else (self.theirs, self.mine)
        fresh = self.groups.fresh(others[cols])
        tops = np.unique(self.groups.roots(others[cols][fresh]))
        alive = self.groups.fresh(ours[rows])
        if len(tops) == 0:
            return np.zeros(len(rows), np.bool_)
        if len(tops) == 1:
            alive &= self.groups.roots(ours[rows]) != tops[0]
        return alive

    def settle(self, row: int, col: int, held: bool) -> None:
        if held:
            self.joins += 1
        if self.groups is None:
            if held:
                self.matched.add(self._pair(row, col))
        elif held:
            self.groups.join(int(self.mine[row]), int(self.theirs[col]))
        else:
            self.groups.failed(int(self.mine[row]), int(self.theirs[col]))

    def _pair(self, row: int, col: int) -> tuple[int, int]:
        return (min(row, col), max(row, col)) if self.same else (row, col)


def _image_matches(
    mine: Sequence[tuple[str, Look]], theirs: Sequence[tuple[str, Look]], checks: _Checks
) -> list[Match]:
    """The claims the hashes make, each checked where it puts the picture: wholes against
    wholes first (as they are, then turned), then wholes against crops."""
    if not mine or not theirs:
        return []
    found = []
    for block in _proposals(mine, theirs, checks):
        for k in checks.pending(block.rows, block.cols):
            row, col = int(block.rows[k]), int(block.cols[k])
            held = _holds(block, k, mine[row][1], theirs[col][1])
            checks.settle(row, col, held)
            if held:
                # one list: each pair reported as (earlier, later), whichever is the whole
                row, col = sorted((row, col)) if checks.same else (row, col)
                found.append(Match(mine[row][0], theirs[col][0], float(block.near[k]), block.how))
    return found


def _holds(block: Proposed, k: int, mine: Look, theirs: Look) -> bool:
    """Whether the two pictures agree where the claim puts them (`media.alignment`)."""
    whole, other = (mine, theirs) if block.mine_whole else (theirs, mine)
    pixels = turned_pixels(whole.thumb, block.variant)
    box = block.box(k)
    near = aligned_distance(pixels, other.thumb, box, refine=box != WHOLE)
    return near <= ALIGNED_DISTANCE


def _proposals(
    mine: Sequence[tuple[str, Look]], theirs: Sequence[tuple[str, Look]], checks: _Checks
) -> Iterator[Proposed]:
    """The pairs the hashes propose, block by block as they are found, each block's pairs
    in groups already dropped at once."""
    same = checks.same
    my_wholes = np.stack([look.hashes[0] for _, look in mine])
    their_wholes = np.stack([look.hashes[0] for _, look in theirs])
    for variant in TURNS:
        how = _turned_how("same picture", variant)
        turned_wholes = turned(my_wholes, variant)
        # one list: a pair turned one way is the pair the other way round turned back, so
        # each way's later pairs alone cover them all
        for rows, cols, near in _near_wholes(turned_wholes, their_wholes, same):
            keep = _nearest_first(checks.worth(rows, cols) & ((rows != cols) | (not same)), near)
            wholes = np.full(len(keep), -1, np.intp)
            yield Proposed(rows[keep], cols[keep], near[keep], wholes, how, True, variant)
    sides = [(True, my_wholes, [lk for _, lk in theirs])]
    if not same:  # one list: the table of wholes against crops holds both ways
        sides.append((False, their_wholes, [lk for _, lk in mine]))
    for mine_whole, wholes_, looks in sides:
        live = functools.partial(checks.live_rows, mine_rows=mine_whole)
        for rows, cols, near, crop in _near_crops(wholes_, looks, live):
            mine_rows, their_cols = (rows, cols) if mine_whole else (cols, rows)
            worth = checks.worth(mine_rows, their_cols) & ((rows != cols) | (not same))
            keep = _nearest_first(worth, near)
            yield Proposed(mine_rows[keep], their_cols[keep], near[keep], crop[keep], "crop",
                           mine_whole, 0)  # fmt: skip


def _nearest_first(keep: NDArray[np.bool_], near: NDArray[np.float32]) -> NDArray[np.intp]:
    """The places kept, the nearest pair first: the likeliest to hold, and once it has, its
    group's other pairs are skipped."""
    kept = np.nonzero(keep)[0]
    return kept[np.argsort(near[kept], kind="stable")]


Found = tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float32]]


def _near_wholes(a: NDArray[np.float32], b: NDArray[np.float32], later: bool) -> Iterator[Found]:
    """Each block's pairs of wholes within PICTURE_DISTANCE (by the correlation), with
    their distances; only (row, col) with col > row when `later`."""
    floor = least_correlation(PICTURE_DISTANCE)
    rows_at_once = max(1, WHOLE_CELLS // len(b))
    for start in range(0, len(a), rows_at_once):
        first = start if later else 0  # the columns that can hold a later pair
        table = a[start : start + rows_at_once] @ b[first:].T
        rows, cols = np.nonzero(table >= floor)
        near = np.clip((1 - table[rows, cols]) / 2, 0, 1).astype(np.float32)
        del table  # not held across the yield (see `_near_crops`)
        rows, cols = rows + start, cols + first
        keep = cols > rows if later else np.ones(len(rows), np.bool_)
        yield rows[keep], cols[keep], near[keep]


def _near_crops(
    wholes: NDArray[np.float32],
    looks: Sequence[Look],
    live: Callable[[NDArray[np.intp], NDArray[np.intp]], NDArray[np.bool_]],
) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float32], NDArray[np.intp]]]:
    """For each block of wholes and looks: each (whole, look) whose nearest crop lies
    within CROP_DISTANCE, that crop's distance, and which crop it is. Every image's look
    holds the same crops, so each look's are a fixed stretch of a block's table. Only the
    wholes `live` keeps for the block's looks are compared (none in their one group)."""
    floor = least_correlation(CROP_DISTANCE)
    crops = len(_CROPS)
    for first in range(0, len(looks), LOOK_BLOCK):
        block = looks[first : first + LOOK_BLOCK]
        cols = np.arange(first, first + len(block))
        table_crops = np.concatenate([look.hashes[1:] for look in block])
        starts = np.arange(0, len(table_crops), crops)
        for start in range(0, len(wholes), ROW_BLOCK):
            rows = np.arange(start, min(start + ROW_BLOCK, len(wholes)))
            rows = rows[live(rows, cols)]
            if not len(rows):
                continue
            table = wholes[rows] @ table_crops.T
            largest = np.maximum.reduceat(table, starts, axis=1)
            near_rows, near_cols = np.nonzero(largest >= floor)
            near_crops = table.reshape(len(rows), len(block), crops)[near_rows, near_cols]
            # let go of the table before the block is handed on: held across the yield,
            # the next block's would be a fresh allocation, faulted in page by page
            del table
            which: NDArray[np.intp] = near_crops.argmax(axis=1)
            near = np.clip((1 - largest[near_rows, near_cols]) / 2, 0, 1).astype(np.float32)
            yield rows[near_rows], near_cols + first, near, which


def clip_candidates(
    mine: Sequence[Look], theirs: Sequence[Look], same: bool
) -> list[tuple[int, int, int]]:
    """The pairs of clips (indexes into `mine` and `theirs`; the later only, when `same`)
    worth the full rule, with the way `mine`'s frames lie: a frame of one within
    FRAME_CANDIDATE of one of every CANDIDATE_STEP-th frame of the other as it lies, or of
    every MIN_RUN_FRAMES-th turned or mirrored (one in every run the rule counts). Blocks
    of clips at once, one product each."""
    if not mine or not theirs:
        return []
    frames = np.concatenate([look.hashes[look.seen] for look in theirs])
    frame_starts = np.cumsum([0] + [int(look.seen.sum()) for look in theirs[:-1]])
    found: dict[tuple[int, int], int] = {}
    most = max(len(look.hashes) for look in mine)
    probes_per_clip = most // CANDIDATE_STEP + (len(TURNS) - 1) * (most // MIN_RUN_FRAMES) + 2
    step = max(1, TABLE_CELLS // (probes_per_clip * len(frames)))
    for first in range(0, len(mine), step):
        # from the block's first clip on, when `same`: earlier clips were paired already
        skip = first + 1 if same else 0
        if skip >= len(theirs):
            break
        block = mine[first : first + step]
        theirs_frames = frames[int(frame_starts[skip]) :]
        clip_starts = frame_starts[skip:] - frame_starts[skip]
        for variants, every in (((0,), CANDIDATE_STEP), (TURNS[1:], MIN_RUN_FRAMES)):
            probes = [look.hashes[look.seen][::every] for look in block]
            near = _probed(probes, variants, theirs_frames, clip_starts)
            for turn, n, m in zip(*np.nonzero(near), strict=True):
                pair = (first + int(n), skip + int(m))
                if not same or pair[1] > pair[0]:
                    found.setdefault(pair, variants[int(turn)])
    return [(n, m, variant) for (n, m), variant in found.items()]


def _probed(
    probes: Sequence[Hashes],
    variants: Sequence[int],
    frames: Hashes,
    clip_starts: NDArray[np.intp],
) -> NDArray[np.bool_]:
    """(variant, probing clip, clip) where a probe lying that way is within
    FRAME_CANDIDATE of a frame of the clip: every way in one product, reduced to the
    clips' largest along the rows first (contiguous), then per probing clip."""
    stacked = np.concatenate(probes)
    if not variants or not len(stacked):
        return np.zeros((0, len(probes), len(clip_starts)), np.bool_)
    turns = np.concatenate([turned(stacked, variant) for variant in variants])
    per_clip = np.maximum.reduceat(turns @ frames.T, clip_starts, axis=1)
    probe_starts = np.cumsum([0] + [len(rows) for rows in probes[:-1]])
    per_pair = np.maximum.reduceat(per_clip.reshape(len(variants), len(stacked), -1),
                                   probe_starts, axis=1)  # fmt: skip
    found: NDArray[np.bool_] = per_pair >= least_correlation(FRAME_CANDIDATE)
    return found
