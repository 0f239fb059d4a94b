"""The solvers of the conditions (paper App. C.2 and C.5): the HSS user turn for the
standard, blind and agentic conditions, and the oracle's reference answer.

`hss_input` writes the messages and records in the sample's metadata what was sent
(frame times, hashes, thinning), so a log without images still says what the model saw.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from hss_inspect.conditions import prompt
from hss_inspect.conditions.cache_plan import RECORD_KEY, plan_turn
from hss_inspect.conditions.turn import user_turn_for
from hss_inspect.core.roles import require_roles
from hss_inspect.core.settings import (
    DEFAULT_CACHE_PLAN,
    HUMAN_ANSWER,
    CachePlan,
    MediaSettings,
)
from hss_inspect.data.release import Release
from hss_inspect.providers.context import budget_for

ORACLE_MODEL_NAME = "hss/oracle"
HUMAN_MODEL_NAME = "hss/human"


@solver
def hss_input(
    release: Release,
    media: MediaSettings,
    condition: str = "standard",
    labeler: bool = False,
    cache_plan: CachePlan = DEFAULT_CACHE_PLAN,
    conversation: bool = False,
) -> Solver:
    """Replace the sample's messages with the HSS user turn for `condition`, its shared
    block marked for the provider's prompt cache as the plan decides (`conversation`: an
    agentic conversation follows, whose next step reads it)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_roles(labeler)
        if condition == "blind":
            state.messages = [
                ChatMessageSystem(content=prompt.BLIND_SYSTEM_MESSAGE),
                ChatMessageUser(content=prompt.question_text(state.metadata["prompt"])),
            ]
            state.metadata["sent_media"] = {"kind": "none"}
            return state
        content, record = await media_turn(release, media, state)
        state.metadata[RECORD_KEY] = plan_turn(state, content, record, cache_plan, conversation)
        state.messages = [ChatMessageUser(content=content)]
        state.metadata["sent_media"] = record
        state.metadata["frames_received"] = frames_received(record)
        return state

    return solve


@solver
def oracle_answer(labeler: bool = False) -> Solver:
    """Submit the reference answer as the answer: grades the judge, calls no model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_roles(labeler)
        reference = state.metadata["golden_response"]
        state.messages = [ChatMessageUser(content=prompt.question_text(state.metadata["prompt"]))]
        state.output = ModelOutput.from_content(model=ORACLE_MODEL_NAME, content=reference)
        state.messages.append(ChatMessageAssistant(content=reference, model=ORACLE_MODEL_NAME))
        return state

    return solve


@solver
def human_answer() -> Solver:
    """Submit a person's answer (`hss_human`: the sample's `human` record) as the answer: the
    judge grades it as it grades a model's, and no model is called."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_roles(False)
        text = str(state.metadata[HUMAN_ANSWER])
        state.messages = [ChatMessageUser(content=prompt.question_text(state.metadata["prompt"]))]
        state.output = ModelOutput.from_content(model=HUMAN_MODEL_NAME, content=text)
        if text.strip():
            state.messages.append(ChatMessageAssistant(content=text, model=HUMAN_MODEL_NAME))
        return state

    return solve


async def media_turn(
    release: Release, media: MediaSettings, state: TaskState
) -> tuple[list[Content], dict[str, Any]]:
    budget = await budget_for(get_model(), media.context_window, media.output_reserve)
    return await user_turn_for(release, media, str(state.model), state.metadata, budget)


def frames_received(record: dict[str, Any]) -> dict[str, Any] | None:
    """The few figures of the frames a model received that the report reads per model
    (small enough to stay in Inspect's sample summaries, unlike `sent_media`)."""
    if record.get("kind") != "frames":
        return None
    fit = record.get("token_fit") or {}
    return {
        "frames": record["frame_count"],
        "planned": record["planned_frames"],
        "side": max(record["frame_size_sent"]),
        "window": fit.get("window"),
        "window_source": fit.get("window_source"),
        "thinned_to_fit": fit.get("thinned_to_fit", False),
        "shrunk_to_fit": fit.get("shrunk_to_fit", False),
    }
