"""The study's web app (Starlette, from the optional `human` extra): each annotator's private
page, their media, and the answers they submit. Only four routes exist, all under a token;
a request without a valid token, or for a task that is not the token's, gets 404 and no
data. Media are addressed by task, never by file path. Nothing of a task reaches the
browser but its question and media: the reference answer and the rubric are not in the
study at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hss_inspect.core.options import media_settings
from hss_inspect.data.release import Release, open_release
from hss_inspect.human import store
from hss_inspect.human.pages import done_page, task_page
from hss_inspect.web.answers import ANSWER_MAX_CHARS, answer_problem
from hss_inspect.web.media import FrameStore
from hss_inspect.web.server import (
    blocking,
    frame_response,
    html,
    media_response,
    not_found,
    redirect,
    token_app,
)
from hss_inspect.web.store import keep_connections
from hss_inspect.web.tokens import holder_of


class StudyServer:
    """The study's routes over its SQLite file and the release its media come from."""

    def __init__(self, study: Path) -> None:
        settings = store.settings_of(study)
        self.study = study
        keep_connections(study)
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

    # (method, path under /a/{token}, handler): nothing else is served
    ROUTES = (
        ("GET", "", "page"),
        ("POST", "/answer", "answer"),
        ("GET", "/media/{task_id:path}", "media"),
        ("GET", "/frames/{index:int}/{task_id:path}", "frame"),
    )

    def app(self) -> Any:
        return token_app("a", self, self.ROUTES)

    async def annotator(self, request: Any) -> str:
        name = holder_of(self.tokens, request.path_params["token"])
        if name is None:
            raise not_found()
        return name

    async def page(self, request: Any) -> Any:
        name = await self.annotator(request)
        task, answered, assigned = await blocking(store.next_task, self.study, name)
        if task is None:
            return html(done_page(assigned))
        return html(await self.render(request, task, answered, assigned))

    async def render(
        self, request: Any, task: store.StudyTask, answered: int, assigned: int, **kept: str
    ) -> str:
        frames = None
        if self.frames is not None and task.media_type == "video":
            frames = await self.frames.frames(await self.media_file(task))
        base = f"/a/{request.path_params['token']}"
        return task_page(base, task, answered, assigned, frames, **kept)

    async def answer(self, request: Any) -> Any:
        name = await self.annotator(request)
        form = await request.form(max_part_size=4 * ANSWER_MAX_CHARS)
        task_id, text = str(form.get("task_id", "")), str(form.get("answer", ""))
        confidence = str(form.get("confidence", ""))
        problem = answer_problem(text, confidence)
        if problem:
            task = self.assignments.get((name, task_id))
            if task is None:
                raise not_found()
            _, answered, assigned = await blocking(store.next_task, self.study, name)
            kept = {"kept_answer": text, "error": problem}
            return html(await self.render(request, task, answered, assigned, **kept), 422)
        await blocking(store.submit, self.study, name, task_id, text, confidence, self.view)
        return redirect(f"/a/{request.path_params['token']}")

    async def media_file(self, task: store.StudyTask) -> Path:
        return await blocking(self.release.media_file, task.media_path, task.task_id)

    async def assigned(self, request: Any) -> store.StudyTask:
        name = await self.annotator(request)
        task = self.assignments.get((name, request.path_params["task_id"]))
        if task is None:
            raise not_found()
        return task

    async def media(self, request: Any) -> Any:
        task = await self.assigned(request)
        return await media_response(await self.media_file(task), task.media_type)

    async def frame(self, request: Any) -> Any:
        task = await self.assigned(request)
        frames = self.frames if task.media_type == "video" else None
        path = await self.media_file(task)
        return await frame_response(frames, path, request.path_params["index"])
