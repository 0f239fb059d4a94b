"""Asking a model for a reply that must be readable: one request, then at most `retries`
re-asks, each naming what was wrong with the last reply (the judge, the failure-cause
labeller and the judge audit's perturber all talk to their models this way)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
)


@dataclass
class Exchange:
    """Every reply of one conversation, and the problem that got each unused one re-asked."""

    replies: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


async def ask(
    model: Model,
    system: str,
    request: str,
    read: Callable[[str], str | None],
    re_ask: Callable[[str], str],
    retries: int,
    exchange: Exchange,
) -> None:
    """Converse until `read` accepts a reply (it returns None; otherwise the problem, which
    `re_ask` turns into the next request) or the re-asks run out; `exchange` records it."""
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=system),
        ChatMessageUser(content=request),
    ]
    for attempt in range(retries + 1):
        output = await model.generate(messages)
        exchange.replies.append(output.completion)
        problem = read(output.completion)
        if problem is None:
            return
        exchange.problems.append(problem)
        if attempt < retries:
            messages += [
                ChatMessageAssistant(content=output.completion),
                ChatMessageUser(content=re_ask(problem)),
            ]
