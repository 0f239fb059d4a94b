"""The rubric judge through lmms-eval's judge server (`lmms_eval.llm_judge`), configured
the way lmms-eval's own judged tasks are, from the environment:

    API_TYPE        the server kind: openai (the default), azure, async_openai, bedrock, ...
    MODEL_VERSION   the judge model (HSS has no default judge: it must be named)
    OPENAI_API_KEY, OPENAI_API_URL (or the chosen kind's own variables)

The conversation is `grading/scorer.judge_answer`'s: the same request, reading, re-asks
and grading-failure rule as the Inspect task's `rubric_judge`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hss_inspect.core.errors import SetupError
from hss_inspect.grading.asking import Message
from hss_inspect.grading.judge import JudgePrompts, graded_task_of
from hss_inspect.grading.scorer import JudgeSession, judge_answer

API_TYPE_VARIABLE, MODEL_VARIABLE = "API_TYPE", "MODEL_VERSION"
# The judge's output room: a verdict and a justification for each of up to a few dozen
# criteria (lmms-eval's default of 1,024 tokens cuts long rubrics short).
JUDGE_MAX_TOKENS = 8192

Reply = Callable[[list[Message]], Awaitable[str]]


def judge_server_reply(environ: Mapping[str, str] = os.environ) -> Reply:
    """lmms-eval's judge server as the `reply` of a grading conversation."""
    model = environ.get(MODEL_VARIABLE, "")
    if not model:
        raise SetupError(
            f"HSS grades with a judge model: set {MODEL_VARIABLE} to it (and API_TYPE, "
            "OPENAI_API_KEY, OPENAI_API_URL for its server), as lmms-eval's judged tasks take it"
        )
    from lmms_eval.llm_judge import Request, ServerConfig, get_server

    config = ServerConfig(model_name=model, temperature=0.0, max_tokens=JUDGE_MAX_TOKENS)
    server = get_server(environ.get(API_TYPE_VARIABLE, "openai").lower(), config)

    async def reply(messages: list[Message]) -> str:
        request = Request(messages=[dict(m) for m in messages], config=config)
        response = await asyncio.to_thread(server.evaluate, request)
        return str(response.content)

    return reply


def grade(
    doc: Mapping[str, Any], answer: str, reply: Reply, prompts: JudgePrompts, retries: int
) -> JudgeSession:
    """One attempt's grading conversation; a server that fails after its own retries
    stops the run naming the task (a bug or an outage is never scored)."""
    task = graded_task_of(dict(doc))
    try:
        return asyncio.run(judge_answer(reply, prompts, task, answer, retries))
    except Exception as exc:
        raise SetupError(
            f"task {doc['task_id']}: the judge {os.environ.get(MODEL_VARIABLE)} could not be "
            f"reached ({type(exc).__name__}: {exc}); check {API_TYPE_VARIABLE} and its server's "
            "variables, then run again"
        ) from exc
