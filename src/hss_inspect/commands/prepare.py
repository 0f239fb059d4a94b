"""`hss-inspect prepare`: fetch the selected media and fill the cache before a run.

One job per media file (a clip with all its frame budgets, decoded once for all of them,
or an image), run in worker processes, each under the media time limit. Finished
entries stay in the cache, so an interrupted run resumes where it stopped; a second run
over the same selection only reads the cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TextIO

from hss_inspect.core.options import FRAME_OPTIONS, SELECTION_OPTIONS, add_flags, frame_settings
from hss_inspect.core.settings import FrameSettings
from hss_inspect.data.release import Release, open_release
from hss_inspect.data.rows import TaskRow, select_rows
from hss_inspect.media.errors import Deadline
from hss_inspect.media.store import (
    cache_root,
    cached_prepare_image,
    cached_sample_videos,
    remembered_sha256,
)


@dataclass(frozen=True)
class PrepareJob:
    task_id: str
    media_type: str
    media_path: str
    frame_settings: tuple[FrameSettings, ...]
    image_max_side: int
    image_max_bytes: int
    time_limit: float | None = None


@dataclass(frozen=True)
class PrepareResult:
    task_id: str
    media_path: str
    media_type: str
    frames: int = 0
    bytes: int = 0
    error: str | None = None


@dataclass
class PrepareSummary:
    clips: int = 0
    images: int = 0
    frames: int = 0
    bytes: int = 0
    seconds: float = 0.0
    failures: list[PrepareResult] = field(default_factory=list)

    def add(self, result: PrepareResult) -> None:
        if result.error is not None:
            self.failures.append(result)
            return
        if result.media_type == "video":
            self.clips += 1
        else:
            self.images += 1
        self.frames += result.frames
        self.bytes += result.bytes

    def lines(self) -> list[str]:
        lines = [
            f"prepared {self.clips} clip(s) ({self.frames} frames) and {self.images} image(s): "
            f"{self.bytes / 1e6:.1f} MB in {self.seconds:.1f} s; {len(self.failures)} failure(s)"
        ]
        lines += [f"  FAILED {f.task_id} ({f.media_path}): {f.error}" for f in self.failures]
        return lines


def jobs_for(
    rows: Iterable[TaskRow],
    frame_settings: Sequence[FrameSettings],
    image_max_side: int,
    image_max_bytes: int,
    time_limit: float | None = None,
) -> list[PrepareJob]:
    """One job per distinct media file of the selected rows."""
    jobs: dict[str, PrepareJob] = {}
    for row in rows:
        jobs.setdefault(
            row.media_path,
            PrepareJob(
                row.task_id,
                row.media_type,
                row.media_path,
                tuple(frame_settings),
                image_max_side,
                image_max_bytes,
                time_limit,
            ),
        )
    return list(jobs.values())


def run_job(release: Release, job: PrepareJob) -> PrepareResult:
    """Fetch one media file and fill the cache for it; errors become part of the result."""
    try:
        path = release.media_file(job.media_path, job.task_id)
        deadline = Deadline(job.time_limit)  # after the download: it limits preparation
        if job.media_type == "image":
            image = cached_prepare_image(
                path, job.image_max_side, job.image_max_bytes, deadline=deadline
            )
            return PrepareResult(job.task_id, job.media_path, "image", 0, len(image.data))
        digest = remembered_sha256(path)
        videos = cached_sample_videos(path, job.frame_settings, digest, deadline=deadline)
        frames = sum(len(video.jpegs) for video in videos)
        total = sum(len(j) for video in videos for j in video.jpegs)
        return PrepareResult(job.task_id, job.media_path, "video", frames, total)
    except Exception as exc:  # one bad file must not stop the others; it is reported
        return PrepareResult(job.task_id, job.media_path, job.media_type, error=str(exc))


def prepare_all(
    release: Release, jobs: Sequence[PrepareJob], workers: int, out: TextIO | None = None
) -> PrepareSummary:
    summary = PrepareSummary()
    started = time.perf_counter()
    # sys.stderr read at call time: a test or caller may have replaced it since import
    progress = _Progress(len(jobs), out or sys.stderr)
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:
        futures: list[Future[PrepareResult]] = [pool.submit(run_job, release, j) for j in jobs]
        for future in as_completed(futures):
            summary.add(future.result())
            summary.seconds = time.perf_counter() - started
            progress.update(summary)
    progress.finish()
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


PREPARE_OPTIONS = (
    *SELECTION_OPTIONS,
    *FRAME_OPTIONS,
    "image_max_side",
    "image_max_bytes",
    "media_timeout",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # several frame caps prepare a frame-budget sweep in one decode per clip
    add_flags(parser, PREPARE_OPTIONS, many=("max_frames",))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")


def run(args: argparse.Namespace) -> int:
    budgets = [frame_settings(vars(args), max_frames=cap) for cap in args.max_frames]
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    jobs = jobs_for(rows, budgets, args.image_max_side, args.image_max_bytes, args.media_timeout)
    print(f"preparing {len(jobs)} media file(s) from {release.description} into {cache_root()}")
    summary = prepare_all(release, jobs, args.jobs)
    print("\n".join(summary.lines()))
    return 1 if summary.failures else 0
