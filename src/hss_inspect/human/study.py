"""A new study: the selected tasks dealt to the annotators (`assign`), written to its
SQLite file (`store`), and the media they will be shown prepared ahead (the frames view's
frames in the media cache, each clip without its audio track), so that each shows at once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hss_inspect.core.options import option_values
from hss_inspect.core.settings import MediaSettings
from hss_inspect.data.release import Release
from hss_inspect.data.rows import TaskRow
from hss_inspect.human.assign import Assignable, assign
from hss_inspect.human.store import StudyTask, create_study
from hss_inspect.web.media import Shown, prepare_shown
from hss_inspect.web.server import DEFAULT_HOST

# Where `hss-inspect human serve` listens unless told otherwise (`web.server.DEFAULT_HOST`).
DEFAULT_PORT = 8765


def new_study(
    path: Path,
    release: Release,
    rows: Sequence[TaskRow],
    annotators: Sequence[str],
    per_task: int,
    seed: int,
    view: str,
    media: MediaSettings,
    selection: dict[str, Any],
) -> dict[str, str]:
    """Write the study; each annotator's token."""
    given = assign(
        [Assignable(r.task_id, r.media_type, r.domain) for r in rows], annotators, per_task, seed
    )
    settings = {
        "dataset": release.dataset,
        "revision": release.revision,
        "view": view,
        "media": option_values(media),
        "selection": selection,
        "seed": seed,
        "answers_per_task": per_task,
        "created": datetime.now(tz=timezone.utc).isoformat(timespec="seconds"),
    }
    tasks = [
        StudyTask(r.task_id, r.media_type, r.domain, r.subdomain, r.media_path, r.prompt)
        for r in rows
    ]
    return create_study(path, settings, tasks, given)


def prepare_study_media(
    release: Release, rows: Sequence[TaskRow], view: str, media: MediaSettings, jobs: int
) -> str:
    """Fill the cache with what the study shows (`web.media.prepare_shown`)."""
    shown = [Shown(r.task_id, r.media_type, r.media_path) for r in rows]
    return prepare_shown(shown, release.media_file, view, media, jobs)


def link(token: str, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> str:
    return f"http://{host}:{port}/a/{token}"
