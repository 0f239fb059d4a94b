"""`hss-inspect prepare`: fetch the selected media and fill the cache before a run.

One job per media file (a clip with all its frame budgets, decoded once for all of them,
or an image), run in worker processes, each under the media time limit. Finished
entries stay in the cache, so an interrupted run resumes where it stopped; a second run
over the same selection only reads the cache.

Every model whose limits leave the frames as they are reads those entries. For a model
whose limits or context window thin or shrink them, `--model` (repeatable), or `--recipe`
for every run of a recipe, also builds each sample's user turn for that model, exactly as
the run builds it (`conditions.turn.user_turn_for`, the token budget found as the run
finds it): a thinned set is taken from the clip's entry without decoding, a shrunk one
is decoded and stored.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from hss_inspect.commands.arguments import named_pairs
from hss_inspect.core.options import (
    FRAME_OPTIONS,
    MEDIA_OPTIONS,
    SELECTION_OPTIONS,
    add_flags,
    add_model_server_flags,
    check,
    media_settings,
)
from hss_inspect.core.settings import MediaSettings
from hss_inspect.data.release import Release, open_release
from hss_inspect.data.rows import TaskRow, select_rows
from hss_inspect.media.activity import activity
from hss_inspect.media.cache_folder import (
    check_cache_folder,
    report_storage_problems_quietly,
    storage_problem,
)
from hss_inspect.media.errors import Deadline
from hss_inspect.media.facts import remembered_sha256
from hss_inspect.media.frame_cache import cached_sample_videos
from hss_inspect.media.image_cache import cached_prepare_image
from hss_inspect.providers.fit import TokenBudget
from hss_inspect.recipes.plans import RECIPES, plan_recipe


@dataclass(frozen=True)
class ModelTarget:
    """A run the media are prepared for: its model, the token budget found as the run
    finds it, and the run's media settings."""

    name: str
    budget: TokenBudget
    media: MediaSettings


@dataclass(frozen=True)
class PrepareJob:
    """One media file, under the task's media settings (one per frame budget), and for
    each named model the user turns of the samples that show it."""

    task_id: str
    media_type: str
    media_path: str
    media: tuple[MediaSettings, ...]
    samples: tuple[dict[str, Any], ...] = ()
    models: tuple[ModelTarget, ...] = ()


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
    clips: int = 0
    images: int = 0
    frames: int = 0
    bytes: int = 0
    turns: int = 0
    seconds: float = 0.0
    failures: list[PrepareResult] = field(default_factory=list)
    not_stored: list[PrepareResult] = field(default_factory=list)

    def add(self, result: PrepareResult) -> None:
        if result.not_stored is not None:
            self.not_stored.append(result)
        if result.error is not None:
            self.failures.append(result)
            return
        if result.media_type == "video":
            self.clips += 1
        else:
            self.images += 1
        self.frames += result.frames
        self.bytes += result.bytes
        self.turns += result.turns

    def lines(self) -> list[str]:
        models = f", {self.turns} model turn(s)" if self.turns else ""
        lines = [
            f"prepared {self.clips} clip(s) ({self.frames} frames) and {self.images} image(s)"
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


def jobs_for(
    rows: Iterable[TaskRow],
    media: Sequence[MediaSettings],
    models: Sequence[ModelTarget] = (),
) -> list[PrepareJob]:
    """One job per distinct media file of the selected rows."""
    jobs: dict[str, PrepareJob] = {}
    samples: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        jobs.setdefault(
            row.media_path,
            PrepareJob(row.task_id, row.media_type, row.media_path, tuple(media)),
        )
        samples.setdefault(row.media_path, []).append(row.sample_metadata())
    return [
        PrepareJob(
            job.task_id,
            job.media_type,
            job.media_path,
            job.media,
            tuple(samples[path]) if models else (),
            tuple(models),
        )
        for path, job in jobs.items()
    ]


def run_job(release: Release, job: PrepareJob) -> PrepareResult:
    """Fetch one media file and fill the cache for it; errors become part of the result."""
    before = activity()
    try:
        result = _prepare(release, job)
    except Exception as exc:  # one bad file must not stop the others; it is reported
        result = PrepareResult(job.task_id, job.media_path, job.media_type, error=str(exc))
    problem = storage_problem()
    if problem is None or not activity().since(before).not_stored:
        return result
    return replace(result, not_stored=problem.warning())


def _prepare(release: Release, job: PrepareJob) -> PrepareResult:
    path = release.media_file(job.media_path, job.task_id)
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
        total = sum(len(j) for video in videos for j in video.jpegs)
    turns = asyncio.run(_model_turns(release, job)) if job.models else 0
    return PrepareResult(job.task_id, job.media_path, job.media_type, frames, total, turns=turns)


class ForModel(Exception):
    """A file that could not be prepared for one of the named models (the model named)."""


async def _model_turns(release: Release, job: PrepareJob) -> int:
    """Build each sample's user turn for each model, as the run does: what it sends is
    then in the cache (a DoesNotFit or other media error names the model)."""
    from hss_inspect.conditions.turn import user_turn_for

    for target in job.models:
        for meta in job.samples:
            try:
                await user_turn_for(release, target.media, target.name, meta, target.budget)
            except Exception as exc:
                raise ForModel(f"for {target.name}: {exc}") from exc
    return len(job.models) * len(job.samples)


def prepare_all(
    release: Release, jobs: Sequence[PrepareJob], workers: int, out: TextIO | None = None
) -> PrepareSummary:
    summary = PrepareSummary()
    started = time.perf_counter()
    # sys.stderr read at call time: a test or caller may have replaced it since import
    progress = _Progress(len(jobs), out or sys.stderr)
    # Workers record a cache that cannot store without warning; this process warns once.
    with ProcessPoolExecutor(
        max_workers=max(1, workers), initializer=report_storage_problems_quietly
    ) as pool:
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


PREPARE_OPTIONS = (*SELECTION_OPTIONS, *FRAME_OPTIONS, *MEDIA_OPTIONS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # several frame caps prepare a frame-budget sweep in one decode per clip
    add_flags(parser, PREPARE_OPTIONS, many=("max_frames",))
    parser.add_argument(
        "--model",
        dest="models",
        action="append",
        default=[],
        metavar="MODEL",
        help="also prepare what this model is sent, where its limits or context window "
        "thin or shrink the frames (repeatable; named as Inspect names it)",
    )
    parser.add_argument(
        "--recipe",
        choices=list(RECIPES),
        help="also prepare what each run of this recipe (hss-inspect recipe) is sent",
    )
    parser.add_argument(
        "--as",
        dest="aliases",
        action="append",
        default=[],
        metavar="NAME=MODEL",
        help="with --recipe: a Table 5 model sent to another Inspect model, as the recipe takes it",
    )
    add_model_server_flags(parser)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")


def run(args: argparse.Namespace) -> int:
    root = check_cache_folder()
    budgets = [media_settings({**vars(args), "max_frames": cap}) for cap in args.max_frames]
    models = targets_of(args, budgets)
    release = open_release(args.dataset, args.revision)
    rows = select_rows(release.read_rows(), args.media, args.domains, args.subdomains)
    jobs = jobs_for(rows, budgets, models)
    print(f"preparing {len(jobs)} media file(s) from {release.description} into {root}")
    summary = prepare_all(release, jobs, args.jobs)
    if summary.not_stored:
        print(f"warning: {summary.not_stored[0].not_stored}", file=sys.stderr)
    print("\n".join(summary.lines()))
    return 1 if summary.failures or summary.not_stored else 0


def targets_of(args: argparse.Namespace, budgets: Sequence[MediaSettings]) -> list[ModelTarget]:
    """The runs to prepare for: each --model at each frame budget, and each run of the
    --recipe with its own task options and output budget (the blind control sends none)."""
    runs = [(name, media, args.max_tokens) for name in args.models for media in budgets]
    if args.recipe:
        for planned in plan_recipe(args.recipe, None, named_pairs(args.aliases, "--as")):
            if planned.task == "hss_blind":
                continue
            given = {k: check(k, v) for k, v in planned.task_args.items()}
            for cap in args.max_frames:
                media = media_settings({**vars(args), "max_frames": cap, **given})
                runs.append((planned.model, media, planned.generate.get("max_tokens")))
    if not runs:
        return []
    from hss_inspect.providers.context import budget_for_name

    async def targets() -> list[ModelTarget]:
        found = []
        for name, media, max_tokens in dict.fromkeys(runs):
            budget = await budget_for_name(
                name, media.context_window, media.output_reserve, args.model_base_url, max_tokens
            )
            found.append(ModelTarget(name, budget, media))
        return found

    return asyncio.run(targets())
