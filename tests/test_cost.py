"""Cost in dollars (`hss-inspect estimate`, hss_inspect.providers.prices): prices read as
Inspect reads `--model-cost-config`, its arithmetic, the judge's request sized as the
judge really receives it, and no dollar figure where no price is known."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelCost, ModelInfo, set_model_cost, set_model_info

from hss_inspect.commands.cli import main
from hss_inspect.commands.cost import judge_request_bytes
from hss_inspect.data.release import open_release
from hss_inspect.providers.prices import (
    Charge,
    Price,
    dollars,
    dollars_text,
    read_cost_config,
    total_dollars,
)
from hss_inspect.scripted import FIXED_ANSWER
from tests.support.runs import priced_scripted_run

ASTRA, OPUS = "openai/gpt-6-astra", "anthropic/claude-opus-5"
PRICES = {
    ASTRA: {"input": 2.5, "output": 15.0, "input_cache_write": 0.0, "input_cache_read": 0.25},
    OPUS: {"input": 5.0, "output": 25.0, "input_cache_write": 6.25, "input_cache_read": 0.5},
}
SCRIPTED_PRICE = {"input": 1.5, "output": 7.0, "input_cache_write": 0.0, "input_cache_read": 0.0}


def _estimate(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["estimate", "--dataset", "demo", "--json", *args]) == 0
    return dict(json.loads(capsys.readouterr().out))


def _charges(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["what"]: c for c in result["cost"]["charges"]}


# ---- the price file and the arithmetic -------------------------------------------------


def test_a_cost_file_is_read_as_json_or_yaml_with_inspects_four_fields() -> None:
    as_json = read_cost_config(json.dumps(PRICES), "p.json")
    yaml_text = "".join(f"{m}: {json.dumps(f)}\n" for m, f in PRICES.items())
    assert read_cost_config(yaml_text, "p.yaml")[OPUS].output == 25.0
    assert as_json[ASTRA] == Price(2.5, 15.0, 0.0, 0.25, source="p.json")
    assert ModelCost(**PRICES[ASTRA])  # the same four fields Inspect's own type requires
    with pytest.raises(ValueError, match=r"p.yaml: openai/x: missing input_cache_read"):
        read_cost_config("openai/x: {input: 1, output: 2, input_cache_write: 0}", "p.yaml")
    with pytest.raises(ValueError, match="not a mapping"):
        read_cost_config("- openai/x", "p.yaml")


def test_dollars_are_tokens_times_the_price_per_million() -> None:
    price = Price(2.5, 15.0, 0.0, 0.25, "p")
    media = Charge("media", ASTRA, "input", 9_120, price)
    answers = Charge("answers", ASTRA, "output", 70_000, price)
    assert media.dollars == pytest.approx(0.0228)
    assert answers.dollars == pytest.approx(1.05)
    assert total_dollars([media, answers]) == pytest.approx(1.0728)
    assert total_dollars([media, Charge("judge input", OPUS, "input", 10, None)]) is None
    assert [dollars_text(x) for x in (0.0228, 0.0042, 1.0728, 1234.5)] == [
        "$0.023",
        "$0.0042",
        "$1.07",
        "$1,234.50",
    ]


def test_the_arithmetic_is_inspects_own_on_a_priced_run(tmp_path: Path) -> None:
    """A demo run with a price registered in Inspect: the cost Inspect records for each
    role is the estimate's dollars() of the tokens Inspect counted."""
    log = priced_scripted_run(tmp_path, SCRIPTED_PRICE)
    assert log.stats is not None
    usage = {role: u.model_dump() for role, u in log.stats.role_usage.items()}
    assert usage["grader"]["input_tokens"] > 0
    for role in usage.values():
        spent = dollars(role["input_tokens"], 1.5) + dollars(role["output_tokens"], 7.0)
        assert role["total_cost"] == pytest.approx(spent)


# ---- hss-inspect estimate ---------------------------------------------------------------


def test_estimate_prices_the_media_text_and_judge_from_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("".join(f"{m}: {json.dumps(f)}\n" for m, f in PRICES.items()))
    result = _estimate(capsys, "--model", ASTRA, "--model-cost-config", str(prices))
    charges = _charges(result)
    assert charges["media"]["tokens"] == result["image_tokens"] == 9_120
    assert charges["media"]["dollars"] == pytest.approx(9_120 * 2.5 / 1e6)
    text_bytes = sum(task["text_bytes"] for task in result["per_task"])
    assert charges["question text"]["tokens"] >= 3 * text_bytes / 4
    assert charges["judge input"]["model"] == OPUS
    assert charges["judge input"]["price_per_million"] == 5.0
    assert charges["judge input"]["dollars"] == pytest.approx(
        charges["judge input"]["tokens"] * 5.0 / 1e6
    )
    assert result["cost"]["judge_calls"] == 8 * 3
    assert result["cost"]["total_dollars"] == pytest.approx(
        sum(c["dollars"] for c in charges.values())
    )
    assert any(
        "40 tokens (the mean Table 1 gives GPT-6-astra" in a for a in result["cost"]["assumptions"]
    )


def test_without_a_price_the_estimate_says_so_and_prints_no_dollars(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["estimate", "--model", ASTRA, "--dataset", "demo"]) == 0
    out = capsys.readouterr().out
    cost = out[out.index("input cost") :]
    assert "$" not in cost.split("assumptions:")[0]
    assert f"no price known for {ASTRA} (Inspect's model database lists it without a price)" in cost
    assert "total:         not known: give the prices in --model-cost-config FILE" in cost
    assert "9,120 image tokens" in cost


def test_a_price_registered_with_inspect_is_used(capsys: pytest.CaptureFixture[str]) -> None:
    model = "openai/hss-cost-test-model"  # a name no other test prices
    set_model_info(model, ModelInfo(cost=ModelCost(**PRICES[ASTRA])))
    result = _estimate(capsys, "--model", model, "--grader", model)
    for charge in _charges(result).values():
        assert charge["price_source"] == "Inspect's model database"
    assert result["cost"]["total_dollars"] is not None


def test_a_file_entry_inspect_would_refuse_is_priced_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"hss/scripted": PRICES[ASTRA]}))
    result = _estimate(
        capsys,
        "--model",
        "hss/scripted",
        "--grader",
        "hss/scripted",
        "--model-cost-config",
        str(prices),
    )
    (warning,) = result["cost"]["warnings"]
    assert "stops with \"Model 'hss/scripted' not found.\"" in warning
    with pytest.raises(ValueError, match=r"Model 'hss/scripted' not found\."):
        set_model_cost("hss/scripted", ModelCost(**PRICES[ASTRA]))  # what Inspect does
    assert _charges(result)["judge input"]["dollars"] is not None


def test_a_missing_cost_file_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["estimate", "--model", ASTRA, "--dataset", "demo", "--model-cost-config", "nope.yaml"]
    assert main(args) == 1
    assert "--model-cost-config nope.yaml: no such file" in capsys.readouterr().err


@pytest.mark.slow
def test_the_judge_request_is_sized_as_the_judge_receives_it(tmp_path: Path) -> None:
    """The scripted demo run's grader calls: their system and user text is the size the
    estimate computes for the same task and answer."""
    from inspect_ai import eval
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import resolve_sample_attachments

    from hss_inspect.task import hss_demo

    (log,) = eval(
        hss_demo(),
        model="hss/scripted",
        model_roles={"grader": "hss/scripted"},
        epochs=1,
        log_dir=str(tmp_path),
        display="none",
    )
    rows = {row.task_id: row for row in open_release("demo", None).read_rows()}
    checked = 0
    for sample in map(resolve_sample_attachments, log.samples or []):
        judge_calls = [e for e in sample.events if isinstance(e, ModelEvent) and e.role == "grader"]
        sent = sum(len(m.text.encode()) for m in judge_calls[0].input)
        assert sent == judge_request_bytes(rows[str(sample.id)], FIXED_ANSWER)
        checked += 1
    assert checked == 8


def test_pricing_never_creates_a_provider_that_could_start_a_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspect_ai.model

    from hss_inspect.commands.cost import inspect_pricing

    asked: list[str] = []
    monkeypatch.setattr(inspect_ai.model, "get_model_info", lambda name: asked.append(name))
    inspect_pricing("sglang/Qwen/Qwen2.5-VL-7B-Instruct", {})
    inspect_pricing("hf/Qwen/Qwen2.5-VL-7B-Instruct", {})
    inspect_pricing("openai/gpt-6-astra", {})
    # looked up by the model's own name where resolving the provider's could start a server
    # or load weights; a client-only provider keeps its name
    assert asked == ["Qwen/Qwen2.5-VL-7B-Instruct"] * 2 + ["openai/gpt-6-astra"]
