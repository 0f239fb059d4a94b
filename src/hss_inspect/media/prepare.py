"""Media prepared ahead of a run (`hss-inspect prepare`): one job per media file (a clip
with all its frame budgets, decoded once for all of them, or an image), run in worker
processes, each under the media time limit. Finished entries stay in the cache, so an
interrupted run resumes where it stopped; a second run over the same selection only reads
the cache. No worker outlives the run, however it ends (`workers`).

A job may carry more work on its file once it is prepared (`then`: the user turns a named
model is sent, built by `conditions.prepared_turns`), run in the same worker.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TextIO

from hss_inspect.core.options import spell
from hss_inspect.core.settings import MediaSettings
from hss_inspect.media.activity import activity
from hss_inspect.media.cache_folder import report_storage_problems_quietly, storage_problem
from hss_inspect.media.errors import Deadline, MediaError, MediaTimeout
from hss_inspect.media.facts import remembered_sha256
from hss_inspect.media.frame_cache import cached_sample_videos
from hss_inspect.media.image_cache import cached_prepare_image
from hss_inspect.media.workers import completed, worker_pool

# Fetches a media file (its path in the release, the task naming it) and returns where it is.
Fetch = Callable[[str, str], Path]


class MediaRow(Protocol):
    """What a job needs of a dataset row."""

    @property
    def task_id(self) -> str: ...
    @property
    def media_type(self) -> str: ...
    @property
    def media_path(self) -> str: ...


@dataclass(frozen=True)
class PrepareJob:
    """One media file under the task's media settings (one per frame budget), and the work
    to do on it once prepared (`then`, returning how many user turns it built)."""

    task_id: str
    media_type: str
    media_path: str
    media: tuple[MediaSettings, ...]
    then: Callable[[], int] | None = None


@dataclass(frozen=True)
class PrepareResult:
    task_id: str
    media_path: str
    media_type: str
    frames: int = 0
    bytes: int = 0
    error: str | None = None
    turns: int = 0  # the named models' user turns built (their media read or prepared)
    not_stored: str | None = None  # why the cache could not store what was prepared


@dataclass
class PrepareSummary:
    """The results so far, and the seconds they took; every count is derived from them."""

    results: list[PrepareResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def done(self) -> list[PrepareResult]:
        return [r for r in self.results if r.error is None]

    @property
    def failures(self) -> list[PrepareResult]:
        return [r for r in self.results if r.error is not None]

    @property
    def not_stored(self) -> list[PrepareResult]:
        return [r for r in self.results if r.not_stored is not None]

    @property
    def clips(self) -> int:
        return sum(r.media_type == "video" for r in self.done)

    @property
    def frames(self) -> int:
        return sum(r.frames for r in self.done)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.done)

    def lines(self) -> list[str]:
        turns = sum(r.turns for r in self.done)
        models = f", {turns} model turn(s)" if turns else ""
        images = len(self.done) - self.clips
        lines = [
            f"prepared {self.clips} clip(s) ({self.frames} frames) and {images} image(s)"
            f"{models}: {self.bytes / 1e6:.1f} MB in {self.seconds:.1f} s; "
            f"{len(self.failures)} failure(s)"
        ]
        if self.not_stored:
            lines.append(
                f"  NOT STORED: the cache could not keep the media of {len(self.not_stored)} "
                "file(s); the run prepares them again"
            )
        lines += [f"  FAILED {f.task_id} ({f.media_path}): {f.error}" for f in self.failures]
        return lines


def jobs_for(rows: Iterable[MediaRow], media: Sequence[MediaSettings]) -> list[PrepareJob]:
    """One job per distinct media file of the rows, named by the first task showing it."""
    jobs: dict[str, PrepareJob] = {}
    for row in rows:
        jobs.setdefault(
            row.media_path, PrepareJob(row.task_id, row.media_type, row.media_path, tuple(media))
        )
    return list(jobs.values())


def run_job(fetch: Fetch, job: PrepareJob) -> PrepareResult:
    """Fetch one media file and fill the cache for it; errors become part of the result."""
    before = activity()
    try:
        result = _prepare(fetch, job)
    except Exception as exc:  # one bad file must not stop the others; it is reported
        error = failure_text(exc)
        result = PrepareResult(job.task_id, job.media_path, job.media_type, error=error)
    problem = storage_problem()
    if problem is None or not activity().since(before).not_stored:
        return result
    return replace(result, not_stored=problem.warning())


def failure_text(exc: Exception) -> str:
    """Why a file could not be prepared, and what to do about it here."""
    if isinstance(exc, MediaTimeout):
        return f"{exc}; raise the limit ({spell('media_timeout', 'SECONDS')})"
    if isinstance(exc, MediaError):
        return f"{exc}; {exc.remedy}"
    return str(exc)


def _prepare(fetch: Fetch, job: PrepareJob) -> PrepareResult:
    path = fetch(job.media_path, job.task_id)
    first = job.media[0]
    deadline = Deadline(first.media_timeout)  # after the download: it limits preparation
    if job.media_type == "image":
        image = cached_prepare_image(
            path, first.image_max_side, first.image_max_bytes, deadline=deadline
        )
        frames, total = 0, len(image.data)
    else:
        digest = remembered_sha256(path)
        sweep = [media.frames for media in job.media]
        videos = cached_sample_videos(path, sweep, digest, deadline=deadline)
        frames = sum(len(video.jpegs) for video in videos)
        total = sum(sum(video.frame_sizes) for video in videos)
    turns = job.then() if job.then is not None else 0
    return PrepareResult(job.task_id, job.media_path, job.media_type, frames, total, turns=turns)


def prepare_all(
    fetch: Fetch, jobs: Sequence[PrepareJob], workers: int, out: TextIO | None = None
) -> PrepareSummary:
    summary = PrepareSummary()
    started = time.perf_counter()
    # sys.stderr read at call time: a test or caller may have replaced it since import
    progress = _Progress(len(jobs), out or sys.stderr)
    # Workers record a cache that cannot store without warning; this process warns once.
    # Stopped (SIGINT, SIGTERM) or failing, the pool kills its workers on the way out.
    with worker_pool(workers, report_storage_problems_quietly) as pool:
        try:
            futures: list[Future[PrepareResult]] = [pool.submit(run_job, fetch, j) for j in jobs]
            for future in completed(futures):
                summary.results.append(future.result())
                summary.seconds = time.perf_counter() - started
                progress.update(summary)
        finally:
            progress.finish()  # a line stopped midway still ends before the next one
    summary.seconds = time.perf_counter() - started
    return summary


class _Progress:
    """A one-line progress bar on a terminal, a line every tenth of the work elsewhere."""

    WIDTH = 30

    def __init__(self, total: int, out: TextIO) -> None:
        self.total, self.out, self.done = total, out, 0
        self.interactive = out.isatty()

    def update(self, summary: PrepareSummary) -> None:
        self.done += 1
        filled = self.WIDTH * self.done // max(1, self.total)
        line = (
            f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} "
            f"{summary.frames} frames {summary.bytes / 1e6:.1f} MB "
            f"{summary.seconds:.0f} s {len(summary.failures)} failed"
        )
        if self.interactive:
            self.out.write("\r" + line)
        elif self.done == self.total or self.done % max(1, self.total // 10) == 0:
            self.out.write(line + "\n")
        self.out.flush()

    def finish(self) -> None:
        if self.interactive:
            self.out.write("\n")
