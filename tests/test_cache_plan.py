"""The cache plan's rules and decisions (hss_inspect.providers.caching): the rules read from
task_configs/model_limits.yaml as written there, and each decision against the saving it
is worth, worked out here from the documented prices."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from hss_inspect.core.config import data_dir
from hss_inspect.providers.caching import (
    UNKNOWN_GAP,
    Gap,
    Pace,
    Previous,
    Reuse,
    cache_safety,
    caching_rules_for,
    decide,
    live_entry,
    next_attempt_gap,
    offered_ttls,
)

OPUS, ASTRA = "anthropic/claude-opus-5", "openai/gpt-6-astra"
MINUTE = 60.0


def caching_entries() -> list[dict[str, Any]]:
    text = (data_dir("task_configs") / "model_limits.yaml").read_text()
    return list(yaml.safe_load(text)["caching"])


def entry_named(name: str) -> dict[str, Any]:
    return next(e for e in caching_entries() if e["name"] == name)


# ---- the rules as the YAML gives them ------------------------------------------------


@pytest.mark.parametrize(
    ("model", "provider", "mechanism"),
    [
        (OPUS, "Anthropic Messages API", "breakpoints"),
        ("anthropic/bedrock/anthropic.claude-opus-5", "Anthropic on Amazon Bedrock", "breakpoints"),
        ("anthropic/vertex/claude-opus-5", "Anthropic on Amazon Bedrock", "breakpoints"),
        (ASTRA, "OpenAI (GPT-5.6 and later)", "explicit"),
        ("openai/gpt-5.6-terra", "OpenAI (GPT-5.6 and later)", "explicit"),
        ("openai/gpt-5.5", "OpenAI (before GPT-5.6)", "retention"),
        ("google/gemini-3.8-flash", "Gemini API", "implicit"),
        ("vllm/Qwen/Qwen2.5-VL-7B-Instruct", "no billed prompt cache", "none"),
        ("openai-api/dashscope/qwen3.8-max", "no billed prompt cache", "none"),
    ],
)
def test_each_model_gets_its_providers_caching_rules(
    model: str, provider: str, mechanism: str
) -> None:
    rules = caching_rules_for(model)
    assert rules.name.startswith(provider) and rules.mechanism == mechanism


def test_the_rules_carry_the_yaml_values_and_each_models_own_minimum_and_read_price() -> None:
    anthropic = entry_named("Anthropic Messages API")
    opus = caching_rules_for(OPUS)
    assert {t.name: (t.seconds, t.write) for t in opus.ttls} == {
        name: (float(v["seconds"]), float(v["write"])) for name, v in anthropic["ttls"].items()
    }
    assert opus.batch_ttl == anthropic["batch_ttl"] and opus.docs == tuple(anthropic["docs"])
    # the first models entry matching a model gives its minimum and, where given, its read
    by_pattern = {m["match"][0]: m for m in anthropic["models"]}
    assert opus.min_tokens == by_pattern["*opus-5*"]["min_tokens"]
    assert opus.read == anthropic["read"]
    opus_55 = caching_rules_for("anthropic/claude-opus-5-5")
    assert (opus_55.min_tokens, opus_55.read) == (
        by_pattern["*opus-5-5*"]["min_tokens"],
        by_pattern["*opus-5-5*"]["read"],
    )
    assert (
        caching_rules_for("anthropic/claude-haiku-4-5").min_tokens
        == (by_pattern["*opus-4-5*"]["min_tokens"])
    )
    assert caching_rules_for("anthropic/claude-unknown").min_tokens == anthropic["min_tokens"]
    assert 0 < cache_safety() < 1


def test_every_planned_entry_names_its_sources() -> None:
    for entry in caching_entries():
        if entry["mechanism"] != "none":
            assert entry["docs"] and all(d.startswith("https://") for d in entry["docs"])


def test_24_hour_retention_is_offered_only_to_the_models_that_have_it() -> None:
    rules = caching_rules_for("openai/gpt-5.5")
    assert [t.name for t in offered_ttls(rules, "openai/gpt-5.5")] == ["in_memory", "24h"]
    assert [t.name for t in offered_ttls(rules, "openai/gpt-4o")] == ["in_memory"]
    assert [t.name for t in offered_ttls(caching_rules_for(OPUS), OPUS, "1h")] == ["1h"]


# ---- the pace: when the same sample's next attempt reads the prefix -------------------


def test_the_next_attempt_comes_one_epoch_later_at_the_pace_so_far() -> None:
    # 24 samples, 2 running, a typical sample-epoch of 100 s: 12 finish per 100 s, so the
    # same sample comes round again after 24 / 12 x 100 = 200 s, plus one request's time
    pace = Pace(samples=24, running=2, durations=(100.0, 90.0, 400.0))
    gap = next_attempt_gap(pace, None, False, now=1000.0)
    assert gap.seconds == pytest.approx(24 * 100.0 / 2 + 100.0)
    assert "epoch" in gap.source


def test_the_gap_since_the_previous_attempt_counts_once_that_attempt_is_known() -> None:
    previous = Previous(sent=100.0, duration=30.0, ttl="1h")
    gap = next_attempt_gap(Pace(24, 2, (100.0,)), previous, False, now=1300.0)
    assert gap.seconds == pytest.approx(1300.0 - 100.0 + 30.0)
    assert next_attempt_gap(Pace(24, 2, ()), None, False, 0.0) == UNKNOWN_GAP
    # a later attempt already running (every sample-epoch in flight at once)
    assert next_attempt_gap(Pace(24, 30, ()), previous, True, 1300.0).seconds == 30.0


def test_an_entry_is_alive_within_its_life_less_the_safety_margin() -> None:
    rules = caching_rules_for(OPUS)
    life = 3600.0 * 0.8
    previous = Previous(sent=0.0, duration=20.0, ttl="1h")
    assert live_entry(previous, rules, life - 1, 0.8) == "1h"
    assert live_entry(previous, rules, life + 1, 0.8) is None
    # still out: its entry is about to exist
    assert live_entry(Previous(0.0, None, "1h"), rules, 10 * life, 0.8) == "1h"
    assert live_entry(Previous(0.0, 20.0, None), rules, 1.0, 0.8) is None


# ---- the decision against the saving it is worth ---------------------------------------


def saving(write: float, reads: int, read: float = 0.1) -> float:
    """Prefix-input units saved by a write at `write` x input read `reads` times."""
    return reads * (1 - read) - (write - 1)


def plan(
    model: str, later: int | None, gap_minutes: float | None, **reuse: Any
) -> tuple[str, str | None]:
    rules = caching_rules_for(model)
    gap = Gap(None if gap_minutes is None else gap_minutes * MINUTE, "test")
    decision = decide(
        rules, offered_ttls(rules, model), 200_000, Reuse(later, gap, **reuse), cache_safety()
    )
    return decision.action, decision.ttl


def test_a_first_attempt_read_by_two_later_ones_writes_at_the_ttl_that_outlives_the_gap() -> None:
    # 20 minutes: a 5-minute entry is gone; an hour's pays 2 reads for its 1.0 premium
    assert saving(2.0, 2) > 0
    assert plan(OPUS, 2, 20) == ("write", "1h")
    # 3 minutes: both live; the 5-minute entry saves more
    assert saving(1.25, 2) > saving(2.0, 2)
    assert plan(OPUS, 2, 3) == ("write", "5m")


def test_no_write_where_nothing_reads_it_at_a_saving() -> None:
    assert plan(OPUS, 0, 3) == ("none", None)  # the last attempt
    assert plan(OPUS, 2, 70) == ("none", None)  # outlives every TTL
    assert plan(OPUS, 2, 0.8 * 60 + 1) == ("none", None)  # inside the hour, not the margin
    assert saving(2.0, 1) < 0  # one read does not pay an hour's write
    assert plan(OPUS, 1, 20) == ("none", None)
    assert plan(OPUS, None, 20) == ("none", None)  # epochs unknown
    assert plan(OPUS, 2, None) == ("none", None)  # pace unknown
    assert plan("vllm/Qwen/Qwen2.5-VL-7B-Instruct", 2, 3) == ("none", None)
    assert plan("google/gemini-3.8-flash", 2, 3) == ("none", None)


def test_a_live_entry_is_read_even_by_the_last_attempt() -> None:
    assert plan(OPUS, 0, 20, live_ttl="1h") == ("read", "1h")


def test_an_agentic_first_step_writes_for_the_next_step_and_for_later_attempts() -> None:
    assert plan(OPUS, 0, None, next_step=True) == ("write", "5m")
    assert plan(OPUS, 2, 20, next_step=True) == ("write", "1h")
    assert saving(2.0, 1) < saving(1.25, 1)  # the next step alone: 5 minutes
    assert plan(OPUS, 1, 20, next_step=True) == ("write", "1h")  # 2 reads in the hour


def test_gpt_5_6_writes_for_thirty_minutes_and_older_openai_asks_for_a_days_retention() -> None:
    assert saving(1.25, 2) > 0
    assert plan(ASTRA, 2, 20) == ("write", "30m")
    assert plan(ASTRA, 2, 25) == ("none", None)  # 25 > 0.8 x 30
    assert plan("openai/gpt-5.5", 2, 20) == ("write", "24h")  # free, and the only one alive
    assert plan("openai/gpt-5.5", 2, 3) == ("write", "in_memory")


def test_a_prefix_under_the_providers_minimum_is_never_planned() -> None:
    rules = caching_rules_for(OPUS)
    reuse = Reuse(2, Gap(3 * MINUTE, "test"))
    under = decide(rules, list(rules.ttls), rules.min_tokens - 1, reuse, 0.8)
    assert under.action == "none" and f"{rules.min_tokens:,}" in under.reason
    assert decide(rules, list(rules.ttls), rules.min_tokens, reuse, 0.8).action == "write"
