"""The report's pages beside `report.html`: a page for each task across the runs, and the
failure examples' figures (paper App. E), with the media the models were served as
files under `media/` (`served_media`). `write_pages` renders them for one set of runs,
the logs of one comparable release, reading only the samples of the tasks shown.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hss_inspect.report.examples import (
    Example,
    check_task_ids,
    choose_examples,
    named_examples,
)
from hss_inspect.report.log_header import LogInfo
from hss_inspect.report.page_render import Links, MediaOf, examples_page, task_page
from hss_inspect.report.served_media import MediaShelf, Served
from hss_inspect.report.tables import Run
from hss_inspect.report.task_view import TaskView, task_views

TASKS_FOLDER = "tasks"
EXAMPLES_PAGE = "examples.html"
REPORT_PAGE = "report.html"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
CHUNK_TASKS = 32


@dataclass(frozen=True)
class PagesWanted:
    """Which pages to write: the task pages (None: every task), the examples chosen per
    subdomain, and the tasks named as examples."""

    tasks: Sequence[str] | None = ()
    examples: int = 0
    example_tasks: Sequence[str] = ()

    @property
    def any(self) -> bool:
        return (
            self.tasks is None or bool(self.tasks) or self.examples > 0 or bool(self.example_tasks)
        )


@dataclass(frozen=True)
class PagesWritten:
    task_pages: dict[str, str]  # task id -> its page, relative to the pages' folder
    examples: str | None  # the examples' page, relative to it (None: not written)
    figures: int
    media_sets: int
    media_bytes: int
    problems: list[str] = field(default_factory=list)  # media that could not be shown

    def line(self) -> str:
        """What was written, in one line."""
        figures = (
            f" and {self.figures} failure example(s) ({self.examples})" if self.examples else ""
        )
        return (
            f"{len(self.task_pages)} task page(s) in {TASKS_FOLDER}/{figures}, with "
            f"{self.media_sets} set(s) of media ({self.media_bytes / 1e6:,.1f} MB) in media/"
        )


def write_pages(
    out: Path,
    infos: Sequence[LogInfo],
    runs: Sequence[Run],
    wanted: PagesWanted,
    dataset: str | None = None,
    revision: str | None = None,
    report: str | None = REPORT_PAGE,
) -> PagesWritten:
    """Write the pages `wanted` for `runs` (with their logs' `infos`) into `out`: task pages
    under `tasks/`, the examples as `examples.html`, the media under `media/`, each page
    linking back to `report` (a page in `out`; None: no link). `dataset`/`revision`: a copy
    of the release to rebuild the media from instead of the one each log recorded."""
    examples = _examples(runs, wanted)
    page_tasks = _page_tasks(runs, wanted, examples)
    records = [record for run in runs for record in run.records]
    shelf = MediaShelf(out, dataset, revision)
    pages = {task_id: page_name(task_id) for task_id in page_tasks}
    examples_name = EXAMPLES_PAGE if examples else None
    links = Links(
        root="../",
        report=f"../{report}" if report else None,
        examples=f"../{examples_name}" if examples_name else None,
        tasks={t: f"../{name}" for t, name in pages.items()},
    )
    (out / TASKS_FOLDER).mkdir(parents=True, exist_ok=True)
    shown = {e.task_id for e in examples}
    figured: dict[str, TaskView] = {}  # the examples' tasks, for their figures
    media: dict[tuple[str, str, int], Served] = {}
    problems: dict[str, str] = {}
    # a chunk of tasks at a time, so that every task of a large run is never all in memory
    for start in range(0, len(page_tasks), CHUNK_TASKS):
        views = task_views(infos, records, page_tasks[start : start + CHUNK_TASKS])
        served = {
            attempt.key: shelf.served(attempt.sample, run.eval_metadata)
            for view in views.values()
            for run in view.runs
            for attempt in run.attempts
        }
        for task_id, view in views.items():
            (out / pages[task_id]).write_text(task_page(view, served, links), encoding="utf-8")
        figured.update({t: view for t, view in views.items() if t in shown})
        problems.update({k: v for k, v in _problems(views, served).items() if k not in problems})
        media.update(served)
    if examples_name:
        root_links = Links(root="", report=report, examples=None, tasks=pages)
        text = examples_page(examples, figured, media, root_links)
        (out / examples_name).write_text(text, encoding="utf-8")
    return PagesWritten(
        task_pages=pages,
        examples=examples_name,
        figures=sum(e.task_id in figured for e in examples),
        media_sets=len({s.key for s in media.values() if s.files}),
        media_bytes=_media_bytes(out, media),
        problems=list(problems.values()),
    )


def page_name(task_id: str) -> str:
    """A task's page under `tasks/`: its id where that is a safe file name, else the safe
    part and a short hash of the id (so two ids never share a page)."""
    safe = _UNSAFE.sub("_", task_id).lstrip(".")
    if safe != task_id or not safe:
        safe += "-" + hashlib.sha256(task_id.encode()).hexdigest()[:8]
    return f"{TASKS_FOLDER}/{safe}.html"


def _examples(runs: Sequence[Run], wanted: PagesWanted) -> list[Example]:
    named = named_examples(runs, wanted.example_tasks) if wanted.example_tasks else []
    chosen = choose_examples(runs, wanted.examples) if wanted.examples > 0 else []
    taken = {e.task_id for e in named}
    return named + [e for e in chosen if e.task_id not in taken]


def _page_tasks(runs: Sequence[Run], wanted: PagesWanted, examples: Sequence[Example]) -> list[str]:
    """The tasks to write a page for, in the logs' order: those asked for (every one for
    None) and every example's; an id no log holds is refused."""
    if wanted.tasks is None:
        asked = list(dict.fromkeys(r.task_id for run in runs for r in run.records))
    else:
        asked = list(wanted.tasks)
        check_task_ids(runs, asked)
    return list(dict.fromkeys([*asked, *(e.task_id for e in examples)]))


def _media_bytes(out: Path, media: MediaOf) -> int:
    files = {path for served in media.values() for path in served.files}
    return sum((out / path).stat().st_size for path in files)


def _problems(views: dict[str, TaskView], media: MediaOf) -> dict[str, str]:
    """Each reason a set of media could not be shown, with a task and run it was for."""
    found: dict[str, str] = {}
    for view in views.values():
        for run in view.runs:
            for attempt in run.attempts:
                served: Served = media[attempt.key]
                if served.problem and served.problem not in found:
                    found[served.problem] = (
                        f"task {view.task_id}, {run.name}, attempt {attempt.epoch}: "
                        f"{served.problem}"
                    )
    return found
