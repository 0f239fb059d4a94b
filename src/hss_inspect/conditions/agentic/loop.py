"""The agentic condition (paper Sec. 3.3, App. F) as an Inspect solver.

The conversation starts from the standard user turn (same media, notes and question)
after a system message naming the tools. Each step is one call of the model under
evaluation; its tool calls are run by Inspect (`execute_tools`), so every call, its
arguments, its result and its images are in the log. The conversation ends when the
model submits, answers without calling a tool, or reaches a limit (steps, output
tokens, tool images); the graded answer is then the submitted text, else the model's
latest text. The rubric judge grades it exactly as a single-call answer. A step the
provider's policy filter stops ends the conversation as a refusal (a zero, not graded).

Only the model call itself is the provider's: a tool's bug fails the sample with its
traceback, while a `ToolError` goes back to the model as the tool's result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ModelOutput,
    ModelUsage,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from hss_inspect.conditions import prompt
from hss_inspect.conditions.agentic.tools import AgentMedia, inspection_tools
from hss_inspect.conditions.agentic.views import ShownFrame, image_size
from hss_inspect.conditions.answer import check_refusal, is_provider_error, record_model_error
from hss_inspect.conditions.cache_plan import request_done, step_call
from hss_inspect.conditions.turn import local_media
from hss_inspect.core.settings import (
    DEFAULT_MODEL_ERRORS,
    POLICY_STOP,
    AgentSettings,
    FrameSettings,
    MediaSettings,
    ModelErrors,
)
from hss_inspect.data.release import Release
from hss_inspect.media.uri import decode_data_uri
from hss_inspect.providers.limits import TokenRule, applied_limits, frame_settings_for
from hss_inspect.providers.tokens import image_tokens

# Room kept in each request for the conversation's own text (replies, tool arguments,
# notes and errors) beside the media: far more than 30 steps of it.
CONVERSATION_TEXT_BYTES = 200_000
# The same room in tokens, where the first turn was fitted to a context window: the
# conversation's replies and tool calls (a longer one meets the server's own refusal).
CONVERSATION_TEXT_TOKENS = 8_000


class ModelCallFailed(Exception):
    """The provider failed one step's model call (after Inspect's retries)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class Conversation:
    """What one agentic conversation cost and how it ended (kept in the sample's metadata)."""

    steps: int = 0
    usage: ModelUsage = field(default_factory=ModelUsage)
    tool_calls: Counter[str] = field(default_factory=Counter)
    tool_errors: int = 0
    ended_by: str = ""
    refusal: ModelOutput | None = None

    def record(self, output: ModelOutput) -> None:
        self.steps += 1
        if output.usage is not None:
            self.usage = self.usage + output.usage

    def record_tools(self, message: ChatMessageAssistant, results: list[ChatMessage]) -> None:
        self.tool_calls.update(call.function for call in message.tool_calls or [])
        self.tool_errors += sum(
            1 for m in results if isinstance(m, ChatMessageTool) and m.error is not None
        )


def limit_reached(conversation: Conversation, media: AgentMedia, limits: AgentSettings) -> str:
    """The limit that ends the conversation before another step, or '' when none has."""
    if media.image_limit_reached:
        return "image_limit"
    if conversation.steps >= limits.max_steps:
        return "step_limit"
    if conversation.usage.output_tokens >= limits.max_output_tokens:
        return "token_limit"
    return ""


@solver
def hss_agent(
    release: Release,
    media: MediaSettings,
    limits: AgentSettings,
    model_errors: ModelErrors = DEFAULT_MODEL_ERRORS,
) -> Solver:
    """Let the model inspect the media with tools, then grade what it submits.

    A provider error in a model call that survives Inspect's retries is handled as in
    the single-call condition (`hss_inspect.conditions.answer`): the sample fails (the default), or
    with `model_errors=omit` the attempt is left out with the error recorded; a size
    refusal fails the sample.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        agent_media = await conversation_media(release, media, limits, state)
        tools = inspection_tools(agent_media)
        state.messages.insert(
            0, ChatMessageSystem(content=prompt.agent_system_message(agent_media.media_type))
        )
        model = get_model()
        conversation = Conversation()
        try:
            await converse(state, tools, agent_media, limits, conversation)
        except ModelCallFailed as failed:
            conversation.ended_by = "model_error"
            state.metadata["agent"] = agent_record(conversation, agent_media, limits, "")
            record_model_error(state, failed.error, model_errors)
            return state
        if conversation.refusal is not None:
            state.output = conversation.refusal
            state.output.usage = conversation.usage
            state.metadata["agent"] = agent_record(conversation, agent_media, limits, "")
            return state
        answer = agent_media.answer or latest_text(state.messages)
        state.output = ModelOutput.from_content(model=str(model), content=answer)
        state.output.usage = conversation.usage
        state.metadata["agent"] = agent_record(conversation, agent_media, limits, answer)
        return state

    return solve


async def converse(
    state: TaskState,
    tools: list[Tool],
    media: AgentMedia,
    limits: AgentSettings,
    conversation: Conversation,
) -> None:
    while not (ended := limit_reached(conversation, media, limits)):
        output = await model_step(state, tools, conversation.steps + 1)
        check_refusal(state, output)
        conversation.record(output)
        state.messages.append(output.message)
        if output.stop_reason == POLICY_STOP:
            conversation.refusal = output
            ended = "refused"
            break
        if not output.message.tool_calls:
            ended = "answered_without_submit"
            break
        executed = await execute_tools(state.messages, tools)
        raise_machine_errors(state, executed.messages)
        state.messages.extend(executed.messages)
        conversation.record_tools(output.message, executed.messages)
        if media.answer is not None:
            ended = "submitted"
            break
    conversation.ended_by = ended


async def model_step(state: TaskState, tools: list[Tool], step: int) -> ModelOutput:
    """One call of the model, cached as the plan says for this step; a provider failure is
    marked as such, a bug is not."""
    model, config = step_call(state, step)
    try:
        output = await model.generate(state.messages, tools, config=config)
    except Exception as exc:
        if is_provider_error(exc):
            raise ModelCallFailed(exc) from exc
        raise
    if step == 1:
        request_done(state)
    return output


class ToolFailed(RuntimeError):
    """A tool failed for a reason of this machine, not of its arguments: the sample's error."""


# What the model can act on: a bad argument (our tools raise ToolError, Inspect reports it as
# "unknown") or arguments that do not parse. Inspect also turns a tool's TimeoutError,
# FileNotFoundError, PermissionError and the like into tool results; from these tools they
# mean this machine failed, so they end the sample instead.
MODEL_ACTIONABLE_TOOL_ERRORS = ("unknown", "parsing")


def raise_machine_errors(state: TaskState, results: list[ChatMessage]) -> None:
    for message in results:
        if not isinstance(message, ChatMessageTool) or message.error is None:
            continue
        error = message.error
        if error.type not in MODEL_ACTIONABLE_TOOL_ERRORS:
            raise ToolFailed(
                f"task {state.metadata.get('task_id', state.sample_id)}: the "
                f"{message.function} tool failed on this machine ({error.type}: "
                f"{error.message}); fix the cause and re-run the sample with inspect eval-retry"
            )


def latest_text(messages: list[ChatMessage]) -> str:
    """The model's most recent non-empty text: its answer when it never submitted."""
    for message in reversed(messages):
        if isinstance(message, ChatMessageAssistant) and message.text.strip():
            return message.text.strip()
    return ""


async def conversation_media(
    release: Release, media: MediaSettings, limits: AgentSettings, state: TaskState
) -> AgentMedia:
    """The tools' view of this sample: its file, what the first turn showed, the image budget."""
    sent = state.metadata["sent_media"]
    provider = applied_limits(media, str(state.model))
    # the first turn's frame settings, fitted to the window: the tools' frames match them
    fitted = sent.get("frame_settings")
    frame_settings = FrameSettings(**fitted) if fitted else frame_settings_for(media, provider)
    first_turn_images = count_images(state.messages)
    budget = limits.max_tool_images
    if frame_settings.max_images is not None:
        # A per-request image cap covers the whole conversation, resent history included.
        budget = max(0, min(budget, frame_settings.max_images - first_turn_images))
    agent_media = AgentMedia(
        media_type=state.metadata["media_type"],
        path=await local_media(release, state),
        frame_settings=frame_settings,
        settings=limits,
        image_budget=budget,
        duration=sent.get("duration"),
        byte_budget=tool_byte_budget(provider.request_budget(), sent),
        token_budget=tool_token_budget(sent.get("token_fit") or {}),
        image_cost=image_cost_of(sent.get("token_fit") or {}),
    )
    if sent["kind"] == "image":
        agent_media.views.image_size = (int(sent["width"]), int(sent["height"]))
    elif sent["kind"] == "frames":
        agent_media.views.add_frames(sent_frames(state.messages, sent))
    return agent_media


def tool_token_budget(token_fit: dict[str, Any]) -> int | None:
    """Input tokens left for tool images once the first turn (as fitted) and the
    conversation's text are counted; None when the first turn had no window to fit."""
    window_left = token_fit.get("input_tokens")
    first_turn = token_fit.get("estimated_tokens")
    if window_left is None or first_turn is None:
        return None
    return max(0, int(window_left) - int(first_turn) - CONVERSATION_TEXT_TOKENS)


def image_cost_of(token_fit: dict[str, Any]) -> Callable[[int, int], int] | None:
    """Tokens of one tool image by the rule the first turn was fitted with."""
    recorded = token_fit.get("rule")
    if recorded is None:
        return None
    rule = TokenRule.from_record(recorded)
    return lambda width, height: image_tokens(rule, width, height) or 0


def tool_byte_budget(request_budget: int | None, sent: dict[str, Any]) -> int | None:
    """Encoded bytes left for tool images in every request after the first turn's media,
    with room for the conversation's text; None when the provider states no limit."""
    if request_budget is None:
        return None
    first_turn = int((sent.get("payload") or {}).get("estimated_request_bytes", 0))
    return max(0, request_budget - first_turn - CONVERSATION_TEXT_BYTES)


def sent_frames(messages: list[ChatMessage], sent: dict[str, Any]) -> list[ShownFrame]:
    """The frames of the first turn, with their sampling-plan slots and shown sizes."""
    images = [decode_data_uri(c.image) for c in first_turn_images_of(messages)]
    rate = float(sent["effective_fps"])
    return [
        ShownFrame(rate, round(time * rate), jpeg, *image_size(jpeg))
        for time, jpeg in zip(sent["timestamps"], images, strict=True)
    ]


def first_turn_images_of(messages: list[ChatMessage]) -> list[ContentImage]:
    user = next(m for m in messages if isinstance(m, ChatMessageUser))
    content = user.content if isinstance(user.content, list) else []
    return [c for c in content if isinstance(c, ContentImage)]


def count_images(messages: list[ChatMessage]) -> int:
    return sum(
        1
        for m in messages
        if isinstance(m.content, list)
        for c in m.content
        if isinstance(c, ContentImage)
    )


def agent_record(
    conversation: Conversation, media: AgentMedia, limits: AgentSettings, answer: str
) -> dict[str, Any]:
    return {
        "ended_by": conversation.ended_by,
        "steps": conversation.steps,
        "tool_calls": dict(conversation.tool_calls),
        "tool_errors": conversation.tool_errors,
        "tool_images": media.images_returned,
        "image_budget": media.image_budget,
        "tool_image_bytes": media.bytes_returned,
        "tool_byte_budget": media.byte_budget,
        "tool_image_tokens": media.tokens_returned,
        "tool_token_budget": media.token_budget,
        "output_tokens": conversation.usage.output_tokens,
        "reasoning_tokens": conversation.usage.reasoning_tokens,
        "submitted": media.answer is not None,
        "answer_chars": len(answer),
        "limits": limits.as_dict(),
    }
