"""Asking a model for a reply that must be readable: one request, then at most `retries`
re-asks, each naming what was wrong with the last reply (the judge, the failure-cause
labeller and the judge audit's perturber all talk to their models this way)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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


# One message of a conversation as OpenAI-style chat APIs take it: {"role", "content"}.
Message = dict[str, str]


def model_reply(model: Model) -> Callable[[list[Message]], Awaitable[str]]:
    """An Inspect model as the `reply` of `converse`."""

    async def reply(messages: list[Message]) -> str:
        output = await model.generate([_chat_message(m) for m in messages])
        return output.completion

    return reply


async def converse(
    reply: Callable[[list[Message]], Awaitable[str]],
    system: str,
    request: str,
    read: Callable[[str], str | None],
    re_ask: Callable[[str], str],
    retries: int,
    exchange: Exchange,
) -> None:
    """Converse with the chat model `reply` stands for (an Inspect model through
    `model_reply`, or lmms-eval's judge server) until `read` accepts a reply (it returns None;
    otherwise the problem, which `re_ask` turns into the next request) or the re-asks run
    out; `exchange` records it: the system message, the request, then each unreadable reply
    and its re-ask."""
    messages: list[Message] = [
        {"role": "system", "content": system},
        {"role": "user", "content": request},
    ]
    for attempt in range(retries + 1):
        completion = await reply(list(messages))
        exchange.replies.append(completion)
        problem = read(completion)
        if problem is None:
            return
        exchange.problems.append(problem)
        if attempt < retries:
            messages += [
                {"role": "assistant", "content": completion},
                {"role": "user", "content": re_ask(problem)},
            ]


def _chat_message(message: Message) -> ChatMessage:
    role, content = message["role"], message["content"]
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "assistant":
        return ChatMessageAssistant(content=content)
    return ChatMessageUser(content=content)
