"""The batch rules (`batch:` of task_configs/model_limits.yaml) as the loader reads them,
which provider entry a model gets, and that they stay out of the version fingerprint."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from inspect_ai.model import BatchConfig

# Inspect's own reading of `batch` (what its providers test), the oracle for ours
from inspect_ai.model._generate_config import normalized_batch_config

from hss_inspect import versioning
from hss_inspect.core.config import data_dir
from hss_inspect.providers import batching
from hss_inspect.providers.batching import (
    NO_BATCH,
    BatchRules,
    batch_refusal,
    batch_rules_for,
    batching_requested,
    images_as_files,
)

NUMBERS = (
    "price_multiplier",
    "max_requests",
    "max_batch_bytes",
    "request_max_bytes",
    "completion_window_hours",
)


def raw_entries() -> list[dict[str, Any]]:
    text = (data_dir("task_configs") / "model_limits.yaml").read_text(encoding="utf-8")
    return list(yaml.safe_load(text)["batch"])


def test_every_entry_is_read_as_written() -> None:
    entries = raw_entries()
    loaded = batching.all_batch_rules()
    assert len(loaded) == len(entries)
    for entry, rules in zip(entries, loaded, strict=True):
        assert rules.name == entry["name"] and list(rules.match) == entry["match"]
        for key in NUMBERS:
            assert getattr(rules, key) == entry.get(key), (rules.name, key)
        assert list(rules.docs) == entry["docs"] and rules.docs
        assert rules.inline_images is entry.get("inline_images", True), rules.name


def test_each_number_cites_where_it_comes_from() -> None:
    """A number of an entry carries a comment on its line or just above it."""
    text = (data_dir("task_configs") / "model_limits.yaml").read_text(encoding="utf-8")
    lines = text.split("\nbatch:\n", 1)[1].splitlines()
    for number, line in enumerate(lines):
        if line.strip().startswith(tuple(f"{key}:" for key in NUMBERS)):
            assert "#" in line or lines[number - 1].strip().startswith("#"), line


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("anthropic/claude-opus-5", "anthropic/*"),
        ("anthropic/claude-3-7-sonnet-latest", "anthropic/*"),
        ("anthropic/bedrock/claude-opus-5", "anthropic/bedrock/*"),
        ("anthropic/vertex/claude-opus-5", "anthropic/bedrock/*"),
        ("openai/gpt-6-astra", "openai/*"),
        ("google/gemini-3.8-flash", "google/*"),
        ("google/vertex/gemini-3.8-flash", "anthropic/bedrock/*"),
    ],
)
def test_a_model_gets_the_first_entry_matching_it(model: str, provider: str) -> None:
    expected = next(e for e in raw_entries() if provider in e["match"])
    assert batch_rules_for(model).name == expected["name"]
    assert batch_rules_for(model).available == ("price_multiplier" in expected)


def test_gemini_on_vertex_through_the_environment_has_no_batch_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    assert not batch_rules_for("google/gemini-3.8-flash").available


def test_a_provider_without_an_entry_has_no_batch_api() -> None:
    assert batch_rules_for("vllm/Qwen/Qwen2.5-VL-7B-Instruct") is NO_BATCH
    assert not NO_BATCH.available


def test_batch_rules_change_no_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batching changes the bill, not what a model is sent: editing the `batch:` section
    leaves every result fingerprint as it was, so it needs no version bump."""
    before = versioning.result_fingerprints()
    from hss_inspect.providers import limits

    real_load = limits.load_yaml

    def with_other_batch_rules(folder: str, filename: str) -> dict[str, Any]:
        loaded = dict(real_load(folder, filename))
        loaded["batch"] = [{"name": "changed", "match": ["*"], "price_multiplier": 0.1}]
        return loaded

    limits.rules_file.cache_clear()
    monkeypatch.setattr(limits, "load_yaml", with_other_batch_rules)
    try:
        assert versioning.result_fingerprints() == before
    finally:
        limits.rules_file.cache_clear()
    batching.all_batch_rules.cache_clear()
    monkeypatch.setattr(batching, "load_yaml", with_other_batch_rules)
    try:
        assert batch_rules_for("openai/gpt-6-astra") == BatchRules(
            name="changed", match=("*",), price_multiplier=0.1
        )
    finally:
        batching.all_batch_rules.cache_clear()


@pytest.mark.parametrize(
    ("batch", "on"),
    [(None, False), (False, False), (0, False), (True, True), (100, True), (BatchConfig(), True)],
)
def test_batch_mode_is_on_as_inspect_reads_the_batch_setting(batch: Any, on: bool) -> None:
    assert batching_requested(batch) is on
    assert batching_requested(batch) is (normalized_batch_config(batch) is not None)


def test_only_geminis_images_go_by_file_and_only_in_batch_mode() -> None:
    """Inspect's Gemini batcher cannot write an inline image (tests/test_batch.py pins it)."""
    assert images_as_files("google/gemini-3.8-flash", batching=True)
    assert not images_as_files("google/gemini-3.8-flash", batching=False)
    for model in ("anthropic/claude-opus-5", "openai/gpt-6-astra", "vllm/Qwen/Qwen2.5-VL-7B"):
        assert not images_as_files(model, batching=True)


@pytest.mark.parametrize(
    ("model", "condition", "refused"),
    [
        ("google/gemini-3.8-flash", "agentic", "the agentic tools return frames and crops"),
        ("google/gemini-3.8-flash", "standard", None),
        ("google/gemini-3.8-flash", "blind", None),
        ("anthropic/claude-opus-5", "agentic", None),
        ("openai/gpt-6-astra", "agentic", None),
        ("vllm/Qwen/Qwen2.5-VL-7B", "standard", None),  # no entry: left to Inspect
        ("google/vertex/gemini-3.8-flash", "standard", "Inspect cannot batch this provider"),
        ("google/vertex/gemini-3.8-flash", "blind", "Inspect cannot batch this provider"),
        ("anthropic/bedrock/claude-opus-5", "standard", "Inspect cannot batch this provider"),
        ("anthropic/vertex/claude-opus-5", "standard", "Inspect cannot batch this provider"),
    ],
)
def test_a_batched_run_inspect_would_end_midway_is_refused(
    model: str, condition: str, refused: str | None
) -> None:
    refusal = batch_refusal(model, condition, batching=True)
    if refused is None:
        assert refusal is None
    else:
        assert refusal is not None and refusal.startswith(f"{model} with --batch: ")
        assert refused in refusal and "without --batch" in refusal
    assert batch_refusal(model, condition, batching=False) is None
