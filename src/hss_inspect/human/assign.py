"""Which annotator answers which task: balanced and seeded, as pure functions.

The tasks are laid out by kind (media type, then domain; shuffled within each kind) and
dealt round the annotators in turn, `per_task` consecutive annotators a task. Dealt in
turn, any run of the layout spreads over the annotators within one task of even, so
every annotator's share differs from another's by at most one task overall, in each
media type and in each (media type, domain) kind, and by at most two in each domain
(a domain is two runs, one per media type). The seed orders the annotators and each
kind's tasks, and then each annotator's tasks as they are shown: the same seed gives the
same study.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from hss_inspect.core.errors import InputError


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
        raise InputError(
            f"--answers-per-task {per_task}: give 1 to {len(annotators)} (the annotators); "
            "an annotator never answers a task twice"
        )
    rng = random.Random(seed)
    circle = list(annotators)
    rng.shuffle(circle)
    given: dict[str, list[str]] = {name: [] for name in annotators}
    turn = 0
    for task in layout(tasks, rng):
        # per_task <= len(circle), so the consecutive annotators are distinct
        for offset in range(per_task):
            given[circle[(turn + offset) % len(circle)]].append(task.task_id)
        turn += per_task
    for name in annotators:
        rng.shuffle(given[name])
    return given


def layout(tasks: Sequence[Assignable], rng: random.Random) -> list[Assignable]:
    """The tasks by kind (media type, then domain), shuffled within each kind."""
    kinds: dict[tuple[str, str], list[Assignable]] = defaultdict(list)
    for task in tasks:
        kinds[task.kind].append(task)
    laid: list[Assignable] = []
    for kind in sorted(kinds):
        run = kinds[kind]
        rng.shuffle(run)
        laid.extend(run)
    return laid
