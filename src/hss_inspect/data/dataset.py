"""Selecting HSS rows and turning them into Inspect samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentText

from hss_inspect.core.options import OptionList
from hss_inspect.data.fingerprints import rows_digest
from hss_inspect.data.release import Release
from hss_inspect.data.rows import DatasetError, DatasetSize, TaskRow, dataset_size, select_rows


@dataclass(frozen=True)
class Selection:
    """The rows a run evaluates, the size of the whole dataset they were chosen from (which
    a report counts the run against), and that dataset's rows digest (`data.fingerprints`)."""

    rows: list[TaskRow]
    size: DatasetSize
    rows_digest: str


def selected(
    release: Release, media: str, domains: OptionList, subdomains: OptionList
) -> Selection:
    rows = release.read_rows()
    chosen = select_rows(rows, media, domains, subdomains)
    return Selection(chosen, dataset_size(rows), rows_digest(rows))


def row_to_sample(row: TaskRow) -> Sample:
    # The question goes in as a list of content, not a string: the user turn replacing it is
    # a list too, which Inspect's diff of the task state after each solver step compares
    # item by item. A string replaced by a list is JSON-encoded whole, ~39 MB for a
    # 500-frame clip, about a seventh of a full run's CPU (docs/full-runs.md).
    return Sample(
        id=row.task_id,
        input=[ChatMessageUser(content=[ContentText(text=row.prompt)])],
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
