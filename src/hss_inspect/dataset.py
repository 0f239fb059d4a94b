"""Selecting HSS rows and turning them into Inspect samples."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from inspect_ai.dataset import MemoryDataset, Sample

from hss_inspect.release import Release
from hss_inspect.rows import TaskRow
from hss_inspect.taxonomy import MEDIA_TYPES, resolve_domain, resolve_subdomain

OptionList = str | Sequence[str] | None


def as_list(value: OptionList) -> list[str]:
    """A -T option given as one string, a comma list (YAML turns it into a list) or a list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(part).strip() for part in value if str(part).strip()]


def select_rows(
    rows: Sequence[TaskRow],
    media: str = "all",
    domains: OptionList = None,
    subdomains: OptionList = None,
) -> list[TaskRow]:
    """The rows a run evaluates, in release order."""
    media = media.strip().lower()
    if media not in ("all", *MEDIA_TYPES):
        raise ValueError(f"media must be all, image or video, not {media!r}")
    wanted_domains = {resolve_domain(d) for d in as_list(domains)}
    wanted_subdomains = {resolve_subdomain(s) for s in as_list(subdomains)}
    return [
        row
        for row in rows
        if (media == "all" or row.media_type == media)
        and (not wanted_domains or row.domain in wanted_domains)
        and (not wanted_subdomains or row.subdomain in wanted_subdomains)
    ]


def row_to_sample(row: TaskRow) -> Sample:
    return Sample(
        id=row.task_id,
        input=row.prompt,
        target=row.golden_response,
        metadata={
            "task_id": row.task_id,
            "media_type": row.media_type,
            "domain": row.domain,
            "subdomain": row.subdomain,
            "media_path": row.media_path,
            "prompt": row.prompt,
            "golden_response": row.golden_response,
            "criteria": [asdict(c) for c in row.criteria],
            "rubric_sha256": row.rubric_sha256,
        },
    )


def build_dataset(release: Release, rows: Sequence[TaskRow]) -> MemoryDataset:
    if not rows:
        raise ValueError(
            f"no HSS tasks in {release.description} match the chosen media, domains and "
            "subdomains; loosen the filters"
        )
    return MemoryDataset(
        [row_to_sample(row) for row in rows],
        name="HSS",
        location=release.description,
    )
