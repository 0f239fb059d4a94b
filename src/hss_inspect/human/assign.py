"""Which annotator answers which task: balanced and seeded, as pure functions.

Each task goes to `per_task` different annotators. Tasks are dealt in an order that
interleaves their kinds (media type and domain), each to the annotators who have the
fewest tasks so far and then the fewest of that kind, so that every annotator's share
differs from another's by at most one task overall and stays close to one in each kind;
ties are broken by a seeded order, so the same seed gives the same study.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Assignable:
    """What the rule needs of a task: its id and kind."""

    task_id: str
    media_type: str
    domain: str

    @property
    def kind(self) -> tuple[str, str]:
        return (self.media_type, self.domain)


def assign(
    tasks: Sequence[Assignable], annotators: Sequence[str], per_task: int, seed: int
) -> dict[str, list[str]]:
    """Each annotator's tasks, in the order they are shown (shuffled per annotator)."""
    if not 1 <= per_task <= len(annotators):
        raise ValueError(
            f"--answers-per-task {per_task}: give 1 to {len(annotators)} (the annotators); "
            "an annotator never answers a task twice"
        )
    rng = random.Random(seed)
    load: dict[str, int] = dict.fromkeys(annotators, 0)
    by_kind: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(annotators, 0)
    )
    tiebreak = {name: rng.random() for name in annotators}
    given: dict[str, list[str]] = {name: [] for name in annotators}
    for task in dealing_order(tasks, rng):
        kind = by_kind[task.kind]
        chosen = sorted(annotators, key=lambda a: (load[a], kind[a], tiebreak[a]))[:per_task]
        for name in chosen:
            load[name] += 1
            kind[name] += 1
            given[name].append(task.task_id)
        # the next task breaks ties among the same annotators in another order
        tiebreak = {name: rng.random() for name in annotators}
    for name in annotators:
        rng.shuffle(given[name])
    return given


def dealing_order(tasks: Sequence[Assignable], rng: random.Random) -> list[Assignable]:
    """The tasks shuffled within each kind, then taken a kind at a time in turn."""
    kinds: dict[tuple[str, str], list[Assignable]] = defaultdict(list)
    for task in tasks:
        kinds[task.kind].append(task)
    queues = [kinds[k] for k in sorted(kinds)]
    for queue in queues:
        rng.shuffle(queue)
    order: list[Assignable] = []
    while any(queues):
        for queue in queues:
            if queue:
                order.append(queue.pop())
    return order
