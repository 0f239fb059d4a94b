"""A person's own answer to a task, as the human study and a build's blind review step both
take it (paper Sec. 3.1): free text up to a limit, and how sure they were on one scale.
The record `hss_human` grades, the form's fields and why a sent answer is refused are
defined here once, for both rooms."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from hss_inspect.web.pages import escape

CONFIDENCES = ("sure", "unsure")
# An answer longer than this is refused, with the text kept in the box (never cut).
ANSWER_MAX_CHARS = 20_000


@dataclass(frozen=True)
class HumanAnswer:
    """One person's answer to one task: what they wrote, how sure they were, the seconds
    from the task shown to the answer submitted, and what they were shown (`media`: the
    image or the clip; `frames`: the frames and times a model is sent)."""

    task_id: str
    annotator: str
    answer: str
    confidence: str | None
    seconds: float | None
    view: str
    submitted_at: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def answer_fields(kept_answer: str = "") -> str:
    """The answer box and the required confidence, as a form holds them."""
    choices = " ".join(
        f"<label><input type=radio name=confidence value={c}{' required' if n == 0 else ''}>"
        f" {c}</label>"
        for n, c in enumerate(CONFIDENCES)
    )
    return (
        f"<label>Your answer<br><textarea name=answer>{escape(kept_answer)}</textarea></label>"
        f"<p>How sure are you? {choices}</p>"
    )
