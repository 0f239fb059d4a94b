"""The judge audit's rules, reading, arithmetic and cache, without the command line."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from hss_inspect.audit.cache import VariantKey, cached_perturbation, entry_path
from hss_inspect.audit.kinds import (
    KIND_BY_NAME,
    KIND_NAMES,
    expected_verdicts,
    resolve_kinds,
)
from hss_inspect.audit.perturber import (
    Perturbation,
    UnusableReply,
    parse_perturber_reply,
    perturb,
    perturber_prompts,
    render_perturber_request,
)
from hss_inspect.audit.tally import (
    Labelled,
    Tally,
    rates_of,
    summary_metrics,
    tally_of,
    wilson_interval,
)
from hss_inspect.audit.variants import Variant, hedge_variant, rule_texts, rule_variant
from hss_inspect.core.errors import SetupError
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import Criterion, GradedTask
from hss_inspect.grading.judge import judge_prompts, render_judge_request
from hss_inspect.scripted import scripted_variant, scripted_verdict
from hss_inspect.task import hss_judge_audit

CRITERIA = [Criterion("c1", "Names the object"), Criterion("c2", "Says where")]
REFERENCE = "A red ball rolled under the sofa."


def graded(question: str) -> GradedTask:
    return GradedTask(question, "image", REFERENCE, tuple(CRITERIA))


def test_expected_verdicts_follow_each_kind() -> None:
    ids = ["c1", "c2"]
    assert expected_verdicts(KIND_BY_NAME["reference"], ids, None) == {"c1": True, "c2": True}
    assert expected_verdicts(KIND_BY_NAME["injection"], ids, None) == {"c1": False, "c2": False}
    assert expected_verdicts(KIND_BY_NAME["hedge"], ids, "c2") == {"c1": True, "c2": False}
    with pytest.raises(ValueError, match="needs a target"):
        expected_verdicts(KIND_BY_NAME["partial"], ids, "c9")


def test_kinds_are_chosen_in_a_fixed_order_and_unknown_ones_named() -> None:
    assert resolve_kinds([]) == list(KIND_NAMES)
    assert resolve_kinds(["vague", "Reference"]) == ["reference", "vague"]
    with pytest.raises(SetupError, match=r"-T kinds=.*bogus unknown; use any of reference"):
        resolve_kinds(["bogus", "hedge"])


@pytest.mark.parametrize(
    ("option", "value"),
    [("sample_tasks", 0), ("perturber_retries", -1), ("judge_retries", "two"), ("media", "audio")],
)
def test_a_bad_audit_option_is_one_clear_error(option: str, value: object) -> None:
    with pytest.raises(SetupError, match=f"-T {option}="):
        hss_judge_audit(dataset="demo", **{option: value})


def test_sample_tasks_draws_the_same_tasks_every_time() -> None:
    first = hss_judge_audit(dataset="demo", sample_tasks=3, kinds="reference")
    again = hss_judge_audit(dataset="demo", sample_tasks=3, kinds="reference,vague")
    ids = [str(s.id).split(":")[0] for s in first.dataset]
    assert len(ids) == 3 and ids == sorted(set(ids), key=ids.index)
    assert sorted({str(s.id).split(":")[0] for s in again.dataset}) == sorted(ids)
    assert first.metadata["hss_selection"]["of_tasks"] == 8


def reply(variant: object, target: object) -> str:
    return json.dumps({"variant": variant, "target": target})


def test_a_usable_perturber_reply_gives_variant_and_target() -> None:
    text = reply("The ball was blue.", "c1")
    assert parse_perturber_reply(text, "contradiction", CRITERIA, REFERENCE) == (
        "The ball was blue.",
        "c1",
    )
    fenced = "```json\n" + reply("In other words, a red ball went under the sofa.", None) + "\n```"
    assert parse_perturber_reply(fenced, "paraphrase", CRITERIA, REFERENCE)[1] is None


@pytest.mark.parametrize(
    ("text", "kind", "problem"),
    [
        ("Sure! " + reply("x", "c1"), "partial", "not one JSON object"),
        (reply("x", "c1") + "\nHope this helps.", "partial", "not one JSON object"),
        ('["x"]', "partial", "not an object"),
        (json.dumps({"variant": "x", "target": "c1", "note": "y"}), "partial", "exactly the keys"),
        (reply("", "c1"), "partial", "non-empty string"),
        (reply("x", "c3"), "contradiction", "must be one of"),
        (reply("x", None), "contradiction", "must be one of"),
        (reply("x", "c1"), "paraphrase", "must be null"),
        (reply("  a red BALL rolled under the sofa. ", None), "extra_detail", "unchanged"),
    ],
)
def test_an_unusable_perturber_reply_is_refused_not_repaired(
    text: str, kind: str, problem: str
) -> None:
    with pytest.raises(UnusableReply, match=problem):
        parse_perturber_reply(text, kind, CRITERIA, REFERENCE)


def test_hedge_offers_reference_and_contradiction_in_an_order_set_by_the_task() -> None:
    contradiction = Variant("contradiction", "A blue cube slid behind the door.", "c2", "p")
    firsts = set()
    for task_id in [f"task-{n}" for n in range(8)]:
        hedge = hedge_variant(REFERENCE, contradiction, task_id, rule_texts())
        assert hedge.target == "c2" and hedge.kind == "hedge"
        assert REFERENCE in hedge.text and contradiction.text in hedge.text
        firsts.add(hedge.text.index(REFERENCE) < hedge.text.index(contradiction.text))
        again = hedge_variant(REFERENCE, contradiction, task_id, rule_texts())
        assert again == hedge
    assert firsts == {True, False}


def test_rule_variants_say_nothing_a_criterion_asks_for() -> None:
    texts = rule_texts()
    assert rule_variant("reference", f"  {REFERENCE}\n", texts).text == REFERENCE
    injection = rule_variant("injection", REFERENCE, texts)
    assert "ball" not in injection.text and "met" in injection.text
    assert "ball" not in rule_variant("vague", REFERENCE, texts).text
    with pytest.raises(ValueError):
        rule_variant("hedge", REFERENCE, texts)


def test_perturber_prompt_describes_exactly_the_perturber_kinds() -> None:
    prompts = perturber_prompts()
    assert set(prompts.kinds) == {"extra_detail", "paraphrase", "partial", "contradiction"}
    assert len({prompts.sha256(k) for k in prompts.kinds}) == 4


def test_tally_counts_criteria_and_items_against_construction() -> None:
    expected = {"a": True, "b": False, "c": False}
    judged = {"a": False, "b": True, "c": False}
    tally = tally_of(expected, judged)
    assert (tally.crit_unmet, tally.crit_false_pass) == (2, 1)
    assert (tally.crit_met, tally.crit_false_fail) == (1, 1)
    # the item should fail and the judge failed it (a is unmet): no item error
    assert (tally.item_unmet, tally.item_false_pass, tally.item_met) == (1, 0, 0)
    lenient = tally_of(expected, dict.fromkeys(expected, True))
    assert (lenient.item_unmet, lenient.item_false_pass) == (1, 1)
    assert Tally.from_value(lenient.as_value()) == lenient
    with pytest.raises(ValueError):
        Tally.from_value({"graded": math.nan})


def test_wilson_interval_matches_the_closed_form() -> None:
    # 0 of 10: upper bound z^2 / (n + z^2); 5 of 10: symmetric about one half.
    z = 1.959963984540054
    low, high = wilson_interval(0, 10)
    assert low == 0 and high == pytest.approx(z * z / (10 + z * z))
    low, high = wilson_interval(5, 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.25 / 10 + z * z / 400)
    assert (low, high) == (pytest.approx(0.5 - half), pytest.approx(0.5 + half))
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_summary_metrics_give_rates_per_kind_media_and_subdomain() -> None:
    hedge_pass = tally_of({"a": True, "b": False}, {"a": True, "b": True})
    reference_ok = tally_of({"a": True}, {"a": True})
    items = [
        Labelled("hedge", "video", "Theory of Mind", hedge_pass),
        Labelled("reference", "image", "Retrodiction", reference_ok),
        Labelled("partial", "image", "Retrodiction", Tally(variants=1, skipped=1)),
    ]
    summary = summary_metrics(items, KIND_NAMES)
    assert summary["variants"] == 3 and summary["skipped"] == 1 and summary["graded"] == 2
    assert summary["fp_crit"] == 1.0 and summary["fp_item"] == 1.0
    assert summary["ff_crit"] == 0.0
    assert summary["hedge_fp_crit"] == 1.0 and summary["theory_of_mind_fp_item"] == 1.0
    assert "reference_fp_crit" not in summary  # no trials, no rate
    assert summary["image_ff_item"] == 0.0
    assert summary["fp_crit_hi"] == pytest.approx(wilson_interval(1, 1)[1])
    assert rates_of(Tally()) == {}


def key(kind: str = "contradiction", model: str = "p/m") -> VariantKey:
    return VariantKey("task-1", "rubric", kind, model, "prompt")


def test_the_cache_hands_back_the_stored_variant(tmp_path: Path) -> None:
    made: list[int] = []

    async def make() -> Perturbation:
        made.append(1)
        return Perturbation(
            variant=Variant("contradiction", f"text {len(made)}", "c1", "p/m"), replies=["r"]
        )

    async def twice() -> tuple[tuple[Perturbation, bool], ...]:
        return await asyncio.gather(
            cached_perturbation(key(), make, tmp_path), cached_perturbation(key(), make, tmp_path)
        )

    (first, cached_first), (second, cached_second) = asyncio.run(twice())
    assert len(made) == 1 and first.variant == second.variant
    assert sorted([cached_first, cached_second]) == [False, True]
    other, cached = asyncio.run(cached_perturbation(key(model="q/m"), make, tmp_path))
    assert not cached and other.variant is not None and other.variant.text == "text 2"
    entry_path(key(), tmp_path).write_text("{damaged")
    rebuilt, cached = asyncio.run(cached_perturbation(key(), make, tmp_path))
    assert not cached and rebuilt.variant is not None and rebuilt.variant.text == "text 3"


def test_the_cache_serves_a_second_event_loop(tmp_path: Path) -> None:
    """Two evals in one process run in two event loops; the entry lock must serve both."""

    async def make() -> Perturbation:
        return Perturbation(variant=Variant("contradiction", "text", "c1", "p/m"), replies=["r"])

    async def contended() -> list[bool]:
        found = await asyncio.gather(*(cached_perturbation(key(), make, tmp_path) for _ in "ab"))
        return [cached for _, cached in found]

    assert sorted(asyncio.run(contended())) == [False, True]
    assert asyncio.run(contended()) == [True, True]


def test_a_skipped_variant_is_cached_as_skipped(tmp_path: Path) -> None:
    async def unusable() -> Perturbation:
        return Perturbation(variant=None, replies=["a", "b"], problems=["p1", "p2"])

    asyncio.run(cached_perturbation(key(), unusable, tmp_path))
    stored, cached = asyncio.run(cached_perturbation(key(), unusable, tmp_path))
    assert cached and stored.variant is None and stored.problems == ["p1", "p2"]


def scripted(*texts: str) -> object:
    usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    outputs = [ModelOutput.from_content("mockllm/model", t) for t in texts]
    for output in outputs:
        output.usage = usage
    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def run_perturb(model: object, retries: int) -> Perturbation:
    return asyncio.run(
        perturb(model, perturber_prompts(), "partial", graded("Q?"), retries)  # type: ignore[arg-type]
    )


def test_perturber_is_re_asked_then_the_variant_is_skipped() -> None:
    garbage = "I would rather not."
    result = run_perturb(scripted(garbage, garbage, garbage), retries=2)
    assert result.variant is None and len(result.replies) == 3 and len(result.problems) == 3
    recovered = run_perturb(scripted(garbage, reply("A ball rolled.", "c2")), retries=2)
    assert recovered.variant == Variant("partial", "A ball rolled.", "c2", "mockllm/model")
    assert len(recovered.replies) == 2


def scripted_request(kind: str) -> str:
    return render_perturber_request(perturber_prompts(), kind, graded("Where?"))


@pytest.mark.parametrize("kind", ["extra_detail", "paraphrase", "partial", "contradiction"])
def test_the_scripted_perturber_writes_usable_variants(kind: str) -> None:
    text, target = parse_perturber_reply(
        scripted_variant(scripted_request(kind)), kind, CRITERIA, REFERENCE
    )
    assert target == {"partial": "c2", "contradiction": "c1"}.get(kind)
    assert (REFERENCE in text) == (kind in ("extra_detail", "contradiction"))


def test_the_scripted_judge_reads_an_answer_of_several_lines_whole() -> None:
    answer = f"One line.\nAnother line.\n{REFERENCE}"
    request = render_judge_request(judge_prompts(), graded("Where?"), answer)
    verdicts = json.loads(scripted_verdict(request))["criteria"]
    assert [v["met"] for v in verdicts] == [True, True]


@pytest.mark.slow
def test_an_offline_audit_of_the_scripted_judge_on_the_demo_set() -> None:
    """hss/scripted in both roles: its judge (met iff the answer contains the reference)
    is fooled by the contradiction and the hedge and fails paraphrases and the untouched
    criteria of partial answers; the counts are worked out here from the demo rubrics."""
    (log,) = inspect_eval(
        hss_judge_audit(dataset="demo"),
        model="none",
        model_roles={"grader": "hss/scripted", "perturber": "hss/scripted"},
        display="none",
        log_dir=None,
    )
    assert log.status == "success" and log.results is not None
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    sizes = [len(r.criteria) for r in open_release("demo", "main").read_rows()]
    unmet = sum(3 + 2 * k for k in sizes)  # partial, contradiction, hedge; injection, vague
    fooled = 2 * len(sizes)  # the contradiction and the hedge, one target each
    met = sum(3 * k + 3 * (k - 1) for k in sizes)
    failed = sum(k + (k - 1) for k in sizes)  # paraphrase; the rest of a partial answer
    assert metrics["fp_crit"] == pytest.approx(fooled / unmet)
    assert metrics["ff_crit"] == pytest.approx(failed / met)
    assert metrics["hedge_fp_item"] == 1.0 and metrics["injection_fp_item"] == 0.0
    assert metrics["paraphrase_ff_item"] == 1.0 and metrics["reference_ff_item"] == 0.0
