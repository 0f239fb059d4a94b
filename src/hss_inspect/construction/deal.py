"""Who reviews a task in a round, as a pure, seeded rule.

A round's reviewer is never the task's author and never one who reviewed the same
revision in an earlier round, so every admitted revision was passed by as many distinct
reviewers as there are rounds, none of them its author (Sec. 2.4). Among those who may, the
one with the fewest reviews dealt so far gets it, so the work is dealt evenly; a tie is
broken by a hash of the seed, the task, its revision and round, and the reviewer's name:
the same build and seed deal the same way, with no state kept for the draw.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence

from hss_inspect.core.errors import InputError


def eligible(reviewers: Sequence[str], author: str, earlier: Collection[str]) -> list[str]:
    """The reviewers who may take the round: not the author, not an earlier round's."""
    return [name for name in reviewers if name != author and name not in earlier]


def pick_reviewer(
    reviewers: Sequence[str],
    author: str,
    earlier: Collection[str],
    load: Mapping[str, int],
    seed: int,
    slot: tuple[str, int, int],
) -> str:
    """The reviewer of `slot` (task id, revision, round)."""
    candidates = eligible(reviewers, author, earlier)
    if not candidates:
        task_id, revision, round_ = slot
        raise InputError(
            f"task {task_id} (revision {revision}): no reviewer left for round {round_} "
            f"who is neither its author ({author}) nor an earlier round's reviewer; a build "
            "needs as many reviewers as rounds besides each author"
        )
    return min(candidates, key=lambda name: (load.get(name, 0), _draw(seed, slot, name)))


def _draw(seed: int, slot: tuple[str, int, int], name: str) -> str:
    return hashlib.sha256(repr((seed, slot, name)).encode()).hexdigest()


def check_enough_reviewers(reviewers: Sequence[str], authors: Sequence[str], rounds: int) -> None:
    """Refuse a build where some task could find no reviewer for its last round."""
    for author in ("", *authors):
        others = [name for name in reviewers if name != author]
        if len(others) < rounds:
            whose = f" besides the author {author}" if author else ""
            raise InputError(
                f"--reviewers: {len(others)} reviewer(s){whose}; each of the {rounds} "
                f"review rounds needs its own reviewer: give at least {rounds}{whose}"
            )
