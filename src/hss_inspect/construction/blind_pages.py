"""The blind step of a review round (a build made with `--blind-answers`): the media and the
question alone, and the reviewer's own answer and confidence, in the human study's form
(`web.answers`); then, once it is stored, the reviewer's own answer above the task as
authored. Nothing of another round is on either page. Everything typed is escaped."""

from __future__ import annotations

from hss_inspect.construction.pages import STYLE, header, round_page
from hss_inspect.construction.store import ReviewSlot, TaskView
from hss_inspect.web.answers import answer_fields
from hss_inspect.web.media import ShownFrames
from hss_inspect.web.pages import ONCE, escape, media_html, page

BLIND_STYLE = ".own{background:#eef0fa;padding:.5rem;border-left:4px solid #5566aa}"
STORE_BUTTON = "Store my answer (final) and show the reference"


def blind_page(
    base: str,
    name: str,
    slot: ReviewSlot,
    task: TaskView,
    frames: ShownFrames | None,
    decided: int,
    dealt: int,
    problem: str = "",
    kept_answer: str = "",
    confirmed: str = "",
) -> str:
    """The round before its reveal: the media, the question, the reviewer's answer form;
    `confirmed` says which verdict was just stored (`pages.confirmation`)."""
    error = f"<p class=error>{escape(problem)}</p>" if problem else ""
    content = (
        "<p class=state>First answer the question yourself, from the media, as a model is "
        "asked it. Your answer is stored before the reference answer and the rubric are "
        "shown, and it cannot be changed after; then give your verdict as usual.</p>"
        f"{media_html(base, task.item.item_id, task.item.media_type, frames)}"
        f"<h3>Question</h3><p>{escape(task.draft.prompt)}</p>{error}"
        f'<form method=post action="{base}/blind" {ONCE}>'
        f'<input type=hidden name=task_id value="{escape(slot.task_id)}">'
        f'<input type=hidden name=revision value="{slot.revision}">'
        f'<input type=hidden name=round value="{slot.round}">'
        f"{answer_fields(kept_answer)}<p><button type=submit>{STORE_BUTTON}</button></p></form>"
    )
    counts = (decided, dealt)
    return round_page(
        base, name, slot, task.item.item_id, counts, confirmed, content, STYLE + BLIND_STYLE
    )


def own_answer(answer: str, confidence: str) -> str:
    """The reviewer's stored answer, shown above the reference once it is revealed."""
    return (
        f"<style>{BLIND_STYLE}</style><div class=own><b>Your answer, stored before the "
        f"reference was shown ({escape(confidence)}):</b><p>{escape(answer)}</p></div>"
    )


def refused_page(
    base: str, name: str, slot: tuple[str, int, int], answer: str, confidence: str
) -> str:
    """A different answer sent for a round already answered: refused, the first kept."""
    task_id, _, round_ = slot
    body = header("reviewer", name, f"{task_id}, round {round_}") + (
        f"<h2>Your answer to {escape(task_id)}, round {round_}, cannot be changed</h2>"
        "<p class=error>It was stored before the reference was shown, and it stays as it "
        "was: nothing was changed.</p>"
        f'{own_answer(answer, confidence)}<p><a href="{base}">back to your reviews</a></p>'
    )
    return page("HSS build: answer kept", body, STYLE)
