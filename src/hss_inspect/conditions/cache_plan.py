"""The cache plan applied to the requests of the model under evaluation.

`providers/caching.py` decides, per request, from the provider's rules and the run's pace;
this module keeps that pace as this process sees it (fed by the `hss_run_pace` hook: the
run's epochs and samples, when each sample-epoch starts and ends), marks the shared block
of the user turn (Inspect's `ContentText.cache_breakpoint`), and gives the generate call
its settings: the model at the chosen TTL (Anthropic's TTL is a model argument, so a
second instance of the same model carries `cache_ttl=1h`), `cache_prompt=False` where
nothing should be written, and OpenAI's per-request retention and cache key. The decision
is recorded per sample in `cache_plan`, next to `sent_media`.

`-T cache_plan=inspect` leaves every request as Inspect sends it; `off` writes nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    Content,
    ContentText,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.solver import TaskState

from hss_inspect.core.settings import CACHE_PLAN_RECORD, CachePlan
from hss_inspect.providers.caching import (
    CacheDecision,
    CacheRules,
    Pace,
    Previous,
    Reuse,
    cache_safety,
    caching_rules_for,
    decide,
    offered_ttls,
    reuse_for,
)
from hss_inspect.providers.context import generate_config_of
from hss_inspect.providers.prices import text_tokens

RECORD_KEY = CACHE_PLAN_RECORD


# ---- the run's pace, as the hook reports it ---------------------------------------------


@dataclass
class _Request:
    sent: float
    ttl: str | None
    duration: float | None = None


@dataclass
class _Run:
    epochs: int | None
    samples: int | None
    running: dict[str, float] = field(default_factory=dict)  # sample uuid -> start
    durations: list[float] = field(default_factory=list)
    # of the sample-epochs that started after the first one finished: the first ones also
    # pay the run's start-up (imports, connections, downloads, first decodes)
    steady: list[float] = field(default_factory=list)
    first_finish: float | None = None
    started: set[tuple[str, int]] = field(default_factory=set)  # (sample id, epoch)
    requests: dict[tuple[str, int], _Request] = field(default_factory=dict)

    def pace(self) -> Pace:
        return Pace(self.samples, len(self.running), tuple(self.steady or self.durations))


_runs: dict[str, _Run] = {}
_run_of_sample: dict[str, str] = {}  # sample uuid -> eval id


def clock() -> float:
    return time.monotonic()


def run_started(eval_id: str, epochs: int | None, samples: int | None) -> None:
    _runs[eval_id] = _Run(epochs, samples)


def sample_started(eval_id: str, uuid: str, sample_id: str, epoch: int) -> None:
    run = _runs.get(eval_id)
    if run is None:
        return
    _run_of_sample[uuid] = eval_id
    run.running[uuid] = clock()
    run.started.add((sample_id, epoch))


def sample_finished(eval_id: str, uuid: str) -> None:
    run = _runs.get(eval_id)
    started = run.running.pop(uuid, None) if run is not None else None
    if run is not None and started is not None:
        now = clock()
        run.durations.append(now - started)
        if run.first_finish is None:
            run.first_finish = now
        elif started >= run.first_finish:
            run.steady.append(now - started)
    _run_of_sample.pop(uuid, None)


def run_finished(eval_id: str) -> None:
    _runs.pop(eval_id, None)


def _run_of(state: TaskState) -> _Run | None:
    eval_id = _run_of_sample.get(state.uuid)
    return _runs.get(eval_id) if eval_id is not None else None


# ---- the decision for a sample's first request ------------------------------------------


def pinned_ttl(model: Model) -> str | None:
    """A TTL the user pinned for Anthropic (`-M cache_ttl=5m|1h`); `auto` pins none."""
    value = model.model_args.get("cache_ttl")
    return str(value) if value in ("5m", "1h") else None


def _is_batch(model: Model) -> bool:
    return bool(generate_config_of(model).batch)


def reuse_of(state: TaskState, rules: CacheRules, next_step: bool) -> Reuse:
    """Who will read this sample's prefix, from what this process saw of the run."""
    run = _run_of(state)
    if run is None or run.epochs is None:
        return reuse_for(rules, None, None, False, Pace(None, 0), clock(), next_step)
    sample_id = str(state.sample_id)
    request = run.requests.get((sample_id, state.epoch - 1))
    previous = Previous(request.sent, request.duration, request.ttl) if request else None
    return reuse_for(
        rules,
        (state.epoch, run.epochs),
        previous,
        (sample_id, state.epoch + 1) in run.started,
        run.pace(),
        clock(),
        next_step,
    )


# ---- the first request of a sample --------------------------------------------------------


def plan_turn(
    state: TaskState,
    content: list[Content],
    sent: dict[str, Any],
    strategy: CachePlan,
    next_step: bool = False,
) -> dict[str, Any]:
    """Decide how the first request caches its prefix, mark `content` (the user turn, the
    question last) accordingly, and return the sample's `cache_plan` record."""
    model = get_model()
    rules = caching_rules_for(str(model))
    prefix = prefix_tokens(sent)
    record: dict[str, Any] = {"strategy": strategy, **rules.as_dict(), "prefix_tokens": prefix}
    if strategy == "inspect":
        return {**record, "action": "inspect", "ttl": None, "write_ttl": inspect_ttl(model, rules)}
    if strategy == "off":
        decision = CacheDecision("none", None, "-T cache_plan=off")
    else:
        reuse = reuse_of(state, rules, next_step)
        decision = decide(rules, plan_ttls(rules, model), prefix, reuse, cache_safety())
        record.update(
            epoch=state.epoch,
            later_attempts=reuse.later_attempts,
            gap_seconds=reuse.gap.seconds,
            gap_source=reuse.gap.source,
        )
    call = apply_decision(content, rules, decision, model)
    _remember_request(state, call.get("ttl"))
    marked = decision.action != "none" and rules.mechanism == "breakpoints"
    return {
        **record,
        **decision.as_dict(),
        "write_ttl": decision.ttl if marked else None,
        "call": call,
    }


def prefix_tokens(sent: dict[str, Any]) -> int | None:
    """Tokens of the user turn, all of it shared by the sample's attempts: its images by
    the provider's formula and its text at a typical rate (the token fit's bound for the
    text is an upper one, too high to weigh a minimum against)."""
    images = (sent.get("token_fit") or {}).get("estimated_image_tokens")
    if images is None:
        return None
    return int(images) + text_tokens(int((sent.get("payload") or {}).get("text_bytes", 0)))


def plan_ttls(rules: CacheRules, model: Model) -> list[Any]:
    """The TTLs the plan may choose: in batch mode the one the provider advises for batches
    (a batch may be processed at any time within its window)."""
    ttls = offered_ttls(rules, str(model), pinned_ttl(model))
    if _is_batch(model) and rules.batch_ttl is not None:
        ttls = [t for t in ttls if t.name == rules.batch_ttl]
    return ttls


def inspect_ttl(model: Model, rules: CacheRules) -> str | None:
    """The TTL Inspect writes Anthropic's entries at: the pinned one, else 5 minutes."""
    if rules.mechanism != "breakpoints":
        return None
    return pinned_ttl(model) or "5m"


def is_direct(model: Model) -> bool:
    """Whether the model talks to its provider's own endpoint (no custom base URL), where
    Inspect sends OpenAI's explicit cache marks."""
    import os

    base = model.api.base_url or model.explicit_base_url
    env = os.environ.get("OPENAI_BASE_URL") or os.environ.get("INSPECT_EVAL_MODEL_BASE_URL")
    return not (base or env)


def apply_decision(
    content: list[Content], rules: CacheRules, decision: CacheDecision, model: Model
) -> dict[str, Any]:
    """Mark the turn and return how its request is sent: `ttl` of the model instance,
    `cache_prompt`, and OpenAI's per-request fields (`extra_body`)."""
    marked = decision.action in ("write", "read")
    if rules.mechanism == "breakpoints":
        if not marked:
            return {"cache_prompt": False, "ttl": None}
        _mark(content, -1)
        return {"ttl": decision.ttl, "marked": "question"}
    if rules.mechanism == "explicit":
        if rules.marks_need_direct and not is_direct(model):
            return {"ttl": None, "note": "Inspect sends cache marks only to api.openai.com"}
        # explicit mode: the question's prefix is written; a mark on the short note
        # before the media (under the minimum) writes nothing at all
        _mark(content, -1 if marked else 0)
        return {"ttl": decision.ttl if marked else None, "marked": "question" if marked else "note"}
    if rules.mechanism == "retention" and marked and decision.ttl == "24h":
        return {"ttl": "24h", "extra_body": {"prompt_cache_retention": "24h"}}
    return {"ttl": decision.ttl if marked else None}


def _mark(content: list[Content], index: int) -> None:
    part = content[index]
    if isinstance(part, ContentText):
        content[index] = part.model_copy(update={"cache_breakpoint": True})


def _remember_request(state: TaskState, ttl: str | None) -> None:
    run = _run_of(state)
    if run is not None:
        run.requests[(str(state.sample_id), state.epoch)] = _Request(clock(), ttl)


def request_done(state: TaskState) -> None:
    """Record how long the sample's first request took (the next attempt's gap counts it)."""
    run = _run_of(state)
    request = run.requests.get((str(state.sample_id), state.epoch)) if run else None
    if request is not None and request.duration is None:
        request.duration = clock() - request.sent


# ---- the generate call -------------------------------------------------------------------


def planned_model(state: TaskState) -> Model:
    """The model instance the sample's first request goes to: the model under evaluation,
    or a second instance of it whose Anthropic `cache_ttl` is the plan's TTL."""
    model = get_model()
    call = (state.metadata.get(RECORD_KEY) or {}).get("call") or {}
    ttl = call.get("ttl")
    if ttl not in ("5m", "1h") or caching_rules_for(str(model)).mechanism != "breakpoints":
        return model
    return model_at_ttl(model, ttl)


def model_at_ttl(model: Model, ttl: str) -> Model:
    """The model with Anthropic's cache TTL set to `ttl`: itself when its own TTL is that
    (5 minutes unless pinned), else an instance with the same arguments and settings."""
    if (pinned_ttl(model) or "5m") == ttl:
        return model
    return get_model(
        str(model),
        config=generate_config_of(model),
        base_url=model.explicit_base_url,
        api_key=model.api.api_key,
        **{**model.model_args, "cache_ttl": ttl},
    )


def planned_config(state: TaskState, **config: Any) -> GenerateConfig:
    """The generate settings of the sample's first request: `config` with the plan's."""
    call = (state.metadata.get(RECORD_KEY) or {}).get("call") or {}
    planned: dict[str, Any] = {}
    if call.get("cache_prompt") is False:
        planned["cache_prompt"] = False
    extra = dict(call.get("extra_body") or {})
    key = cache_key(state)
    if key is not None:
        extra["prompt_cache_key"] = key
    if extra:
        base = generate_config_of(get_model()).extra_body or {}
        planned["extra_body"] = {**base, **extra}
    return GenerateConfig(**{**planned, **config})


def cache_key(state: TaskState) -> str | None:
    """OpenAI routes requests with one `prompt_cache_key` to the same cache: one key per
    sample keeps its attempts together (a key the user set with -M wins)."""
    plan = state.metadata.get(RECORD_KEY) or {}
    if plan.get("mechanism") not in ("explicit", "retention") or plan.get("strategy") != "plan":
        return None
    return f"hss-{state.sample_id}"


def step_call(state: TaskState, step: int) -> tuple[Model, GenerateConfig]:
    """The model and settings of agentic step `step`: the first as planned; each later one
    reads what the step before wrote and writes its own tail for the next step at the
    shortest TTL (Inspect's automatic caching), unless the plan writes nothing."""
    plan = state.metadata.get(RECORD_KEY) or {}
    model = get_model()
    if plan.get("strategy") == "inspect":
        return model, GenerateConfig()
    if step == 1:
        return planned_model(state), planned_config(state)
    if plan.get("action") == "none":
        return model, planned_config(state)
    unmark(state.messages)
    if plan.get("mechanism") == "breakpoints":
        return model_at_ttl(model, pinned_ttl(model) or "5m"), GenerateConfig()
    return model, planned_config(state)


def unmark(messages: list[ChatMessage]) -> None:
    """Remove the first turn's cache mark, so that Inspect's automatic caching covers the
    growing conversation (explicit marks would turn it off)."""
    for message in messages:
        if isinstance(message, ChatMessageUser) and isinstance(message.content, list):
            message.content = [
                c.model_copy(update={"cache_breakpoint": None})
                if isinstance(c, ContentText) and c.cache_breakpoint
                else c
                for c in message.content
            ]
