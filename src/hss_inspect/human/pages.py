"""The study's pages, rendered on the server (no build step, a few lines of inline script):
one task at a time, with its question, its media, a free-form answer box, a required
confidence and the annotator's progress. Everything a person typed is escaped."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from hss_inspect.human.media import ShownFrames
from hss_inspect.human.store import StudyTask

# An answer longer than this is refused, with the text kept in the box (never cut).
ANSWER_MAX_CHARS = 20_000

_STYLE = """
body{font:16px/1.5 system-ui,sans-serif;max-width:72rem;margin:1rem auto;padding:0 1rem}
header{display:flex;justify-content:space-between;color:#555}
.media{margin:1rem 0;overflow:auto;max-height:85vh;border:1px solid #ddd}
.media img.fit{max-width:100%;max-height:80vh;cursor:zoom-in;display:block}
.media img.full{cursor:zoom-out}
.media video{max-width:100%;max-height:80vh;display:block}
.frames{display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:.5rem}
.frames figure{margin:0}.frames img{width:100%}.note{color:#333}
textarea{width:100%;min-height:8rem;font:inherit}
.error{color:#a00;font-weight:600}
"""
_ZOOM = (
    "onclick=\"this.classList.toggle('fit');this.classList.toggle('full')\" "
    'title="Click to see the image at full size, and again to fit it to the window"'
)
# Disables the button once the form is sent, so a double click sends one answer.
_ONCE = "onsubmit=\"this.querySelector('button').disabled=true\""


def page(title: str, body: str) -> str:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
        f'<meta name=viewport content="width=device-width"><style>{_STYLE}</style></head>'
        f"<body>{body}</body></html>"
    )


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
        f"{header}{media_html(base, task, frames)}"
        f"<h2>Question</h2><p>{escape(task.prompt)}</p>{problem}"
        f'<form method=post action="{base}/answer" {_ONCE}>'
        f'<input type=hidden name=task_id value="{escape(task.task_id)}">'
        f"<label>Your answer<br><textarea name=answer>{escape(kept_answer)}</textarea></label>"
        "<p>How sure are you? "
        "<label><input type=radio name=confidence value=sure required> sure</label> "
        "<label><input type=radio name=confidence value=unsure> unsure</label></p>"
        "<p><button type=submit>Submit (final)</button></p></form>"
    )
    return page(f"HSS study: task {answered + 1} of {assigned}", body)


def media_html(base: str, task: StudyTask, frames: ShownFrames | None) -> str:
    task_path = escape(quote(task.task_id, safe=""))
    source = f"{base}/media/{task_path}"
    if frames is not None:
        figures = "".join(
            f"<figure><figcaption>{escape(label)}</figcaption>"
            f'<img loading=lazy src="{base}/frames/{n}/{task_path}" alt="{escape(label)}">'
            "</figure>"
            for n, label in enumerate(frames.labels)
        )
        return f"<p class=note>{escape(frames.note)}</p><div class='media frames'>{figures}</div>"
    if task.media_type == "image":
        return f'<div class=media><img class=fit src="{source}" alt="the image" {_ZOOM}></div>'
    return f'<div class=media><video controls preload=auto src="{source}"></video></div>'


def done_page(assigned: int) -> str:
    return page("HSS study: done", f"<h2>Thank you</h2><p>All {assigned} tasks are answered.</p>")


def not_found_page() -> str:
    return page("Not found", "<h2>Not found</h2>")
