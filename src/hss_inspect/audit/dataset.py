"""The audit's samples: one per selected task and variant kind."""

from __future__ import annotations

import random
from collections.abc import Sequence

from inspect_ai.dataset import MemoryDataset, Sample

from hss_inspect.data.dataset import row_to_sample
from hss_inspect.data.release import Release
from hss_inspect.data.rows import DatasetError, TaskRow

SAMPLE_SEED = 2610_08966


def sample_rows(
    rows: Sequence[TaskRow], count: int | None, seed: int = SAMPLE_SEED
) -> list[TaskRow]:
    """`count` tasks drawn without replacement by a fixed seed (all when None), in row order.

    The same release, filters, count and seed always give the same tasks, so two judges
    audited on a sample are audited on the same one.
    """
    if count is None or count >= len(rows):
        return list(rows)
    if count < 1:
        raise ValueError(f"hss_judge_audit: -T sample_tasks must be at least 1, not {count}")
    chosen = set(random.Random(seed).sample(range(len(rows)), count))
    return [row for index, row in enumerate(rows) if index in chosen]


def audit_sample(row: TaskRow, kind: str) -> Sample:
    base = row_to_sample(row)
    return Sample(
        id=f"{row.task_id}:{kind}",
        input=base.input,
        target=base.target,
        metadata={**(base.metadata or {}), "audit_kind": kind},
    )


def build_audit_dataset(
    release: Release, rows: Sequence[TaskRow], kinds: Sequence[str]
) -> MemoryDataset:
    if not rows:
        raise DatasetError(
            f"hss_judge_audit: no HSS tasks in {release.description} match the chosen media, "
            "domains and subdomains; loosen the filters"
        )
    return MemoryDataset(
        [audit_sample(row, kind) for row in rows for kind in kinds],
        name="HSS judge audit",
        location=release.description,
    )
