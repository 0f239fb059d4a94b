"""Where the HSS release lives: a hub dataset repo at a resolved commit, or a local copy.

Rows come first; each media file is fetched only when its sample runs, so a filtered
or image-only run never downloads the clips it does not use (the task's fingerprints take
what the hub says of each file's content, with no download).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hss_inspect.core.options import spell
from hss_inspect.data import hub
from hss_inspect.data.demo import DEMO_DATASET, demo_root
from hss_inspect.data.fingerprints import TaskPrint, release_prints
from hss_inspect.data.rows import DatasetError, TaskRow, parse_rows

logger = logging.getLogger(__name__)

ROWS_FILE = "data/test.jsonl"
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_warned_unpinned: set[tuple[str, str]] = set()

# The content hash of a media file (the caller's: the media room remembers it in the cache).
HashFile = Callable[[Path], str]


class Release(Protocol):
    """A readable copy of the benchmark."""

    @property
    def description(self) -> str: ...

    @property
    def revision(self) -> str | None: ...

    @property
    def dataset(self) -> str:
        """What `-T dataset=` (or `--dataset`) opens this copy as."""
        ...

    def read_rows(self) -> list[TaskRow]: ...

    def media_file(self, media_path: str, task_id: str) -> Path: ...

    def media_digests(self, paths: Sequence[str], hash_file: HashFile) -> dict[str, str | None]:
        """Each media file's content id (its sha256, or a hub's git blob id marked `git-`),
        None where it cannot be known here and now."""
        ...


def fingerprints_of(
    release: Release, rows: Iterable[TaskRow], hash_file: HashFile
) -> dict[str, TaskPrint]:
    """Each row's fingerprint (`data.fingerprints`), its media hashed as the release allows."""
    rows = list(rows)
    return release_prints(rows, release.media_digests([r.media_path for r in rows], hash_file))


@dataclass(frozen=True)
class LocalRelease:
    rows_file: Path
    root: Path

    @property
    def description(self) -> str:
        return str(self.rows_file)

    @property
    def revision(self) -> str | None:
        return None

    @property
    def dataset(self) -> str:
        return str(self.rows_file)

    def read_rows(self) -> list[TaskRow]:
        try:
            with self.rows_file.open(encoding="utf-8") as handle:
                return parse_rows(handle, str(self.rows_file))
        except UnicodeDecodeError:
            raise DatasetError(
                f"{self.rows_file}: not a text file (not UTF-8); give HSS's rows, one JSON "
                "object a line (data/test.jsonl)"
            ) from None

    def media_file(self, media_path: str, task_id: str) -> Path:
        path = self.root / media_path
        if not path.is_file():
            raise FileNotFoundError(
                f"task {task_id}: media file {path} does not exist; the local copy at "
                f"{self.root} is incomplete (download it again, or check media_path)"
            )
        return path

    def media_digests(self, paths: Sequence[str], hash_file: HashFile) -> dict[str, str | None]:
        files = {path: self.root / path for path in paths}
        return {path: hash_file(file) if file.is_file() else None for path, file in files.items()}


@dataclass(frozen=True)
class HubRelease:
    repo_id: str
    requested: str
    commit: str

    @property
    def description(self) -> str:
        return f"hf://datasets/{self.repo_id}@{self.commit}"

    @property
    def revision(self) -> str | None:
        return self.commit

    @property
    def dataset(self) -> str:
        return self.repo_id

    def read_rows(self) -> list[TaskRow]:
        path = hub.download(self.repo_id, ROWS_FILE, self.commit)
        with path.open(encoding="utf-8") as handle:
            return parse_rows(handle, f"{self.description}/{ROWS_FILE}")

    def media_file(self, media_path: str, task_id: str) -> Path:
        try:
            return hub.download(self.repo_id, media_path, self.commit)
        except Exception as exc:
            raise FileNotFoundError(
                f"task {task_id}: cannot fetch {media_path} from {self.description} ({exc}); "
                "check the network or HF_TOKEN, or run once online to fill the cache "
                "before using HF_HUB_OFFLINE=1"
            ) from exc

    def media_digests(self, paths: Sequence[str], hash_file: HashFile) -> dict[str, str | None]:
        """What the hub says of each file's content, with no download: the sha256 of a large
        (LFS) file, the git blob id of one it keeps in git; offline, or with the hub out of
        reach, the files in the local cache are hashed and the others are unknown."""
        listed = hub.content_ids(self.repo_id, paths, self.commit)
        if listed is not None:
            return {path: listed.get(path) for path in paths}
        found: dict[str, str | None] = {}
        for path in paths:
            file = hub.cached(self.repo_id, path, self.commit)
            found[path] = None if file is None else hash_file(file)
        return found


def open_release(dataset: str, revision: str) -> Release:
    """The release named by `-T dataset=`: `demo`, a JSONL file, a local folder, or a hub id.

    `demo` always means the demo set shipped in the package; a folder of that name is
    reached as `./demo`.
    """
    if dataset == DEMO_DATASET:
        return LocalRelease((demo_root() / ROWS_FILE).resolve(), demo_root().resolve())
    local = Path(dataset).expanduser()
    if local.is_file():
        root = local.parent.parent if local.parent.name == "data" else local.parent
        return LocalRelease(local.resolve(), root.resolve())
    if local.is_dir():
        rows_file = local / ROWS_FILE
        if not rows_file.is_file():
            raise DatasetError(
                f"{local}: a local copy of HSS must hold {ROWS_FILE} and the media it names"
            )
        return LocalRelease(rows_file.resolve(), local.resolve())
    if dataset.count("/") != 1 or dataset.startswith((".", "/", "~")):
        raise DatasetError(
            f"dataset {dataset!r} is neither an existing file or folder nor a hub id like "
            "ScaleAI/HSS"
        )
    commit = resolve_commit(dataset, revision)
    return HubRelease(dataset, revision, commit)


def resolve_commit(repo_id: str, revision: str) -> str:
    """The commit a branch, tag or commit names; says once when the run is not pinned.

    Fetching the rows file at `revision` records the branch-to-commit mapping in the
    Hugging Face cache, which is what lets a later HF_HUB_OFFLINE=1 run resolve it.
    """
    rows_path = hub.download_checked(repo_id, ROWS_FILE, revision)
    # The cache lays files out as .../snapshots/<commit>/data/test.jsonl.
    commit = rows_path.parent.parent.name
    if not _COMMIT.match(commit):
        from huggingface_hub import HfApi

        commit = HfApi().dataset_info(repo_id, revision=revision).sha or ""
    if not _COMMIT.match(commit):
        raise DatasetError(f"{repo_id}@{revision}: the hub returned no commit id ({commit!r})")
    if revision != commit and (repo_id, revision) not in _warned_unpinned:
        _warned_unpinned.add((repo_id, revision))
        logger.warning(
            "%s: revision %r is not pinned; it resolved to commit %s. Pass %s "
            "to evaluate exactly these rows and media again.",
            repo_id,
            revision,
            commit,
            spell("revision", commit),
        )
    return commit
