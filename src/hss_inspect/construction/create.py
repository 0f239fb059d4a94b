"""A new build (its pool scanned, its people given their links, its media prepared ahead) and
tasks authored elsewhere brought into one, each on its pool item, entering review as
authored."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from hss_inspect.construction import store
from hss_inspect.construction.authoring import SETTING as TAXONOMY
from hss_inspect.construction.authoring import build_taxonomy
from hss_inspect.construction.canary import SETTING as CANARY
from hss_inspect.construction.canary import new_canary
from hss_inspect.construction.deal import check_enough_reviewers
from hss_inspect.construction.pool import (
    PoolItem,
    PoolScan,
    media_type_of,
    scan_pool,
    unreadable,
)
from hss_inspect.construction.rules import rules
from hss_inspect.construction.text_repeats import flag_repeated_text
from hss_inspect.core.errors import InputError
from hss_inspect.core.names import unknown_text
from hss_inspect.core.options import option_values
from hss_inspect.core.settings import MediaSettings
from hss_inspect.core.taxonomy import Taxonomy
from hss_inspect.core.user_files import parse_yaml_or_json, read_text
from hss_inspect.data.rows import DatasetError, TaskRow, error_summary, read_rows

# Where `hss-inspect build serve` listens unless told otherwise (beside a study's 8765).
DEFAULT_PORT = 8766


def new_build(
    path: Path,
    pool: Path,
    authors: Sequence[str],
    reviewers: Sequence[str],
    seed: int,
    view: str,
    media: MediaSettings,
    prefix: str,
    blind_answers: bool = False,
    taxonomy: Taxonomy | None = None,
) -> tuple[dict[store.Person, str], PoolScan]:
    """Write the build; each person's token per role, and what the pool held. With
    `blind_answers`, each review round opens with the media and the question alone and
    stores the reviewer's own answer before the reveal (`blind`); with `taxonomy`, the
    tasks are written in a lab's own domains and subdomains, not the paper's."""
    if not pool.is_dir():
        raise InputError(f"--pool {pool}: no such folder; give the folder of images and clips")
    check_enough_reviewers(reviewers, authors, rules().rounds)
    scan = scan_pool(pool)
    if not scan.items:
        raise InputError(
            f"--pool {pool}: no image or clip found (or none opens); the pool holds files "
            "such as .jpg, .png, .webp, .mp4, .mov, .webm"
        )
    settings: dict[str, Any] = {
        "pool": str(pool.resolve()),
        "seed": seed,
        "view": view,
        "media": option_values(media),
        "prefix": prefix,
        "rounds": rules().rounds,
        "blind_answers": blind_answers,
        "created": datetime.now(tz=timezone.utc).isoformat(timespec="seconds"),
        CANARY: new_canary(),  # the release's mark for finding it in a training corpus
        **({} if taxonomy is None else {TAXONOMY: taxonomy.record()}),
    }
    tokens = store.create_build(path, settings, scan.items, authors, reviewers)
    return tokens, scan


def read_taxonomy(path: Path) -> Taxonomy:
    """A lab's own taxonomy from its YAML (or JSON) file; one line naming the file and what
    is wrong with it otherwise."""
    where = f"--taxonomy {path}"
    if not path.is_file():
        raise InputError(f"{where}: no such file; give a YAML file of domains and subdomains")
    data = parse_yaml_or_json(read_text(path, where), where, "fix it")
    try:
        return Taxonomy.from_record(data)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None


def prepare_pool_media(
    pool: Path, items: Sequence[PoolItem], view: str, media: MediaSettings, jobs: int
) -> str:
    """What the pages will show, prepared ahead (`web.media.prepare_shown`)."""
    from hss_inspect.web.media import Shown, prepare_shown  # loads Inspect: not for `import`

    shown = [Shown(item.item_id, item.media_type, item.path) for item in items]
    # a module function, not a lambda: the frames view sends it to worker processes
    return prepare_shown(shown, partial(pool_file, pool), view, media, jobs)


def pool_file(pool: Path, media_path: str, item_id: str) -> Path:
    return pool / media_path


def import_tasks(path: Path, tasks_file: Path, author: str, now: float) -> list[str]:
    """The rows of `tasks_file` (the release's format; `media_path` naming a pool file) as
    tasks of `author`, submitted to round 1; their ids in the build."""
    authors = store.names_of(path, "author")
    if author not in authors:
        what = "an author of the build (--author)"
        raise InputError(unknown_text(author, what, authors, f"its authors: {', '.join(authors)}"))
    reviewers = store.names_of(path, "reviewer")
    check_enough_reviewers(reviewers, [author], rules().rounds)
    if not tasks_file.is_file():
        raise InputError(f"{tasks_file}: no such file; give a JSONL file of tasks")
    settings = store.settings_of(path)
    taxonomy = build_taxonomy(settings)
    rows = read_tasks(tasks_file, store.pool_items(path), Path(settings["pool"]), taxonomy)
    created = store.import_rows(path, [row for row, _ in rows], [i for _, i in rows], author, now)
    flag_repeated_text(path, created)
    return created


def read_tasks(
    tasks_file: Path,
    pool_items: Sequence[tuple[PoolItem, Any, Any]],
    pool: Path,
    taxonomy: Taxonomy,
) -> list[tuple[TaskRow, str]]:
    """Each row of the file with the id of the pool item it names; else one error listing
    every bad row of the whole file (as the dataset loader does), each with all its
    problems (its domain and subdomain not a pair of the build's `taxonomy`, its media not
    the pool's), so one fix does for all."""
    with tasks_file.open(encoding="utf-8") as handle:
        numbered, errors = read_rows(handle, str(tasks_file))
    index = PoolIndex.of(item for item, _, _ in pool_items)
    found: list[tuple[TaskRow, str]] = []
    faults = list(errors)
    for number, row in numbered:
        item, why = pool_item_of(row, index, pool)
        problems = [p for p in (taxonomy.fault(row.domain, row.subdomain), why) if p]
        if item is None or problems:
            said = "; ".join(problems)
            faults.append((number, f"{tasks_file} line {number}: task {row.task_id}: {said}"))
        else:
            found.append((row, item.item_id))
    if faults:
        listed = [fault for _, fault in sorted(faults)]
        remedy = "nothing is imported until every row is good"
        raise DatasetError(error_summary(listed, str(tasks_file), remedy))
    if not found:
        raise InputError(f"{tasks_file}: no rows; give a JSONL file of tasks")
    return found


@dataclass(frozen=True)
class PoolIndex:
    """The pool's items by path and by file name: a row finds its item in constant time,
    so an import's cost grows with its rows, not with the pool."""

    by_path: dict[str, PoolItem]
    by_name: dict[str, list[PoolItem]]

    @classmethod
    def of(cls, items: Iterable[PoolItem]) -> PoolIndex:
        by_path: dict[str, PoolItem] = {}
        by_name: dict[str, list[PoolItem]] = {}
        for item in items:
            by_path[item.path] = item
            by_name.setdefault(PurePosixPath(item.path).name, []).append(item)
        return cls(by_path, by_name)


def pool_item_of(row: TaskRow, index: PoolIndex, pool: Path) -> tuple[PoolItem | None, str]:
    """The pool item a row names: by its path in the pool (with or without a leading
    `media/`), else by its file name when one item alone has it; else None and why."""
    wanted = PurePosixPath(row.media_path)
    candidates = [str(wanted)]
    if wanted.parts and wanted.parts[0] == "media":
        candidates.append(str(PurePosixPath(*wanted.parts[1:])))
    found = [index.by_path[c] for c in dict.fromkeys(candidates) if c in index.by_path]
    if not found:
        found = index.by_name.get(wanted.name, [])
    if len(found) != 1:
        skipped = next((why for c in candidates if (why := skipped_why(pool, c))), "")
        if skipped:
            return None, (
                f"media_path {row.media_path!r} is in the pool folder, but the build skipped it "
                f"when it was made: {skipped}"
            )
        how = "no file" if not found else f"{len(found)} files"
        return None, (
            f"media_path {row.media_path!r} names {how} of the pool; give the file's path "
            "inside the pool folder"
        )
    if found[0].media_type != row.media_type:
        return None, (
            f"{found[0].path} is a {found[0].media_type} file, but the row says media_type "
            f"{row.media_type}"
        )
    return found[0], ""


def skipped_why(pool: Path, relative: str) -> str:
    """Why a file in the pool folder is not in the build's pool ('' if there is no such
    file): not media by its suffix, hidden, or it does not open."""
    path = pool / relative
    if not path.is_file():
        return ""
    kind = media_type_of(path)
    if kind is None:
        return f"not an image or clip by its suffix ({path.suffix or 'none'})"
    if any(part.startswith(".") for part in PurePosixPath(relative).parts):
        return "a hidden file"
    return unreadable(path, kind) or "it opens now: it was added or mended after the build was made"
