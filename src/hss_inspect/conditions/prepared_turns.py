"""What a named model is sent, prepared ahead of its run (`hss-inspect prepare --model` or
`--recipe`): each sample's user turn built for the model exactly as the run builds it
(`turn.user_turn_for`, the token budget found as the run finds it), so a thinned set is
taken from the clip's entry and a shrunk one decoded and stored before the run."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hss_inspect.conditions.turn import user_turn_for
from hss_inspect.core.settings import MediaSettings
from hss_inspect.data.release import Release
from hss_inspect.data.rows import TaskRow
from hss_inspect.media.prepare import PrepareJob
from hss_inspect.providers.fit import TokenBudget


@dataclass(frozen=True)
class ModelTarget:
    """A run the media are prepared for: its model, the token budget found as the run
    finds it, and the run's media settings."""

    name: str
    budget: TokenBudget
    media: MediaSettings


# A run to prepare for: its model, media settings and output budget (--max-tokens).
ModelRun = tuple[str, MediaSettings, int | None]


class ForModel(Exception):
    """A file that could not be prepared for one of the named models (the model named)."""


def targets_for(runs: Sequence[ModelRun], base_url: str | None) -> list[ModelTarget]:
    """Each distinct run with the token budget its model's window leaves."""
    if not runs:
        return []
    from hss_inspect.providers.context import budget_for_name

    async def targets() -> list[ModelTarget]:
        found = []
        for name, media, max_tokens in dict.fromkeys(runs):
            budget = await budget_for_name(
                name, media.context_window, media.output_reserve, base_url, max_tokens
            )
            found.append(ModelTarget(name, budget, media))
        return found

    return asyncio.run(targets())


def with_model_turns(
    jobs: Sequence[PrepareJob],
    rows: Sequence[TaskRow],
    release: Release,
    targets: Sequence[ModelTarget],
) -> list[PrepareJob]:
    """The jobs, each followed by the user turns of the samples showing its file for every
    target (nothing added without targets)."""
    if not targets:
        return list(jobs)
    samples: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        samples.setdefault(row.media_path, []).append(row.sample_metadata())
    return [
        replace(
            job,
            then=functools.partial(
                model_turns, release, tuple(samples[job.media_path]), tuple(targets)
            ),
        )
        for job in jobs
    ]


def model_turns(
    release: Release, samples: Sequence[dict[str, Any]], targets: Sequence[ModelTarget]
) -> int:
    """Build each sample's user turn for each target, as the run does: what it sends is
    then in the cache (a DoesNotFit or other media error names the model)."""

    async def build() -> int:
        for target in targets:
            for meta in samples:
                try:
                    await user_turn_for(release, target.media, target.name, meta, target.budget)
                except Exception as exc:
                    raise ForModel(f"for {target.name}: {exc}") from exc
        return len(targets) * len(samples)

    return asyncio.run(build())
