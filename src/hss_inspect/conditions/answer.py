"""Calling the model under evaluation: what counts as an answer, and what does not.

- A request the provider refuses for its size or count (HTTP 413, "request too large",
  too many images, a prompt over the context window) is never an answer: Inspect turns
  some of these into a `model_length` stop whose text is the error, which a judge would
  grade. It becomes an error on the sample naming the limit and the payload size.
- An empty answer after the output budget was spent is retried once with double the
  budget (the reference harness's rule); still empty, it counts as no answer.
- A provider error (by type: the SDKs' API errors with an HTTP status, timeouts and
  connection errors, Inspect's own model errors) that survives Inspect's own retries fails
  the sample by default (`model_errors=fail`), so `inspect eval-retry` can run it again;
  `model_errors=omit` leaves the attempt out instead (recorded, counted as `model_error`),
  for good. Any other exception is a bug and fails the sample with its traceback.
- In batch mode on Gemini the images go by Files API reference, as clips do: Inspect's
  batcher for it cannot write an inline image (`messages_to_send`, docs/batch.md).
"""

from __future__ import annotations

import asyncio
import re
import sys
import traceback
from collections.abc import Iterator
from typing import Any

from inspect_ai.model import ChatMessage, ContentDocument, ContentImage, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from hss_inspect.conditions.cache_plan import planned_config, planned_model, request_done
from hss_inspect.core.settings import DEFAULT_MODEL_ERRORS, ModelErrors
from hss_inspect.providers.batching import images_as_files
from hss_inspect.providers.context import batch_mode, max_tokens_sent

# The exception classes that mean the provider failed, as (module, class). The SDKs are
# optional, and an exception can only be an instance of a class whose module is loaded,
# so they are looked up in sys.modules and never imported here.
_PROVIDER_ERROR_CLASSES = (
    ("openai", "APIStatusError"),  # an HTTP status from the API
    ("openai", "APIConnectionError"),  # APITimeoutError too
    ("anthropic", "APIStatusError"),
    ("anthropic", "APIConnectionError"),
    ("google.genai.errors", "APIError"),
    ("httpx", "HTTPStatusError"),
    ("httpx", "TimeoutException"),
    ("httpx", "NetworkError"),
    ("httpx", "RemoteProtocolError"),
    ("httpx2", "HTTPStatusError"),  # the transport of recent openai SDKs
    ("httpx2", "TimeoutException"),
    ("httpx2", "NetworkError"),
    ("httpx2", "RemoteProtocolError"),
    # Inspect's own: a provider's error returned as output (raised from that error), and
    # its per-attempt timeouts. No public home; names pinned by tests/test_model_errors.py.
    ("inspect_ai.model._model", "ModelGenerateError"),
    ("inspect_ai.model._model", "AttemptTimeoutError"),
    ("inspect_ai.model._model", "StreamIdleTimeoutError"),
)
# Inspect's batchers (`--batch`) hand a request the provider failed inside a batch, or a
# whole batch it rejected, back to the waiting sample as a plain RuntimeError (OpenAI's
# rejected batches, Gemini's failed requests), raised where the batched request waits. No
# class marks it; that frame does. Names pinned by tests/test_batch.py.
_BATCH_RESULT_FRAME = ("inspect_ai.model._providers.util.batch", "generate_for_request")
# A request that timed out or lost its connection below any SDK (asyncio.TimeoutError is
# TimeoutError from Python 3.11 on).
_BUILTIN_PROVIDER_ERRORS: tuple[type[BaseException], ...] = (
    TimeoutError,
    asyncio.TimeoutError,
    ConnectionError,
)

# Wording of size and count refusals across providers (lowercase). Anthropic: HTTP 413
# `request_too_large`, "prompt is too long"; OpenAI: `context_length_exceeded`, "too many
# images"; Gemini: "Request payload size exceeds the limit"; gateways: "Request Entity
# Too Large".
_REFUSAL_MARKERS = (
    "request_too_large",
    "request too large",
    "request entity too large",
    "payload too large",
    "payload size",
    "size exceeds the limit",
    "exceeds the maximum size",
    "maximum request size",
    "too many images",
    "maximum number of images",
    "image exceeds",
    "image too large",
    "prompt is too long",
    "input is too long",
    "context_length_exceeded",
    "maximum context length",
    "context window",
)
_REFUSAL_STATUS = (413,)
_BUDGET_STOPS = ("max_tokens", "model_length")


class RequestRefused(RuntimeError):
    """The provider refused the request for its size or count: an error on the sample."""


def looks_like_size_refusal(text: str, status: int | None = None) -> bool:
    lowered = text.lower()
    return (
        status in _REFUSAL_STATUS
        or any(m in lowered for m in _REFUSAL_MARKERS)
        or server_limit_in(text) is not None
    )


# Length and image-count refusals of the servers open-weight models run on (lowercase),
# which Inspect's providers pass on as errors: vLLM's engine check once images are
# expanded ("maximum model length"), its renderer's and max_tokens checks, SGLang's two
# checks, Ollama's and llama.cpp's; and vLLM's image count (--limit-mm-per-prompt).
_SERVER_LENGTH_LIMITS = (
    (r"maximum model length of (\d+)", "vLLM"),
    (r"context length is only (\d+)", "vLLM"),
    (r"maximum context length is (\d+)", "vLLM"),
    (r"maximum context length of (\d+)", "SGLang"),
    (r"model's context length \((\d+) tokens\)", "SGLang"),
    (r"maximum allowed length \((\d+) tokens\)", "SGLang"),
    (r"available context size \((\d+) tokens\)", "llama.cpp"),
)
_SERVER_LENGTH_MARKERS = (
    "maximum model length",
    "maximum input length",
    "max_tokens must be at least 1",
    "longer than the model's context length",
    "exceeds the maximum allowed length",
    "exceeds the available context size",
    "exceed_context_size_error",
    "longer than the context length currently available",
)
_IMAGE_COUNT = re.compile(r"at most (\d+) (\w+)\(s\) may be provided in one (?:prompt|request)")


def server_limit_in(text: str) -> str | None:
    """The limit a server's refusal names ("a context window of 32768 tokens (vLLM)", "at
    most 16 image(s) per prompt"), "a context length limit" when it gives no number, or
    None when the text is no length or image-count refusal."""
    count = _IMAGE_COUNT.search(text.lower())
    if count:
        return f"at most {count.group(1)} {count.group(2)}(s) per prompt"
    for pattern, server in _SERVER_LENGTH_LIMITS:
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return f"a context window of {int(found.group(1)):,} tokens ({server})"
    lowered = text.lower()
    return "a context length limit" if any(m in lowered for m in _SERVER_LENGTH_MARKERS) else None


def token_budget_note(error: str, sent: dict[str, Any]) -> str:
    """What the frames were fitted to and how to set it, for a server's length or image
    count refusal (empty for other refusals)."""
    limit = server_limit_in(error)
    if limit is None:
        return ""
    if limit.startswith("at most"):
        return (
            f" The server takes {limit}: start vLLM with --limit-mm-per-prompt "
            "'{\"image\": 500}' (or what the clip needs), or set -T max_images to the limit."
        )
    fit = sent.get("token_fit") or {}
    window = fit.get("window")
    used = (
        f"a context window of {window:,} tokens ({fit.get('window_source')}: "
        f"{fit.get('window_detail')}) less {fit.get('output_reserve', 0):,} for the output "
        f"({fit.get('output_reserve_source')}); estimated {fit.get('estimated_tokens') or 0:,} "
        "input tokens"
        if isinstance(window, int)
        else "no context window (none was known: the frames were not fitted)"
    )
    return (
        f" The server's limit is {limit}; the frames were fitted to {used}. Set "
        "-T context_window to the server's window (vLLM --max-model-len, SGLang "
        "--context-length, Ollama num_ctx), lower --max-tokens or -T output_reserve, or "
        "correct the model's image-token rule (-T token_rules)."
    )


def refusal_in_output(output: ModelOutput) -> str | None:
    """The error text when `output` is a refused request dressed as a stop, else None."""
    if output.stop_reason != "model_length" and output.error is None:
        return None
    text = output.error or output.completion
    if "error code: 413" in text.lower() or looks_like_size_refusal(text):
        return text
    return None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it was raised from. Not its context: a bug raised while a provider
    error was being handled is still a bug."""
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        seen = seen.__cause__


def provider_error_classes() -> tuple[type[BaseException], ...]:
    """The provider failure classes of the SDKs loaded in this process."""
    loaded = []
    for module_name, class_name in _PROVIDER_ERROR_CLASSES:
        found = getattr(sys.modules.get(module_name), class_name, None)
        if isinstance(found, type) and issubclass(found, BaseException):
            loaded.append(found)
    return (*_BUILTIN_PROVIDER_ERRORS, *loaded)


def failed_in_batch(exc: BaseException) -> bool:
    """A plain RuntimeError that Inspect's batcher raised for a batched request."""
    if type(exc) is not RuntimeError:
        return False
    module, function = _BATCH_RESULT_FRAME
    return any(
        frame.f_code.co_name == function and frame.f_globals.get("__name__") == module
        for frame, _ in traceback.walk_tb(exc.__traceback__)
    )


def is_provider_error(exc: BaseException) -> bool:
    """Whether the provider failed (by type, along the chain of causes, or as a batch the
    provider failed); anything else, a KeyError, a TypeError, an assertion, is a bug."""
    classes = provider_error_classes()
    return any(isinstance(link, classes) or failed_in_batch(link) for link in _causes(exc))


# Client errors a later request may not meet again: a timeout, "too early", a rate limit.
_TRANSIENT_CLIENT_STATUS = (408, 425, 429)


def is_transient(exc: BaseException) -> bool:
    """Whether a provider failure is one the same request may not meet again (a server
    error, a rate limit, a timeout, a lost connection). Another client error (400, 404,
    422, ...) answers the request itself, which HSS built: with `model_errors=omit` it
    still fails the sample, so a request malformed for every clip of a kind cannot quietly
    leave those tasks out."""
    status = status_of(exc)
    return status is None or status >= 500 or status in _TRANSIENT_CLIENT_STATUS


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a provider error, whichever SDK raised it."""
    for link in _chain(exc):
        for attr in ("status_code", "code", "status"):
            value = getattr(link, attr, None)
            if isinstance(value, int):
                return value
    return None


def refusal_in_error(exc: BaseException) -> str | None:
    status = status_of(exc)
    messages = " ".join(str(link) for link in _chain(exc))
    if looks_like_size_refusal(messages, status):
        provider = getattr(exc, "provider_message", None)
        return str(provider or exc).strip()[-600:]
    return None


def refusal_message(task_id: str, model: str, error: str, sent: dict[str, Any]) -> str:
    """One message naming the model's limits and what the request carried."""
    payload = sent.get("payload") or {}
    limits = sent.get("limits") or {}
    size = payload.get("estimated_request_bytes")
    carried = (
        f"{payload.get('images', '?')} image(s), about {size / 1e6:.2f} MB ({size} bytes) encoded"
        if isinstance(size, int)
        else "an unknown payload"
    )
    limit_mb = limits.get("request_max_bytes")
    known = (
        f"request {limit_mb / 1e6:.1f} MB ({limit_mb} bytes)"
        if isinstance(limit_mb, int)
        else "no request size limit on record"
    )
    return (
        f"task {task_id}: {model} refused the request for its size or count "
        f"({' '.join(error.split())[:300]}). It carried {carried}; the limits applied for "
        f"{limits.get('provider', 'this provider')} were {known}, "
        f"{limits.get('max_images') or 'no'} image cap. Lower -T max_images or "
        "-T frame_bytes_budget, or correct this provider's entry in "
        "task_configs/model_limits.yaml." + token_budget_note(error, sent)
    )


def is_empty_after_budget(output: ModelOutput) -> bool:
    return not output.completion.strip() and output.stop_reason in _BUDGET_STOPS


def output_budget(output: ModelOutput) -> int | None:
    """The output budget the model had: configured, else the provider's default, else spent."""
    configured, _ = max_tokens_sent(get_model())
    if configured is None and output.usage is not None:
        configured = output.usage.output_tokens
    return configured


class ProviderFailed(RuntimeError):
    """The provider failed this sample's request after Inspect's retries: the sample's error,
    which `inspect eval-retry` runs again."""


def provider_failure_message(state: TaskState, exc: Exception) -> str:
    failure = model_error_record(exc)
    status = f" (HTTP {failure['status']})" if failure["status"] is not None else ""
    again = (
        "inspect eval-retry runs it again once the provider answers"
        if is_transient(exc)
        else "the provider refused the request itself, so check the request it names"
    )
    return (
        f"task {state.metadata.get('task_id', state.sample_id)}: {state.model} failed after "
        f"Inspect's retries{status}: {failure['type']}: {failure['message'][:600]}; {again}"
    )


def model_error_record(exc: Exception) -> dict[str, Any]:
    """The provider's own error (not the retry wrapper Inspect raises from it)."""
    classes = provider_error_classes()
    own = next((link for link in _causes(exc) if isinstance(link, classes)), exc)
    return {
        "type": type(own).__name__,
        "status": status_of(exc),
        "message": str(getattr(own, "provider_message", None) or own).strip()[-1000:],
    }


@solver
def answer(model_errors: ModelErrors = DEFAULT_MODEL_ERRORS) -> Solver:
    """Generate the answer under the rules above."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        try:
            state = await _generate_checked(state, generate)
            if is_empty_after_budget(state.output):
                state = await _retry_with_double_budget(state, generate)
        except Exception as exc:
            record_model_error(state, exc, model_errors)
        return state

    return solve


def record_model_error(state: TaskState, exc: Exception, model_errors: ModelErrors) -> None:
    """Re-raise what must fail the sample (anything not the provider's, a size refusal, a
    provider error under `model_errors=fail`, a client error that answers the request
    itself), else leave the attempt out with the error recorded. Call from an except block."""
    if not is_provider_error(exc):
        raise exc
    refused = refusal_in_error(exc)
    if refused is not None:
        raise _refused(state, refused) from exc
    if model_errors == "fail" or not is_transient(exc):
        raise ProviderFailed(provider_failure_message(state, exc)) from exc
    state.metadata["model_error"] = model_error_record(exc)
    state.output = ModelOutput(model=str(state.model), error=str(exc)[-1000:])


def check_refusal(state: TaskState, output: ModelOutput) -> None:
    """Raise the sample error for a refused request dressed as a `model_length` stop."""
    refused = refusal_in_output(output)
    if refused is not None:
        raise _refused(state, refused)


async def _generate_checked(state: TaskState, generate: Generate, **config: Any) -> TaskState:
    """One call of the model, cached as the sample's plan says (conditions/cache_plan.py)."""
    model = planned_model(state)
    settings = planned_config(state, **config)
    messages = messages_to_send(state)
    if model is get_model() and messages is state.messages:
        state = await generate(state, tool_calls="none", **settings.model_dump(exclude_none=True))
    else:  # another instance (the plan's cache TTL) or other parts: Inspect's generate, by hand
        state.output = await model.generate(messages, config=settings)
        state.messages.append(state.output.message)
    request_done(state)
    check_refusal(state, state.output)
    return state


def messages_to_send(state: TaskState) -> list[ChatMessage]:
    """The sample's messages; in batch mode on an API whose Inspect batcher cannot carry an
    inline image (Gemini's), copies whose images are documents of the same bytes and MIME
    type. Inspect's google provider uploads a document through the Files API and sends its
    reference, so the model gets the same images while the sample keeps its own messages
    (its log shows them as images). Recorded in `sent_media` as `image_transport`."""
    model = get_model()
    if not images_as_files(str(model), batch_mode(model)):
        return state.messages
    messages = [images_as_documents(message) for message in state.messages]
    if any(sent is not own for sent, own in zip(messages, state.messages, strict=True)):
        state.metadata.setdefault("sent_media", {})["image_transport"] = "files_api"
        return messages
    return state.messages


def images_as_documents(message: ChatMessage) -> ChatMessage:
    """A user or system message with each inline image as a document (a tool result's
    documents would be dropped by the google provider, so those are left as they are)."""
    content = message.content
    if message.role not in ("user", "system") or isinstance(content, str):
        return message
    if not any(isinstance(part, ContentImage) for part in content):
        return message
    parts = [
        ContentDocument(document=part.image) if isinstance(part, ContentImage) else part
        for part in content
    ]
    return message.model_copy(update={"content": parts})


def _refused(state: TaskState, error: str) -> RequestRefused:
    sent = state.metadata.get("sent_media") or {}
    return RequestRefused(
        refusal_message(
            state.metadata.get("task_id", str(state.sample_id)), str(state.model), error, sent
        )
    )


async def _retry_with_double_budget(state: TaskState, generate: Generate) -> TaskState:
    first = state.output
    budget = output_budget(first)
    retry: dict[str, Any] = {
        "first_stop_reason": first.stop_reason,
        "first_output_tokens": first.usage.output_tokens if first.usage else None,
        "first_max_tokens": budget,
    }
    if budget is None:
        state.metadata["empty_answer_retry"] = {**retry, "skipped": "no known output budget"}
        return state
    if state.messages and state.messages[-1].role == "assistant":
        state.messages.pop()  # the empty reply is not part of the conversation retried
    state = await _generate_checked(state, generate, max_tokens=budget * 2)
    state.metadata["empty_answer_retry"] = {
        **retry,
        "max_tokens": budget * 2,
        "still_empty": not state.output.completion.strip(),
        "stop_reason": state.output.stop_reason,
    }
    return state
