"""The study's web app (Starlette, from the optional `human` extra): each annotator's private
page, their media, and the answers they submit. Only four routes exist, all under a token;
a request without a valid token, or for a task that is not the token's, gets 404 and no
data. Media are addressed by task, never by file path. Nothing of a task reaches the
browser but its question and media: the reference answer and the rubric are not in the
study at all.
"""

from __future__ import annotations

import mimetypes
import secrets
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio

from hss_inspect.core.options import media_settings
from hss_inspect.data.release import Release, open_release
from hss_inspect.human import store
from hss_inspect.human.answers import CONFIDENCES
from hss_inspect.human.media import FrameStore, silent_clip
from hss_inspect.human.pages import ANSWER_MAX_CHARS, done_page, not_found_page, task_page

T = TypeVar("T")
# A page holds a form and the study's state: never kept or shared by a cache.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
MEDIA_HEADERS = {**PAGE_HEADERS, "Cache-Control": "private, max-age=86400"}


async def blocking(work: Callable[..., T], *args: Any) -> T:
    """SQLite and file work off the event loop, so one slow write stalls nobody else."""
    return await anyio.to_thread.run_sync(partial(work, *args))


class StudyServer:
    """The study's routes over its SQLite file and the release its media come from."""

    def __init__(self, study: Path) -> None:
        settings = store.settings_of(study)
        self.study = study
        # Tokens and assignments are fixed when the study is made: read once, so a page's
        # hundreds of frame requests ask the file for nothing.
        self.tokens = store.tokens_of(study)
        self.assignments = store.assigned_tasks(study)
        self.view = str(settings["view"])
        self.release: Release = open_release(settings["dataset"], settings["revision"] or "main")
        media = media_settings(settings["media"])
        self.frames = (
            FrameStore(media.frames, media.frame_bytes_budget) if self.view == "frames" else None
        )

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.routing import Route

        return Starlette(
            routes=[
                Route("/a/{token}", self.page, methods=["GET"]),
                Route("/a/{token}/answer", self.answer, methods=["POST"]),
                Route("/a/{token}/media/{task_id:path}", self.media, methods=["GET"]),
                Route("/a/{token}/frames/{index:int}/{task_id:path}", self.frame, methods=["GET"]),
            ],
            exception_handlers={404: self.not_found, 405: self.not_found},
        )

    async def not_found(self, request: Any, exc: Exception) -> Any:
        from starlette.responses import HTMLResponse

        return HTMLResponse(not_found_page(), status_code=404, headers=PAGE_HEADERS)

    async def annotator(self, request: Any) -> str:
        from starlette.exceptions import HTTPException

        given = request.path_params["token"]
        # each token compared in constant time, so its text cannot be found by timing
        for name, token in self.tokens.items():
            if secrets.compare_digest(token, given):
                return name
        raise HTTPException(404)

    async def page(self, request: Any) -> Any:
        from starlette.responses import HTMLResponse

        name = await self.annotator(request)
        task, answered, assigned = await blocking(store.next_task, self.study, name)
        if task is None:
            return HTMLResponse(done_page(assigned), headers=PAGE_HEADERS)
        html = await self.render(request, task, answered, assigned)
        return HTMLResponse(html, headers=PAGE_HEADERS)

    async def render(
        self, request: Any, task: store.StudyTask, answered: int, assigned: int, **kept: str
    ) -> str:
        frames = None
        if self.frames is not None and task.media_type == "video":
            frames = await self.frames.frames(await self.media_file(task))
        base = f"/a/{request.path_params['token']}"
        return task_page(base, task, answered, assigned, frames, **kept)

    async def answer(self, request: Any) -> Any:
        from starlette.responses import HTMLResponse, RedirectResponse

        name = await self.annotator(request)
        form = await request.form(max_part_size=4 * ANSWER_MAX_CHARS)
        task_id, text = str(form.get("task_id", "")), str(form.get("answer", ""))
        confidence = str(form.get("confidence", ""))
        problem = answer_problem(text, confidence)
        if problem:
            task = self.assignments.get((name, task_id))
            if task is None:
                return await self.not_found(request, Exception())
            _, answered, assigned = await blocking(store.next_task, self.study, name)
            kept = {"kept_answer": text, "error": problem}
            html = await self.render(request, task, answered, assigned, **kept)
            return HTMLResponse(html, status_code=422, headers=PAGE_HEADERS)
        await blocking(store.submit, self.study, name, task_id, text, confidence, self.view)
        return RedirectResponse(f"/a/{request.path_params['token']}", status_code=303)

    async def media_file(self, task: store.StudyTask) -> Path:
        return await blocking(self.release.media_file, task.media_path, task.task_id)

    async def assigned(self, request: Any) -> store.StudyTask:
        from starlette.exceptions import HTTPException

        name = await self.annotator(request)
        task_id = request.path_params["task_id"]
        task = self.assignments.get((name, task_id))
        if task is None:
            raise HTTPException(404)
        return task

    async def media(self, request: Any) -> Any:
        from starlette.responses import FileResponse

        task = await self.assigned(request)
        path = await self.media_file(task)
        if task.media_type == "video":
            return FileResponse(await silent_clip(path), headers=MEDIA_HEADERS)
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return FileResponse(path, media_type=kind, headers=MEDIA_HEADERS)

    async def frame(self, request: Any) -> Any:
        from starlette.exceptions import HTTPException
        from starlette.responses import Response

        task = await self.assigned(request)
        if self.frames is None or task.media_type != "video":
            raise HTTPException(404)
        shown = await self.frames.frames(await self.media_file(task))
        index = request.path_params["index"]
        if not 0 <= index < len(shown.jpegs):
            raise HTTPException(404)
        return Response(shown.jpegs[index], media_type="image/jpeg", headers=MEDIA_HEADERS)


def answer_problem(text: str, confidence: str) -> str:
    """Why an answer cannot be stored as sent ('' when it can); the text is kept either way."""
    if len(text) > ANSWER_MAX_CHARS:
        return (
            f"Your answer is {len(text):,} characters long; the limit is "
            f"{ANSWER_MAX_CHARS:,}. Please shorten it: nothing was stored."
        )
    if confidence not in CONFIDENCES:
        return "Please say whether you are sure or unsure: nothing was stored."
    return ""
