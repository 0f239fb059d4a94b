"""The study's pages, rendered on the server (no build step, a few lines of inline script):
one task at a time, with its question, its media, a free-form answer box, a required
confidence and the annotator's progress. Everything a person typed is escaped."""

from __future__ import annotations

from hss_inspect.human.store import StudyTask
from hss_inspect.web.answers import answer_fields
from hss_inspect.web.media import ShownFrames
from hss_inspect.web.pages import ONCE, escape, media_html, page


def task_page(
    base: str,
    task: StudyTask,
    answered: int,
    assigned: int,
    frames: ShownFrames | None = None,
    kept_answer: str = "",
    error: str = "",
) -> str:
    """One task: its place among the annotator's, its media, the question and the form."""
    header = (
        f"<header><span>HSS study</span><span>task {answered + 1} of {assigned}</span></header>"
    )
    problem = f"<p class=error>{escape(error)}</p>" if error else ""
    body = (
        f"{header}{media_html(base, task.task_id, task.media_type, frames)}"
        f"<h2>Question</h2><p>{escape(task.prompt)}</p>{problem}"
        f'<form method=post action="{base}/answer" {ONCE}>'
        f'<input type=hidden name=task_id value="{escape(task.task_id)}">'
        f"{answer_fields(kept_answer)}"
        "<p><button type=submit>Submit (final)</button></p></form>"
    )
    return page(f"HSS study: task {answered + 1} of {assigned}", body)


def done_page(assigned: int) -> str:
    return page("HSS study: done", f"<h2>Thank you</h2><p>All {assigned} tasks are answered.</p>")
