"""The rows of the release as lmms-eval documents: one per task, carrying what its user
turn and its judge read (`TaskRow.sample_metadata`, as an Inspect sample does) and the copy
it came from, pinned to the commit the revision resolved to."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from hss_inspect.data.release import Release, open_release
from hss_inspect.data.rows import DatasetError, TaskRow, select_rows
from hss_inspect.lmms.options import RunOptions

# Where a document's release is: what `open_release` opens it from again.
DATASET_KEY, REVISION_KEY = "hss_dataset", "hss_revision"


def task_docs(options: RunOptions) -> list[dict[str, Any]]:
    """The documents of the run's selection, in release order."""
    values = options.values
    release = opened_release(values["dataset"], values["revision"])
    rows = select_rows(
        release.read_rows(), values["media"], values["domains"], values["subdomains"]
    )
    if not rows:
        raise DatasetError(
            f"no HSS tasks in {release.description} match the chosen media, domains and "
            "subdomains; loosen the filters (HSS_TASK_ARGS)"
        )
    return [document(row, release) for row in rows]


def document(row: TaskRow, release: Release) -> dict[str, Any]:
    pinned = release.revision if release.revision is not None else ""
    return {**row.sample_metadata(), DATASET_KEY: release.dataset, REVISION_KEY: pinned}


def release_of(doc: Mapping[str, Any], default_revision: str) -> Release:
    """The release a document was read from (a local copy has no commit)."""
    return opened_release(str(doc[DATASET_KEY]), str(doc[REVISION_KEY] or default_revision))


@cache
def opened_release(dataset: str, revision: str) -> Release:
    """Each release opened once a process: the hub's commit is resolved once."""
    return open_release(dataset, revision)
