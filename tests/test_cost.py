"""Cost in dollars (`hss-inspect estimate`, hss_inspect.providers.prices): prices read as
Inspect reads `--model-cost-config`, its arithmetic, the judge's request sized as the
judge really receives it, and no dollar figure where no price is known."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelCost, ModelInfo, set_model_cost, set_model_info

from hss_inspect.commands.cli import main
from hss_inspect.data.release import open_release
from hss_inspect.estimate.costs import judge_request_bytes
from hss_inspect.providers.prices import (
    Charge,
    Price,
    dollars,
    dollars_text,
    read_cost_config,
    total_dollars,
)
from hss_inspect.report.paper import table1_row
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


@pytest.mark.slow  # an eval in a child process
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
    result = _estimate(
        capsys, "--model", ASTRA, "--model-cost-config", str(prices), "--judge-output-tokens", "300"
    )
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
    cost = out[out.index("the bill with caching off") :]
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

    from hss_inspect.providers.price_lookup import inspect_pricing

    asked: list[str] = []
    monkeypatch.setattr(inspect_ai.model, "get_model_info", lambda name: asked.append(name))
    for _ in range(2):
        inspect_pricing("sglang/Qwen/Qwen2.5-VL-7B-Instruct", {})
        inspect_pricing("hf/Qwen/Qwen2.5-VL-7B-Instruct", {})
        inspect_pricing("openai/gpt-6-astra", {})
    # looked up by the model's own name where resolving the provider's could start a server
    # or load weights; a client-only provider keeps its name; each name asked once
    assert asked == ["Qwen/Qwen2.5-VL-7B-Instruct", "openai/gpt-6-astra"]


def test_a_database_answer_is_remembered_per_inspect_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import inspect_ai.model
    from inspect_ai.model import ModelCost, ModelInfo

    from hss_inspect.providers import model_names, price_lookup

    listed = ModelInfo(
        cost=ModelCost(input=1.25, output=10.0, input_cache_write=1.5, input_cache_read=0.125)
    )
    answers = {"openai/gpt-6-astra": listed, "openai-api/lab/tuned": None}
    asked: list[str] = []

    def ask(name: str) -> ModelInfo | None:
        asked.append(name)
        return answers[name]

    monkeypatch.setattr(inspect_ai.model, "get_model_info", ask)
    first = [price_lookup.inspect_pricing(name, {}) for name in answers]
    # read back from the cache folder (as another process would): nothing asked again
    again = [price_lookup.inspect_pricing(name, {}) for name in answers]
    assert again == first and asked == list(answers)
    assert first[0].price is not None and first[0].price.output == 10.0 and first[0].in_database
    assert first[1].price is None and not first[1].in_database
    # another Inspect version may know other models: asked again
    monkeypatch.setattr(model_names, "version", lambda _: "0.3.999")
    price_lookup.inspect_pricing("openai-api/lab/tuned", {})
    assert asked == [*answers, "openai-api/lab/tuned"]


# ---- the whole bill: output, the judge's reply, and each caching strategy ---------------


def _bill(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> dict[str, Any]:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    return _estimate(
        capsys, "--model", OPUS, "--model-cost-config", str(prices), "--grader", OPUS, *args
    )


def _prefixes(result: dict[str, Any]) -> list[int]:
    """Each task's user turn as the plan counts it: image tokens, and text at 4 bytes."""
    return [t["image_tokens"] + math.ceil(t["text_bytes"] / 4) for t in result["per_task"]]


def test_each_caching_strategy_bills_the_attempts_as_it_would_cache_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _bill(
        capsys, tmp_path, "--attempt-gap", "20", "--max-connections", "2",
        "--output-tokens", "1000", "--judge-output-tokens", "200",
    )  # fmt: skip
    rows = {r["strategy"]: r for r in result["cost"]["strategies"]}
    prefixes, minimum = _prefixes(result), 512  # Claude Opus 5's minimum cacheable prompt
    price = PRICES[OPUS]
    assert rows["caching off"]["fresh"] == 3 * sum(prefixes)
    charges = _charges(result)
    assert 3 * sum(prefixes) == charges["media"]["tokens"] + charges["question text"]["tokens"]
    # 20 minutes apart: Inspect's default writes every prompt over the minimum for 5 minutes
    # and none is read; the plan writes each for an hour and reads it twice, except the
    # first 2 tasks, which go before any sample-epoch has finished
    cached = [p for p in prefixes if p >= minimum]
    assert rows["Inspect's default"]["written"] == {"5m": 3 * sum(cached)}
    planned = [p for i, p in enumerate(prefixes) if p >= minimum and i >= 2]
    assert rows["the plan"]["written"] == {"1h": sum(planned)}
    assert rows["the plan"]["read"] == 2 * sum(planned)
    assert rows["the plan"]["fresh"] == 3 * sum(prefixes) - 3 * sum(planned)
    hour_write = price["input_cache_write"] * 2.0 / 1.25  # Anthropic: 2x input, not 1.25x
    assert rows["the plan"]["input_dollars"] == pytest.approx(
        (rows["the plan"]["fresh"] * price["input"] + sum(planned) * hour_write
         + 2 * sum(planned) * price["input_cache_read"]) / 1e6
    )  # fmt: skip
    output = 1000 * 3 * len(prefixes) * price["output"] / 1e6
    judge = charges["judge input"]["dollars"] + 200 * 3 * len(prefixes) * price["output"] / 1e6
    for name, row in rows.items():
        batched = name.startswith("batch")
        assert row["output_dollars"] == pytest.approx(output * (0.5 if batched else 1))
        assert row["judge_dollars"] == pytest.approx(judge)  # the judge is never batched
        assert row["total_dollars"] == pytest.approx(
            row["input_dollars"] + row["output_dollars"] + row["judge_dollars"]
        )
        assert row["vs_off"] == pytest.approx(
            row["total_dollars"] / rows["caching off"]["total_dollars"]
        )
    assert rows["batch"]["input_dollars"] == pytest.approx(
        0.5 * rows["Inspect's default"]["input_dollars"]
    )
    assert rows["the plan"]["total_dollars"] < rows["caching off"]["total_dollars"]
    assert result["cost"]["total_dollars"] == pytest.approx(rows["caching off"]["total_dollars"])


def test_without_a_pilot_the_output_is_table_1s_and_the_judges_reply_is_not_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _bill(capsys, tmp_path)
    row = table1_row(OPUS)
    assert row is not None
    per_attempt = row.values["answer_tokens"] + row.values["think_tokens"]
    outputs = [c for c in result["cost"]["charges"] if c["what"].startswith("output")]
    assert sum(c["tokens"] for c in outputs) == pytest.approx(per_attempt * 3 * 8, abs=2)
    assert result["cost"]["uncounted"] == ["judge output"] and result["cost"]["lower_bound"]
    assert "at least" in main_output(capsys, tmp_path)


def main_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    prices = tmp_path / "prices.json"
    assert main(["estimate", "--dataset", "demo", "--model", OPUS, "--model-cost-config",
                 str(prices)]) == 0  # fmt: skip
    return capsys.readouterr().out


@pytest.mark.slow  # an eval in a child process
def test_a_pilot_gives_the_output_by_media_type_the_judges_tokens_and_the_pace(
    tmp_path: Path,
) -> None:
    script = """
import sys
from inspect_ai import eval
from hss_inspect.task import hss_demo
eval(hss_demo(), model="hss/scripted", model_roles={"grader": "hss/scripted"}, epochs=2,
     log_dir=sys.argv[1], display="none", limit=5)
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("*.eval")
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import read_eval_log

    from hss_inspect.report.pilot import read_pilot

    log = read_eval_log(str(path))
    pilot = read_pilot(str(path), "hss/scripted")
    # The model judged itself: Inspect counts the judge's calls under the model too, and
    # keeps them apart in `role_usage`; each attempt's own output is its usage less the
    # grader's, which is also what its calls outside any role (the model events) returned.
    by_media: dict[str, list[int]] = {}
    for sample in log.samples or []:
        usage, judged = sample.model_usage["hss/scripted"], sample.role_usage["grader"]
        own = usage.output_tokens - judged.output_tokens
        events = [e for e in sample.events if isinstance(e, ModelEvent) and e.role is None]
        assert own == sum(e.output.usage.output_tokens for e in events if e.output.usage)
        assert 0 < own < usage.output_tokens
        by_media.setdefault(sample.metadata["media_type"], []).append(own)
    assert pilot.attempts == len(log.samples or []) == 10
    assert pilot.output == {m: statistics.fmean(v) for m, v in by_media.items()}
    graders = [s.role_usage["grader"] for s in log.samples or []]
    assert pilot.judge_output == statistics.fmean(u.output_tokens for u in graders)
    assert sorted(pilot.durations) == sorted(s.total_time for s in log.samples or [])
    with pytest.raises(ValueError, match="a run of hss/scripted, not of openai/gpt-6-astra"):
        read_pilot(str(path), ASTRA)


def test_with_no_image_token_rule_the_caching_table_counts_what_the_bill_counts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """hss/scripted has no image-token formula: the bill counts the question text alone,
    and the caching table's caching-off row counts the same tokens and dollars (at least);
    what the other strategies would cache is not known, and says so, never 0."""
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"hss/scripted": SCRIPTED_PRICE, OPUS: PRICES[OPUS]}))
    given = ["--model", "hss/scripted", "--model-cost-config", str(prices)]
    given += ["--judge-output-tokens", "30"]
    result = _estimate(capsys, *given)
    charges, cost = _charges(result), result["cost"]
    assert charges["media"]["tokens"] is None
    text = charges["question text"]["tokens"]
    assert text > 0 and text % 3 == 0  # each task's text, once an attempt
    rows = {r["strategy"]: r for r in cost["strategies"]}
    off = rows["caching off"]
    assert off["fresh"] == text and off["input_lower_bound"] and off["lower_bound"]
    assert off["input_dollars"] == pytest.approx(text * SCRIPTED_PRICE["input"] / 1e6)
    assert off["total_dollars"] == pytest.approx(cost["total_dollars"])
    for name in ("Inspect's default", "the plan"):
        row = rows[name]
        assert row["fresh"] is None and row["read"] is None and row["written"] is None
        assert row["input_dollars"] is None and row["total_dollars"] is None
        assert row["output_dollars"] == pytest.approx(off["output_dollars"])
    for name in ("batch", "batch + the plan"):
        assert rows[name]["note"] == "no batch API"
    assert main(["estimate", "--dataset", "demo", *given]) == 0
    printed = capsys.readouterr().out
    table = printed[printed.index("by caching strategy") : printed.index("assumptions:")]
    lines = {line.split("  ")[1].strip(): line for line in table.splitlines()[2:]}
    assert f"at least {text:,}" in lines["caching off"]
    assert lines["the plan"].count("not known") == 6  # input, writes, reads, cost, total, ratio
    assert "no batch API: no batch API" not in printed and " 0 " not in lines["the plan"]
