"""Selecting HSS rows and turning them into Inspect samples."""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.dataset import MemoryDataset, Sample

from hss_inspect.data.release import Release
from hss_inspect.data.rows import DatasetError, TaskRow


def row_to_sample(row: TaskRow) -> Sample:
    return Sample(
        id=row.task_id,
        input=row.prompt,
        target=row.golden_response,
        metadata=row.sample_metadata(),
    )


def build_dataset(release: Release, rows: Sequence[TaskRow]) -> MemoryDataset:
    if not rows:
        raise DatasetError(
            f"no HSS tasks in {release.description} match the chosen media, domains and "
            "subdomains; loosen the filters"
        )
    return MemoryDataset(
        [row_to_sample(row) for row in rows],
        name="HSS",
        location=release.description,
    )
