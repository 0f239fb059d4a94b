"""The build's web app (Starlette, from the optional `web` extra): authors' and reviewers'
private pages over the build's SQLite file and its media pool.

Every route is under a token, and the token's role decides what it reaches: an author's
link reaches the pool, their own tasks and the authoring form, never a review; a reviewer's
reaches only the rounds dealt to them, the media of those tasks and nothing of any other
round's verdict or feedback. Anything else gets 404 and no data. Pool files are addressed by
item id, never by path.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from hss_inspect.construction import blind, blind_pages, pages, store
from hss_inspect.construction.authoring import (
    Draft,
    build_taxonomy,
    criteria_lines,
    length_problems,
    rubric,
    submit_problems,
)
from hss_inspect.construction.duplicates import item_notes
from hss_inspect.construction.pool import PoolItem
from hss_inspect.construction.rules import OTHER_REASON, VERDICTS, rules
from hss_inspect.construction.text_repeats import flag_repeated_text
from hss_inspect.core.errors import InputError
from hss_inspect.core.options import media_settings
from hss_inspect.web import server as web
from hss_inspect.web.answers import ANSWER_MAX_CHARS, answer_problem
from hss_inspect.web.media import FrameStore, ShownFrames
from hss_inspect.web.store import keep_connections
from hss_inspect.web.tokens import holder_of

logger = logging.getLogger(__name__)
# (method, path under /b/{token}, handler): what a token may ask; its role narrows it further
ROUTES = (
    ("GET", "", "home"), ("GET", "/item/{item_id}", "item_page"),
    ("GET", "/task/{task_id}", "task_page"), ("POST", "/task", "save"),
    ("POST", "/verdict", "verdict"), ("GET", "/media/{item_id}", "media"),
    ("GET", "/frames/{index:int}/{item_id}", "frame"), ("POST", "/blind", "blind_answer"),
    ("GET", "/verdicts", "verdicts"),
)  # fmt: skip
# The largest form a page sends: the texts' own limits, with room for their escaping.
FORM_MAX_BYTES = 256_000


class BuildServer:
    """The build's routes over its SQLite file and its pool."""

    def __init__(self, build: Path) -> None:
        settings = store.settings_of(build)
        self.build = build
        keep_connections(build)
        self.pool = Path(settings["pool"])
        if not self.pool.is_dir():
            raise InputError(
                f"{build}: its media pool {self.pool} is not there; put the pool back at that "
                "path (a build names its items by their place in the pool)"
            )
        # People and the pool are fixed when the build is made: read once.
        self.tokens = store.tokens_of(build)
        self.items = store.items_by_id(build)
        self.rounds = int(settings["rounds"])
        self.blind = bool(settings.get(blind.SETTING, False))
        self.taxonomy = build_taxonomy(settings)
        media = media_settings(settings["media"])
        self.frames = (
            FrameStore(media.frames, media.frame_bytes_budget)
            if settings["view"] == "frames"
            else None
        )
        # (reviewer, item id) once dealt: a deal is never taken back, so a page's many
        # frame requests ask the file once.
        self.seen: set[tuple[str, str]] = set()

    def app(self) -> Any:
        return web.token_app("b", self, ROUTES)

    # ---- who asks ---------------------------------------------------------------------

    def person(self, request: Any, role: str | None = None) -> store.Person:
        found = holder_of(self.tokens, request.path_params["token"])
        if found is None or (role is not None and found.role != role):
            raise web.not_found()
        return found

    def base(self, request: Any) -> str:
        return f"/b/{request.path_params['token']}"

    async def shown_frames(self, item: PoolItem) -> ShownFrames | None:
        if self.frames is None or item.media_type != "video":
            return None
        return await self.frames.frames(self.pool / item.path)

    async def duplicate_note(self, item_id: str) -> str:
        """What the item nearly repeats and its group, for its pages ('' when nothing)."""
        notes = await web.blocking(item_notes, self.build, [item_id])
        return notes.get(item_id, "")

    # ---- pages ------------------------------------------------------------------------

    async def home(self, request: Any) -> Any:
        person = self.person(request)
        if person.role == "reviewer":
            return await self.review(request, person)
        shown = request.query_params.get("pool", "free")
        shown = shown if shown in store.POOL_SHOWN else "free"
        first = max(0, whole_or_zero(request.query_params.get("from", "")))
        tasks = await web.blocking(store.tasks_of_author, self.build, person.name)
        pool = await web.blocking(store.pool_page, self.build, shown, first, pages.POOL_ROWS)
        shown_ids = [item.item_id for item, _, _ in pool.rows]
        notes = await web.blocking(item_notes, self.build, shown_ids)
        body = pages.author_home(self.base(request), person.name, tasks, pool, shown, notes)
        return web.html(body)

    async def item_page(self, request: Any) -> Any:
        person = self.person(request, "author")
        item = self.items.get(request.path_params["item_id"])
        if item is None:
            raise web.not_found()
        task_id, author = await web.blocking(store.item_owner, self.build, item.item_id)
        base = self.base(request)
        if task_id is not None and author == person.name:
            return web.redirect(f"{base}/task/{task_id}")
        frames = await self.shown_frames(item)
        note = await self.duplicate_note(item.item_id)
        if task_id is not None:
            heading = f"{item.item_id} is taken by another author"
            return web.html(
                pages.read_only_page(base, person.name, item, heading, frames, note=note)
            )
        body = pages.authoring_page(
            base, person.name, item, None, frames, time.time(), note=note, taxonomy=self.taxonomy
        )
        return web.html(body)

    async def task_page(self, request: Any) -> Any:
        person = self.person(request, "author")
        task = await web.blocking(store.view_of, self.build, request.path_params["task_id"])
        if task is None or task.author != person.name:
            raise web.not_found()
        item = self.items[task.item.item_id]
        frames = await self.shown_frames(item)
        base = self.base(request)
        note = await self.duplicate_note(item.item_id)
        if task.state in ("draft", "returned"):
            opened = time.time()
            notice = "Draft saved." if "saved" in request.query_params else ""
            body = pages.authoring_page(
                base,
                person.name,
                item,
                task,
                frames,
                opened,
                note=note,
                notice=notice,
                taxonomy=self.taxonomy,
            )
            return web.html(body)
        heading = f"{task.task_id}: {pages.state_text(task)}"
        text = pages.drop_note(task) + pages.task_text(task, self.taxonomy)
        return web.html(pages.read_only_page(base, person.name, item, heading, frames, text, note))

    async def save(self, request: Any) -> Any:
        person = self.person(request, "author")
        form = await request.form(max_part_size=FORM_MAX_BYTES)
        item = self.items.get(str(form.get("item_id", "")))
        task_id = str(form.get("task_id", "")) or None
        if item is None:
            raise web.not_found()
        task = await web.blocking(store.view_of, self.build, task_id) if task_id else None
        if task_id and (task is None or task.author != person.name):
            raise web.not_found()
        action = str(form.get("action", "save"))
        base = self.base(request)
        kept = {k: str(form.get(k, "")) for k in ("subdomain", "prompt", "reference", "criteria")}
        if action == "release" and task is not None:
            if form.get("confirm") != "yes":  # asked first, on a page of its own
                return web.html(pages.give_up_page(base, person.name, task, kept))
            await web.blocking(store.release_item, self.build, person.name, task.task_id)
            return web.redirect(base)
        previous = task.draft.criteria if task else ()
        draft = Draft(
            kept["subdomain"], kept["prompt"], kept["reference"],
            rubric(criteria_lines(kept["criteria"]), previous),
        )  # fmt: skip
        check = submit_problems if action == "submit" else length_problems
        problems = check(draft, self.taxonomy)
        opened = float_or_now(str(form.get("opened_at", "")))
        if problems:
            frames = await self.shown_frames(item)
            body = pages.authoring_page(
                base, person.name, item, task, frames, opened, problems, kept,
                taxonomy=self.taxonomy,
            )  # fmt: skip
            return web.html(body, 422)
        try:
            saved = await web.blocking(
                store.save_draft, self.build, person.name, item.item_id, task_id, draft, opened
            )
        except InputError as exc:  # taken meanwhile, or no longer editable
            frames = await self.shown_frames(item)
            body = pages.authoring_page(
                base, person.name, item, task, frames, opened, [str(exc)], taxonomy=self.taxonomy
            )
            return web.html(body, 409)
        if action == "submit":
            if await web.blocking(store.submit_task, self.build, person.name, saved):
                await web.blocking(flag_repeated_text, self.build, [saved])
            return web.redirect(base)
        return web.redirect(f"{base}/task/{saved}?saved")

    async def review(
        self,
        request: Any,
        person: store.Person,
        problem: str = "",
        kept: dict[str, str] | None = None,
        status: int = 422,
    ) -> Any:
        confirmed = await self.confirmed(request, person)
        slot, task, decided, dealt = await web.blocking(store.next_review, self.build, person.name)
        base = self.base(request)
        if slot is None or task is None:
            return web.html(pages.no_review_page(base, person.name, decided, dealt, confirmed))
        frames = await self.shown_frames(self.items[task.item.item_id])
        own = ""
        if self.blind:  # the round opens with the media and the question alone
            key = (slot.task_id, slot.revision, slot.round)
            mine = await web.blocking(blind.answer_of, self.build, key, person.name)
            if mine is None:
                body = blind_pages.blind_page(
                    base, person.name, slot, task, frames, decided, dealt,
                    problem, (kept or {}).get("answer", ""), confirmed,
                )  # fmt: skip
                return web.html(body, status if problem else 200)
            own = blind_pages.own_answer(*mine)
        flags = await web.blocking(store.flags_of, self.build, task.task_id, slot.revision)
        body = pages.review_page(
            base, person.name, slot, task, flags, frames, decided, dealt, problem, kept,
            own, confirmed, taxonomy=self.taxonomy,
        )  # fmt: skip
        return web.html(body, status if problem else 200)

    async def blind_answer(self, request: Any) -> Any:
        """Store the reviewer's own answer to the round, once: a different answer sent
        later is refused (409) and the first stays."""
        person = self.person(request, "reviewer")
        form = await request.form(max_part_size=4 * ANSWER_MAX_CHARS)
        kept = {k: str(form.get(k, "")) for k in ("answer", "confidence")}
        slot = slot_of(form)
        stored = await web.blocking(blind.answer_of, self.build, slot, person.name)
        if stored is not None and stored[0] != kept["answer"]:
            body = blind_pages.refused_page(self.base(request), person.name, slot, *stored)
            return web.html(body, 409)
        problem = answer_problem(kept["answer"], kept["confidence"])
        if stored is None and problem:
            return await self.review(request, person, problem, kept)
        if stored is None:
            await web.blocking(
                blind.store_answer, self.build, person.name, slot, kept["answer"],
                kept["confidence"],
            )  # fmt: skip
        return web.redirect(self.base(request))

    async def confirmed(self, request: Any, person: store.Person) -> str:
        """The verdict the reviewer just gave (`?decided=TASK/REVISION/ROUND`), as stored."""
        asked = request.query_params.get("decided", "")
        if not asked:
            return ""
        given = await web.blocking(store.verdicts_given, self.build, person.name)
        slot = next((s for s, _ in given if f"{s.task_id}/{s.revision}/{s.round}" == asked), None)
        return pages.confirmation(slot) if slot else ""

    async def verdicts(self, request: Any) -> Any:
        person = self.person(request, "reviewer")
        given = await web.blocking(store.verdicts_given, self.build, person.name)
        return web.html(pages.verdicts_page(self.base(request), person.name, given))

    async def verdict(self, request: Any) -> Any:
        person = self.person(request, "reviewer")
        form = await request.form(max_part_size=FORM_MAX_BYTES)
        kept = {k: str(form.get(k, "")) for k in ("verdict", "reason", "other", "feedback")}
        kept["about"] = " ".join(str(c) for c in form.getlist("about"))
        slot = slot_of(form)
        if (
            self.blind
            and await web.blocking(blind.answer_of, self.build, slot, person.name) is None
        ):
            first = "Write your own answer first: no verdict before it. Nothing was stored."
            return await self.review(request, person, first, status=409)
        problem = verdict_problem(kept)
        if problem:
            return await self.review(request, person, problem, kept)
        reason = kept["reason"] if kept["verdict"] == "drop" else None
        if reason == OTHER_REASON:
            reason = f"{OTHER_REASON}: {kept['other'].strip()}"
        feedback = kept["feedback"].strip() or None
        about = await web.blocking(marked_criteria, self.build, slot[0], kept["about"])
        await web.blocking(
            store.decide, self.build, person.name, slot, kept["verdict"], reason, feedback,
            self.rounds, None, about,
        )  # fmt: skip
        return web.redirect(f"{self.base(request)}?decided={'/'.join(map(str, slot))}")

    # ---- media ------------------------------------------------------------------------

    async def allowed_item(self, request: Any) -> PoolItem:
        """The item, if the token may see it: any item for an author, an item of a task
        dealt to them for a reviewer."""
        person = self.person(request)
        item = self.items.get(request.path_params["item_id"])
        if item is None:
            raise web.not_found()
        if person.role == "reviewer" and (person.name, item.item_id) not in self.seen:
            dealt = await web.blocking(store.dealt_to, self.build)
            self.seen |= {(name, i) for (name, _), i in dealt.items()}
            if (person.name, item.item_id) not in self.seen:
                raise web.not_found()
        if not (self.pool / item.path).is_file():
            logger.warning("%s: %s is missing from the pool %s", item.item_id, item.path, self.pool)
            raise web.not_found()
        return item

    async def media(self, request: Any) -> Any:
        item = await self.allowed_item(request)
        return await web.media_response(self.pool / item.path, item.media_type)

    async def frame(self, request: Any) -> Any:
        item = await self.allowed_item(request)
        frames = self.frames if item.media_type == "video" else None
        return await web.frame_response(frames, self.pool / item.path, request.path_params["index"])


def whole_or_zero(text: str) -> int:
    return int(text) if text.isdigit() else 0


def slot_of(form: Any) -> tuple[str, int, int]:
    """The round a form is about (task id, revision, round); 404 when it names none."""
    try:
        return (str(form["task_id"]), int(form["revision"]), int(form["round"]))
    except (KeyError, ValueError):
        raise web.not_found() from None


def float_or_now(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return time.time()


def marked_criteria(build: Path, task_id: str, ticked: str) -> tuple[str, ...]:
    """The criteria ticked, in the rubric's order; an id not in the rubric is no mark."""
    task = store.view_of(build, task_id)
    ids = set(ticked.split())
    return tuple(c.id for c in task.draft.criteria if c.id in ids) if task else ()


def verdict_problem(kept: dict[str, str]) -> str:
    """Why the verdict cannot be stored as sent ('' when it can); the form is kept."""
    verdict = kept["verdict"]
    if verdict not in VERDICTS:
        return "Choose Pass, Edit or Drop: nothing was stored."
    if len(kept["feedback"]) > pages.FEEDBACK_MAX_CHARS or len(kept["other"]) > 1000:
        return (
            f"Keep the feedback under {pages.FEEDBACK_MAX_CHARS:,} characters: nothing was stored."
        )
    if verdict == "edit" and not kept["feedback"].strip():
        return "An Edit goes back to the author: say what to change. Nothing was stored."
    if verdict != "edit" and kept.get("about"):
        return (
            "Criteria are marked for an Edit only: untick them, or choose Edit. Nothing was stored."
        )
    if verdict == "drop":
        if rules().reason(kept["reason"]) is None:
            return "A Drop needs its reason: choose one. Nothing was stored."
        if kept["reason"] == OTHER_REASON and not kept["other"].strip():
            return "Say why the task is dropped (Other): nothing was stored."
    return ""
