"""What a run is billed under the cache plan, through Inspect's real Anthropic and OpenAI
providers against stand-ins that cache and bill as those providers document
(tests/support/prompt_cache.py), with a full run's gap between attempts on a fast clock.
Each bill is Inspect's own recorded cost at the prices given with `--model-cost-config`;
the stand-in's log shows what each request asked of the cache and what it was billed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.billing import PRICES, BilledRun, billed_run, billing_release

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("faketime") is None, reason="needs Debian's faketime"),
]

OPUS, ASTRA = "anthropic/claude-opus-5", "openai/gpt-6-astra"
# 5 sample-epochs of about 3 minutes each: the next attempt of a sample comes about
# 15-20 minutes later on both clocks, past a 5-minute entry's life, inside an hour's
SPEED, LATENCY = 120.0, 140.0


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return billing_release(tmp_path_factory.mktemp("bill-release"), videos=4, images=1)


@pytest.fixture(scope="module")
def media_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bill-media")


@pytest.fixture(scope="module")
def anthropic_runs(
    release: Path, media_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, BilledRun]:
    work = tmp_path_factory.mktemp("bill-anthropic")
    return {
        strategy: billed_run(
            OPUS,
            release,
            work / strategy,
            strategy=strategy,
            speed=SPEED,
            latency=LATENCY,
            cache=media_cache,
        )
        for strategy in ("off", "inspect", "plan")
    }


def by_attempt(run: BilledRun) -> dict[tuple[str, int], tuple[Any, dict[str, Any]]]:
    """Each sample-epoch's log sample and its request on the wire, matched by task id (the
    question names it) in the order the attempts were sent."""
    wire = [e for e in run.wire if e.get("usage") and e["question"]]
    samples = sorted(run.log.samples or [], key=lambda s: (s.epoch, str(s.started_at)))
    matched = {}
    for sample in samples:
        entry = next(e for e in wire if f"in {sample.id}?" in e["question"])
        wire.remove(entry)
        matched[(str(sample.id), sample.epoch)] = (sample, entry)
    return matched


def answered(run: BilledRun) -> list[dict[str, Any]]:
    """The stand-in's usage of each HSS request (not of a probe Inspect's provider sends
    on its own, which asks no question and is not billed to the run)."""
    return [e["usage"] for e in run.wire if e.get("usage") and e["question"]]


def wire_bill(run: BilledRun) -> float:
    """The stand-in's usage at the run's prices, computed here: a 1-hour write at 2x the
    input price (Anthropic's table), the price file's write rate being the 5-minute one."""
    price = PRICES[run.model]
    total = 0.0
    for usage in answered(run):
        written = usage["written"]
        total += usage["fresh"] * price["input"] + usage["read"] * price["input_cache_read"]
        total += written.get("5m", 0) * price["input_cache_write"]
        total += written.get("30m", 0) * price["input_cache_write"]
        total += written.get("1h", 0) * 2.0 * price["input"]
    return total / 1e6


def test_the_plan_bills_less_than_caching_off_and_inspects_default(
    anthropic_runs: dict[str, BilledRun],
) -> None:
    off, default, plan = (anthropic_runs[s] for s in ("off", "inspect", "plan"))
    assert off.input_tokens == default.input_tokens == plan.input_tokens
    assert off.billed_input == pytest.approx(off.plain_input)
    # Inspect's default writes every request for 5 minutes, and each expires unread
    assert default.usage.input_tokens_cache_read in (None, 0)
    assert default.billed_input == pytest.approx(1.25 * off.billed_input, rel=0.01)
    assert plan.billed_input < 0.85 * off.billed_input < default.billed_input


def test_inspects_recorded_cost_is_the_wire_usage_at_the_documented_prices(
    anthropic_runs: dict[str, BilledRun],
) -> None:
    for run in anthropic_runs.values():
        assert run.billed_input == pytest.approx(wire_bill(run), rel=1e-9)
        wire_tokens = sum(
            u["fresh"] + u["read"] + sum(u["written"].values()) for u in answered(run)
        )
        assert run.input_tokens == wire_tokens


@pytest.mark.inspect_api
def test_each_request_asks_the_cache_for_what_the_plan_recorded(
    anthropic_runs: dict[str, BilledRun],
) -> None:
    decisions = []
    attempts = by_attempt(anthropic_runs["plan"])
    first = min((s for s, _ in attempts.values()), key=lambda s: str(s.started_at))
    assert first.metadata["cache_plan"]["action"] == "none"  # no attempt has finished yet
    assert "not known yet" in first.metadata["cache_plan"]["reason"]
    for (_, epoch), (sample, entry) in attempts.items():
        plan, usage = sample.metadata["cache_plan"], entry["usage"]
        decisions.append((epoch, plan["action"]))
        if plan["action"] == "none":
            assert usage["marks"] == [] and usage["written"] == {} and usage["read"] == 0
            continue
        # the question, the turn's last block, carries the mark at the plan's TTL
        assert usage["marks"] == [[-1, plan["ttl"]]]
        if plan["action"] == "write":
            assert plan["ttl"] == "1h" and set(usage["written"]) == {"1h"}
        else:
            assert usage["read"] > 0 and usage["written"] == {}
    # the first attempts (once the pace is known) write for an hour; the later ones read
    assert sum(1 for d in decisions if d == (1, "write")) >= 3
    assert all(action != "write" for epoch, action in decisions if epoch > 1)
    assert {action for epoch, action in decisions if epoch == 3} <= {"read", "none"}


def test_inspect_and_off_leave_caching_as_they_say(anthropic_runs: dict[str, BilledRun]) -> None:
    for _, entry in by_attempt(anthropic_runs["inspect"]).values():
        assert ["top", "5m"] in entry["usage"]["marks"]  # Inspect's automatic caching
    for sample, entry in by_attempt(anthropic_runs["off"]).values():
        assert entry["usage"]["marks"] == [] and sample.metadata["cache_plan"]["action"] == "none"


@pytest.mark.inspect_api
def test_a_single_attempt_writes_nothing(release: Path, media_cache: Path, tmp_path: Path) -> None:
    run = billed_run(OPUS, release, tmp_path, epochs=1, latency=5.0, cache=media_cache)
    assert all(not usage["marks"] for usage in answered(run))
    assert run.billed_input == pytest.approx(run.plain_input)
    reasons = {s.metadata["cache_plan"]["reason"] for s in run.log.samples or []}
    assert "the last attempt: no later request reads it" in reasons


def test_gaps_over_an_hour_write_nothing(release: Path, media_cache: Path, tmp_path: Path) -> None:
    # 5 samples of about 13 minutes each: about 65 minutes between a sample's attempts
    run = billed_run(
        OPUS, release, tmp_path, epochs=2, speed=300.0, latency=550.0, cache=media_cache
    )
    plans = [s.metadata["cache_plan"] for s in run.log.samples or []]
    assert {p["action"] for p in plans} == {"none"}
    assert run.billed_input == pytest.approx(run.plain_input)
    assert any(p["gap_seconds"] and p["gap_seconds"] > 3600 for p in plans)


@pytest.mark.inspect_api
def test_gpt_5_6_and_later_are_marked_in_explicit_mode_with_one_cache_key_per_sample(
    release: Path, media_cache: Path, tmp_path: Path
) -> None:
    run = billed_run(ASTRA, release, tmp_path, speed=SPEED, latency=LATENCY - 40, cache=media_cache)
    for (task_id, _), (sample, entry) in by_attempt(run).items():
        plan, usage = sample.metadata["cache_plan"], entry["usage"]
        assert usage["explicit"] and usage["cache_key"] == f"hss-{task_id}"
        first_block = -usage["blocks"]  # the note before the media
        if plan["action"] == "none":  # a mark on the note before the media writes nothing
            assert usage["marks"] == [[first_block, "explicit"]] and usage["written"] == {}
        else:
            assert usage["marks"] == [[-1, "explicit"]]
    actions = [s.metadata["cache_plan"]["action"] for s in run.log.samples or []]
    assert actions.count("write") >= 2 and actions.count("read") >= 2
    assert run.billed_input == pytest.approx(wire_bill(run), rel=1e-9)
    assert run.billed_input < 0.85 * run.plain_input


def test_the_agentic_condition_reads_each_step_and_its_first_turn_across_attempts(
    tmp_path: Path,
) -> None:
    release = billing_release(tmp_path / "release", videos=2, images=1, behaviour="AGENT")
    runs = {
        strategy: billed_run(
            OPUS,
            release,
            tmp_path / strategy,
            task="hss_inspect/hss_agentic",
            strategy=strategy,
            speed=SPEED,
            latency=LATENCY,
        )
        for strategy in ("off", "inspect", "plan")
    }
    steps = [s.metadata["agent"]["steps"] for s in runs["plan"].log.samples or []]
    assert min(steps) >= 2  # a conversation, whose steps read the cache
    assert runs["plan"].billed_input <= runs["inspect"].billed_input < runs["off"].billed_input
    later = [u for u in answered(runs["plan"]) if ["top", "5m"] in u["marks"]]
    assert later and all(u["read"] > 0 for u in later)  # each later step reads the earlier
