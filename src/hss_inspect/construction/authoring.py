"""What an author writes for one pool item (Sec. 2.4, step 2 and 3): the subdomain (its
domain follows from the build's taxonomy), the question, the reference answer and the
rubric, one criterion a line; and the rules a draft meets before it goes to review, which
are the release's own rules for a row (`data.rows.parse_row`) and a few limits of length.

The taxonomy is the paper's (Sec. 2.4: 4 domains, 11 subdomains) unless the build was made
with a lab's own (`build new --taxonomy FILE`, stored as the build setting `taxonomy`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hss_inspect.core.taxonomy import PAPER, Taxonomy
from hss_inspect.data.rows import (
    Criterion,
    DatasetError,
    TaskRow,
    criterion_records,
    parse_row,
)

# Lengths past which a text is refused (kept in the form, never cut).
MAX_QUESTION_CHARS = 4_000
MAX_REFERENCE_CHARS = 8_000
MAX_CRITERION_CHARS = 1_000
MAX_CRITERIA = 20
# The build setting holding a lab's own taxonomy (absent: the paper's).
SETTING = "taxonomy"


def build_taxonomy(settings: Mapping[str, Any]) -> Taxonomy:
    """The taxonomy a build's tasks are written in."""
    stored = settings.get(SETTING)
    return PAPER if stored is None else Taxonomy.from_record(stored)


@dataclass(frozen=True)
class Draft:
    """An authored task as the form holds it; any field may still be empty in a draft."""

    subdomain: str = ""
    prompt: str = ""
    reference: str = ""
    criteria: tuple[Criterion, ...] = ()

    @property
    def titles(self) -> tuple[str, ...]:
        return tuple(c.title for c in self.criteria)


def criteria_lines(text: str) -> tuple[str, ...]:
    """The rubric as typed: one criterion a non-empty line, spaces trimmed."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def rubric(lines: tuple[str, ...], previous: tuple[Criterion, ...] = ()) -> tuple[Criterion, ...]:
    """The criteria of the lines written: a line the previous revision had keeps its id and
    weight (a rubric imported with its own ids stays comparable across revisions); a new
    line takes the next free id c1, c2, ..."""
    kept = {c.title: c for c in previous}
    taken = {c.id for c in previous}
    criteria = []
    fresh = 0
    for title in lines:
        if title in kept:
            criteria.append(kept.pop(title))
            continue
        fresh += 1
        while f"c{fresh}" in taken:
            fresh += 1
        taken.add(f"c{fresh}")
        criteria.append(Criterion(f"c{fresh}", title))
    return tuple(criteria)


def length_problems(draft: Draft, taxonomy: Taxonomy) -> list[str]:
    """What is too long (or not of the build's taxonomy), even for a draft to be saved."""
    problems = []
    for what, text, limit in (
        ("The question", draft.prompt, MAX_QUESTION_CHARS),
        ("The reference answer", draft.reference, MAX_REFERENCE_CHARS),
    ):
        if len(text) > limit:
            problems.append(f"{what} is {len(text):,} characters long; the limit is {limit:,}.")
    if len(draft.criteria) > MAX_CRITERIA:
        problems.append(f"{len(draft.criteria)} criteria; the limit is {MAX_CRITERIA}.")
    for n, title in enumerate(draft.titles, start=1):
        if len(title) > MAX_CRITERION_CHARS:
            problems.append(f"Criterion {n} is longer than {MAX_CRITERION_CHARS:,} characters.")
    if draft.subdomain and not taxonomy.domain_of(draft.subdomain):
        problems.append(f"{draft.subdomain!r} is not a subdomain of the taxonomy.")
    return problems


def submit_problems(draft: Draft, taxonomy: Taxonomy) -> list[str]:
    """Why the draft cannot go to review yet (none: it can)."""
    problems = length_problems(draft, taxonomy)
    for what, value in (
        ("a subdomain", draft.subdomain),
        ("the question", draft.prompt.strip()),
        ("the reference answer", draft.reference.strip()),
    ):
        if not value:
            problems.append(f"Give {what}.")
    if not draft.criteria:
        problems.append("Give at least one criterion (one a line).")
    repeated = sorted({t for t in draft.titles if draft.titles.count(t) > 1})
    if repeated:
        problems.append(f"Criterion written twice: {repeated[0]!r}.")
    return problems


def draft_row(
    task_id: str, media_type: str, media_path: str, draft: Draft, taxonomy: Taxonomy
) -> TaskRow:
    """The draft as a row of the release, by the release's own rules, its domain the one
    its subdomain has in the build's taxonomy."""
    try:
        return parse_row(
            {
                "task_id": task_id,
                "domain": taxonomy.domain_of(draft.subdomain),
                "subdomain": draft.subdomain,
                "media_type": media_type,
                "media_path": media_path,
                "prompt": draft.prompt.strip(),
                "golden_response": draft.reference.strip(),
                "rubric_criteria": criterion_records(draft.criteria),
            }
        )
    except DatasetError as exc:
        raise DatasetError(f"task {task_id}: {exc}") from None
