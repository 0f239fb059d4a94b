"""The token budget of the model under evaluation: its context window and where it came
from, and the output it must keep free. A thin adapter around Inspect and the serving
endpoint; the arithmetic is in `providers.fit`.

The window, first found of:
1. `-T context_window=N` (option);
2. the server itself (server): vLLM and SGLang list `max_model_len` per model in their
   OpenAI-compatible `GET /v1/models` (behind Inspect's `vllm/`, `sglang/` and
   `openai-api/` providers); Ollama reports the loaded model's window in `GET /api/ps`,
   else its Modelfile's `num_ctx` in `POST /api/show`, else its default;
3. Inspect's model information (model info: `get_model_info`, which users extend with
   `set_model_info`): `context_length`, and `input_tokens` where that is lower;
4. none: no token limit, frames as before.

The output kept free is the `max_tokens` Inspect will send (`--max-tokens`, else the
provider's default that Inspect fills in), else `-T output_reserve`: servers such as vLLM
then let the answer use the rest of the window, which must not be taken by frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sys
import weakref
from dataclasses import dataclass
from typing import Any

import httpx
from inspect_ai.model import GenerateConfig, Model, get_model, get_model_info

from hss_inspect.core.options import spell
from hss_inspect.providers.batching import batching_requested
from hss_inspect.providers.fit import TokenBudget

logger = logging.getLogger(__name__)

PROBE_TIMEOUT = 10.0
# Ollama's own default when neither the loaded model nor its Modelfile says (its docs:
# 4096 below 24 GiB of VRAM; more on larger GPUs, which only /api/ps then reports).
OLLAMA_DEFAULT_CONTEXT = 4096
OPENAI_COMPATIBLE = ("vllm", "sglang", "openai-api")
# Providers whose Model can be built for `hss-inspect estimate` without starting a server
# or loading weights (sglang only with a base URL: without one, it starts a server).
CLIENT_ONLY = (
    "vllm",
    "openai-api",
    "ollama",
    "anthropic",
    "openai",
    "google",
    "together",
    "openrouter",
    "groq",
    "fireworks",
    "mistral",
    "grok",
    "deepseek",
)


@dataclass(frozen=True)
class Endpoint:
    """A serving endpoint the window can be asked of."""

    provider: str  # vllm, sglang, openai-api or ollama
    base_url: str  # as the OpenAI SDK uses it, `.../v1`
    model: str  # the name the server knows the model by
    api_key: str | None = None


@dataclass(frozen=True)
class ServedWindow:
    window: int
    detail: str
    root: str | None = None  # the checkpoint served (vLLM/SGLang `root`)


# ---- what the servers say (pure) --------------------------------------------------------


def _cards(body: Any) -> list[dict[str, Any]]:
    cards = body.get("data") if isinstance(body, dict) else body
    return [c for c in cards or [] if isinstance(c, dict)] if isinstance(cards, list) else []


def _card_window(card: dict[str, Any]) -> int | None:
    # vLLM and SGLang: max_model_len; hosted OpenAI-compatible lists: context_length
    for key in ("max_model_len", "context_length"):
        value = card.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def window_in_models_list(body: Any, served: str) -> ServedWindow | None:
    """The window of `served` in a `GET /v1/models` reply: its card (by id, else the only
    card), or for a LoRA card without one, its parent's."""
    cards = _cards(body)
    by_id = {str(c.get("id")): c for c in cards}
    card = by_id.get(served) or next(
        (c for c in cards if str(c.get("id")).lower() == served.lower()), None
    )
    if card is None and len(cards) == 1:
        card = cards[0]
    if card is None:
        return None
    window = _card_window(card)
    parent = by_id.get(str(card.get("parent")))
    if window is None and parent is not None:
        window, card = _card_window(parent), parent
    if window is None:
        return None
    owner = card.get("owned_by") or "server"
    root = card.get("root") if isinstance(card.get("root"), str) else None
    field = "max_model_len" if "max_model_len" in card else "context_length"
    return ServedWindow(window, f"{field} of {card.get('id')} in /v1/models ({owner})", root)


def _ollama_names(served: str) -> set[str]:
    return {served, served if ":" in served else f"{served}:latest"}


def window_in_ollama_ps(body: Any, served: str) -> ServedWindow | None:
    """The loaded model's window in Ollama's `GET /api/ps` reply."""
    models = body.get("models") if isinstance(body, dict) else None
    for entry in models or []:
        if not isinstance(entry, dict):
            continue
        names = {str(entry.get("name")), str(entry.get("model"))}
        window = entry.get("context_length")
        if names & _ollama_names(served) and isinstance(window, int) and window > 0:
            return ServedWindow(window, f"context_length of {served} in Ollama /api/ps (loaded)")
    return None


def window_in_ollama_show(body: Any, served: str) -> ServedWindow | None:
    """The window from Ollama's `POST /api/show` reply: the Modelfile's `num_ctx`, else
    Ollama's default capped by the trained window."""
    if not isinstance(body, dict):
        return None
    found = re.search(r"^\s*num_ctx\s+(\d+)", str(body.get("parameters") or ""), re.MULTILINE)
    if found:
        return ServedWindow(int(found.group(1)), f"num_ctx of {served}'s Modelfile (/api/show)")
    info = body.get("model_info") or {}
    trained = info.get(f"{info.get('general.architecture')}.context_length")
    window = min(OLLAMA_DEFAULT_CONTEXT, trained) if isinstance(trained, int) else None
    if window is None:
        return None
    return ServedWindow(
        window,
        f"Ollama's default context of {OLLAMA_DEFAULT_CONTEXT} tokens for {served} (the model "
        f"is not loaded; set OLLAMA_CONTEXT_LENGTH or num_ctx, and {spell('context_window')} "
        "to match)",
    )


# ---- asking the server ------------------------------------------------------------------


# One probe per event loop (one eval) and endpoint; a finished eval's loop takes its
# answers with it, so a later eval in the same process asks again.
_probes: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[Endpoint, asyncio.Future[ServedWindow | None]]
] = weakref.WeakKeyDictionary()


async def served_window(endpoint: Endpoint) -> ServedWindow | None:
    """The endpoint's window for its model, asked once per run (samples share the answer)."""
    asked = _probes.setdefault(asyncio.get_running_loop(), {})
    probe = asked.get(endpoint)
    if probe is None:
        probe = asked[endpoint] = asyncio.ensure_future(_probe(endpoint))
    return await asyncio.shield(probe)


async def _probe(endpoint: Endpoint) -> ServedWindow | None:
    headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
    base = endpoint.base_url.rstrip("/")
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT, headers=headers) as client:
            if endpoint.provider == "ollama":
                return await _probe_ollama(client, base.removesuffix("/v1"), endpoint.model)
            reply = await client.get(f"{base}/models")
            reply.raise_for_status()
            return window_in_models_list(reply.json(), endpoint.model)
    except (httpx.HTTPError, ValueError) as exc:
        # the run goes on with Inspect's model information, or fits nothing: say so once
        logger.warning(
            "%s: the server at %s did not say its context window (%s); frames are fitted to "
            "Inspect's model information if it has the model, else not at all: set "
            "%s to fit them to the server's window",
            endpoint.model,
            base,
            exc,
            spell("context_window", "TOKENS"),
        )
        return None


async def _probe_ollama(client: httpx.AsyncClient, root: str, model: str) -> ServedWindow | None:
    loaded = await client.get(f"{root}/api/ps")
    if loaded.is_success:
        found = window_in_ollama_ps(loaded.json(), model)
        if found is not None:
            return found
    shown = await client.post(f"{root}/api/show", json={"model": model})
    return window_in_ollama_show(shown.json(), model) if shown.is_success else None


# ---- Inspect's side ---------------------------------------------------------------------


def provider_of(model_name: str) -> str:
    return model_name.split("/", 1)[0].lower()


def endpoint_of(model: Model) -> Endpoint | None:
    """Where the model's server is, for the providers whose servers report a window."""
    provider = provider_of(str(model))
    if provider not in (*OPENAI_COMPATIBLE, "ollama"):
        return None
    api = model.api
    base = api.base_url or model.explicit_base_url
    if base is None and provider == "vllm":
        # the vllm provider learns its URL only at its first request
        port = getattr(api, "port", None)
        base = os.environ.get("VLLM_BASE_URL") or (f"http://localhost:{port}/v1" if port else None)
    if not base:
        return None
    served = getattr(api, "service_model_name", None)
    name = served() if callable(served) else api.model_name
    return Endpoint(provider, str(base), str(name), api.api_key)


def generate_config_of(model: Model) -> GenerateConfig:
    """The settings Inspect generates with for `model`: its own, and for the model under
    evaluation the eval's and the task's on top (a recipe's or a Flow spec's max_tokens and
    reasoning effort sit on the task), as Inspect merges them when it calls the model."""
    # No public function returns the merged config; both names are pinned by
    # tests/test_token_fit.py::test_the_output_kept_free_follows_the_tasks_generate_config.
    from inspect_ai.model._generate_config import (
        active_generate_config,  # inspect-evals-lint: ignore[private_api_imports] -- see above
    )
    from inspect_ai.model._model import (
        active_model,  # inspect-evals-lint: ignore[private_api_imports] -- see above
    )

    if model == active_model():
        return model.config.merge(active_generate_config())
    return model.config


def batch_mode(model: Model) -> bool:
    """Whether Inspect sends `model`'s requests through its batcher (`--batch`, or a
    GenerateConfig's `batch`). Known when the task is created: Inspect sets the eval's
    config as the active one before it calls the @task function."""
    return batching_requested(generate_config_of(model).batch)


def max_tokens_sent(model: Model) -> tuple[int | None, str]:
    """The `max_tokens` Inspect sends the model, and why: the configured one (--max-tokens,
    or the task's generate config), else the provider's default for that configuration
    (None for providers that send none)."""
    config = generate_config_of(model)
    if config.max_tokens is not None:
        given = model.config.max_tokens == config.max_tokens
        return config.max_tokens, "--max-tokens" if given else "the task's generate config"
    default = model.api.max_tokens_for_config(config) or model.api.max_tokens()
    return default, f"the max_tokens Inspect sends to {provider_of(str(model))} by default"


def model_info_window(model: Model | str) -> tuple[int | None, int | None, str] | None:
    """(context length, lower input cap or None, detail) from Inspect's model information."""
    info = get_model_info(model)
    if info is None or (info.context_length is None and info.input_tokens is None):
        return None
    cap = info.input_tokens
    lower_cap = cap if cap is not None and cap != info.context_length else None
    name = model.canonical_name() if isinstance(model, Model) else model
    return info.context_length, lower_cap, f"get_model_info({name!r})"


async def budget_for(model: Model, context_window: int | None, output_reserve: int) -> TokenBudget:
    """The token budget of `model` (the active Model of a sample, or one built for
    `hss-inspect estimate`) under the task's options."""
    sent, why = max_tokens_sent(model)
    reserve, reserve_source = (
        (sent, why) if sent is not None else (output_reserve, spell("output_reserve"))
    )
    if context_window is not None:
        detail = spell("context_window", context_window)
        return TokenBudget(context_window, "option", detail, reserve, reserve_source)
    endpoint = endpoint_of(model)
    served = await served_window(endpoint) if endpoint is not None else None
    if served is not None:
        return TokenBudget(
            served.window, "server", f"{served.detail} at {endpoint.base_url if endpoint else '?'}",
            reserve, reserve_source, served_root=served.root,
        )  # fmt: skip
    info = model_info_window(model)
    if info is not None:
        window, cap, detail = info
        return TokenBudget(window, "model info", detail, reserve, reserve_source, cap)
    return TokenBudget(None, "none", "no window known", reserve, reserve_source)


def model_for_estimate(
    model_name: str, base_url: str | None, max_tokens: int | None = None
) -> Model | None:
    """The Model `inspect eval` would build, where building it starts nothing (no server,
    no weights); None otherwise. Without the API key in the environment it is built with a
    placeholder key: the estimate sends no request to the model, only the window probe."""
    provider = provider_of(model_name)
    can_build = provider in CLIENT_ONLY or (
        provider == "sglang" and (base_url or os.environ.get("SGLANG_BASE_URL"))
    )
    if not can_build:
        return None
    for api_key in (None, "hss-inspect-estimate"):
        try:
            # Inspect prints its banner on stdout when it first builds a model; the
            # estimate's stdout is its figures (--json), so the banner goes to stderr
            with contextlib.redirect_stdout(sys.stderr):
                return get_model(
                    model_name,
                    base_url=base_url,
                    api_key=api_key,
                    config=GenerateConfig(max_tokens=max_tokens),
                    memoize=False,
                )
        except Exception as exc:  # a missing key or client package: try without, then give up
            logger.info("%s: not built for the estimate (%s)", model_name, exc)
    return None


def info_name(model_name: str) -> str:
    """The name to look a model up by without building it: a provider that could start a
    server or load weights when Inspect resolves the name is left out."""
    if provider_of(model_name) in CLIENT_ONLY:
        return model_name
    return model_name.split("/", 1)[-1]


async def budget_for_name(
    model_name: str,
    context_window: int | None,
    output_reserve: int,
    base_url: str | None = None,
    max_tokens: int | None = None,
) -> TokenBudget:
    """`budget_for` from a model name, as `hss-inspect estimate` knows it."""
    model = model_for_estimate(model_name, base_url, max_tokens)
    if model is not None:
        return await budget_for(model, context_window, output_reserve)
    reserve, why = (
        (max_tokens, "--max-tokens")
        if max_tokens is not None
        else (output_reserve, spell("output_reserve"))
    )
    if context_window is not None:
        detail = spell("context_window", context_window)
        return TokenBudget(context_window, "option", detail, reserve, why)
    info = model_info_window(info_name(model_name))
    if info is None:
        return TokenBudget(None, "none", "no window known", reserve, why)
    window, cap, detail = info
    return TokenBudget(window, "model info", detail, reserve, why, cap)
