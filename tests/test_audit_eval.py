"""End to end: `inspect eval hss_inspect/hss_judge_audit` with a scripted perturber and two
scripted judges on the fixture release, then `hss-inspect audit` on the two logs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog

from hss_inspect.audit.kinds import KIND_BY_NAME, KIND_NAMES, PERTURBER_KINDS, Expectation
from tests.support.fixture_repo import TASKS
from tests.support.runs import run_eval, run_refused
from tests.support.servers import scripted_models

pytestmark = pytest.mark.slow

PERTURBER = "openai-api/scripted/perturber"
PERFECT = "openai-api/scripted/judge-perfect"
LENIENT = "openai-api/scripted/judge-lenient"
RETRIES = 2  # the task's default perturber_retries
HSS_INSPECT = str(Path(sys.executable).with_name("hss-inspect"))


def perturber_made(kind: str) -> bool:
    """Kinds whose answer needs a perturber variant (hedge needs the contradiction)."""
    return kind in PERTURBER_KINDS or KIND_BY_NAME[kind].built_from is not None


def garbled(task_behaviour: str) -> bool:
    return task_behaviour == "GARBLE"  # the scripted perturber never replies usably


def expected_counts(lenient: bool) -> dict[str, dict[str, int]]:
    """Trials and false passes per kind, worked out from the fixture's rubrics."""
    counts = {k: {"unmet": 0, "fp": 0, "items_unmet": 0, "items_fp": 0} for k in KIND_NAMES}
    for task in TASKS:
        k = len(task.criteria)
        for kind in KIND_NAMES:
            if garbled(task.behaviour) and perturber_made(kind):
                continue
            expectation = KIND_BY_NAME[kind].expectation
            unmet = {Expectation.ALL_MET: 0, Expectation.TARGET_UNMET: 1}.get(expectation, k)
            fooled = lenient and kind in ("hedge", "injection")
            counts[kind]["unmet"] += unmet
            counts[kind]["fp"] += unmet if fooled else 0
            counts[kind]["items_unmet"] += int(unmet > 0)
            counts[kind]["items_fp"] += int(unmet > 0 and fooled)
    return counts


@pytest.fixture(scope="module")
def audit_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    with scripted_models(tmp_path_factory.mktemp("audit-server"), "audit_server.py") as served:
        yield served


def requests_since(log_file: Path, start: int) -> list[dict]:
    return [json.loads(line) for line in log_file.read_text().splitlines()[start:]]


@pytest.fixture(scope="module")
def two_audits(
    hss_repo: Path,
    audit_server: tuple[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[EvalLog, EvalLog, list[dict], list[dict]]:
    """The perfect judge audited first, then the lenient one with the same variant cache."""
    base_url, request_log = audit_server
    cache, logs = tmp_path_factory.mktemp("audit-cache"), tmp_path_factory.mktemp("audit-logs")
    runs = []
    for judge in (PERFECT, LENIENT):
        start = len(request_log.read_text().splitlines())
        log, _ = run_eval(
            "hss_inspect/hss_judge_audit",
            logs,
            base_url,
            "--model-role",
            f"perturber={PERTURBER}",
            model="none",
            grader=judge,
            env={"HSS_INSPECT_CACHE": str(cache)},
            task_args={"dataset": hss_repo},
        )
        runs.append((log, requests_since(request_log, start)))
    (first, first_requests), (second, second_requests) = runs
    return first, second, first_requests, second_requests


def metrics_of(log: EvalLog) -> dict[str, float]:
    assert log.status == "success", log.error
    assert log.results is not None
    (score,) = log.results.scores
    return {name: m.value for name, m in score.metrics.items()}


def test_a_perfect_judge_makes_no_errors(two_audits) -> None:
    metrics = metrics_of(two_audits[0])
    counts = expected_counts(lenient=False)
    assert metrics["variants"] == len(TASKS) * len(KIND_NAMES)
    for rate in ("fp_crit", "ff_crit", "fp_item", "ff_item"):
        assert metrics[rate] == 0.0, rate
    assert metrics["fp_crit_hi"] > 0  # an interval, not a point
    assert metrics["grading_failures"] == 0
    for kind in ("partial", "contradiction", "hedge", "injection", "vague"):
        assert metrics[f"{kind}_fp_crit"] == 0.0
    assert sum(c["unmet"] for c in counts.values()) > 0


def test_a_lenient_judge_gives_the_false_pass_rates_worked_out_here(two_audits) -> None:
    metrics = metrics_of(two_audits[1])
    counts = expected_counts(lenient=True)
    unmet = sum(c["unmet"] for c in counts.values())
    fooled = sum(c["fp"] for c in counts.values())
    items_unmet = sum(c["items_unmet"] for c in counts.values())
    items_fooled = sum(c["items_fp"] for c in counts.values())
    assert metrics["fp_crit"] == pytest.approx(fooled / unmet)
    assert metrics["fp_item"] == pytest.approx(items_fooled / items_unmet)
    assert metrics["ff_crit"] == 0.0 and metrics["ff_item"] == 0.0
    for kind, count in counts.items():
        if count["unmet"]:
            assert metrics[f"{kind}_fp_crit"] == pytest.approx(count["fp"] / count["unmet"]), kind
    assert metrics["hedge_fp_item"] == 1.0 and metrics["injection_fp_item"] == 1.0
    assert metrics["partial_fp_crit"] == 0.0 and metrics["vague_fp_crit"] == 0.0
    assert metrics["fp_crit_lo"] < metrics["fp_crit"] < metrics["fp_crit_hi"]


def test_unusable_perturber_replies_are_skipped_and_counted(two_audits) -> None:
    first, _, requests, _ = two_audits
    metrics = metrics_of(first)
    garbled_tasks = sum(garbled(t.behaviour) for t in TASKS)
    skipped_kinds = sum(perturber_made(k) for k in KIND_NAMES)
    assert metrics["skipped"] == garbled_tasks * skipped_kinds
    assert metrics["graded"] == metrics["variants"] - metrics["skipped"]
    # One call per task and perturber kind, one re-ask per FLAKY task and kind, every
    # re-ask for GARBLE tasks; the hedge reuses the contradiction.
    flaky_tasks = sum(t.behaviour == "FLAKY" for t in TASKS)
    perturber_calls = [r for r in requests if r["model"] == "perturber"]
    assert len(perturber_calls) == len(PERTURBER_KINDS) * (
        len(TASKS) + flaky_tasks + RETRIES * garbled_tasks
    )
    skipped = [s for s in first.samples or [] if s.metadata["audit"]["skipped"]]
    assert {str(s.id).split(":")[0] for s in skipped} == {
        t.task_id for t in TASKS if garbled(t.behaviour)
    }
    score = skipped[0].scores["judge_audit"]
    assert "Skipped" in (score.explanation or "")
    assert len(skipped[0].metadata["audit"]["perturber"]["replies"]) == RETRIES + 1
    judged_answers = [r for r in requests if r["model"] == "judge-perfect"]
    assert len(judged_answers) == metrics["graded"]  # the judge never sees a skipped variant


def test_the_cache_hands_the_same_variants_to_a_second_judge(two_audits) -> None:
    first, second, _, second_requests = two_audits
    assert not [r for r in second_requests if r["model"] == "perturber"]

    def variants(log: EvalLog) -> dict[str, str | None]:
        return {str(s.id): s.metadata["audit"]["text"] for s in log.samples or []}

    assert variants(first) == variants(second)
    assert any("(#" in (text or "") for text in variants(first).values())  # serials: written once


def report(*args: str) -> str:
    done = subprocess.run([HSS_INSPECT, "report", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_report_prints_each_judge_and_the_side_by_side_table(two_audits) -> None:
    first, second, _, _ = two_audits
    counts = expected_counts(lenient=True)
    text = report(first.location, second.location)
    assert "## Judge audit: openai-api/scripted/judge-perfect" in text
    unmet = sum(c["unmet"] for c in counts.values())
    fooled = sum(c["fp"] for c in counts.values())
    assert f"| {fooled}/{unmet} = {100 * fooled / unmet:.1f}% [" in text
    assert "No criterion verdict contradicts construction." in text
    assert f"## {LENIENT} in place of {PERFECT}" in text
    hedge = counts["hedge"]["unmet"]
    assert (
        f"| hedge | {hedge} | 0.0% → 100.0% | 0.0% → 0.0% | 0.0% → 100.0% | – | {hedge} | 0 |"
        in text
    )
    assert "Leaderboard" not in text  # audit logs get the audit tables only


def test_the_report_gives_the_audit_as_json(two_audits) -> None:
    first, second, _, _ = two_audits
    counts = expected_counts(lenient=True)
    data = json.loads(report("--format", "json", first.location, second.location))
    lenient = data["audits"][1]["by_kind"]
    for kind, count in counts.items():
        if count["unmet"]:
            assert lenient[kind]["rates"]["fp_crit"]["errors"] == count["fp"], kind
            assert lenient[kind]["rates"]["fp_crit"]["trials"] == count["unmet"], kind
    assert len(data["audits"][1]["wrong_verdicts"]) == sum(c["fp"] for c in counts.values())
    by_criterion = data["audits"][1]["by_criterion"]
    assert len(by_criterion) == sum(len(t.criteria) for t in TASKS)
    assert sum(row["crit_false_pass"] for row in by_criterion) == sum(
        c["fp"] for c in counts.values()
    )
    # every criterion is wrongly met on the injection (the lenient judge passes it)
    assert all("injection" in row["wrong_kinds"] for row in by_criterion)
    (pair,) = data["side_by_side"]
    assert pair["by_kind"]["injection"]["only_a_right"] == counts["injection"]["fp"]
    assert pair["by_kind"]["all"]["only_b_right"] == 0


def test_a_missing_perturber_is_named_and_rule_kinds_need_none(
    hss_repo: Path, audit_server: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, request_log = audit_server
    log, _ = run_eval(
        "hss_inspect/hss_judge_audit",
        tmp_path / "logs",
        base_url,
        model="none",
        grader=PERFECT,
        task_args={"dataset": hss_repo, "kinds": "reference,injection,vague"},
    )
    assert metrics_of(log)["variants"] == 3 * len(TASKS)
    start = len(request_log.read_text().splitlines())
    # a rule-made kind beside one the perturber writes: refused when the task starts, before
    # the judge grades any (one line, exit 1, no log)
    refused = run_refused(
        "hss_inspect/hss_judge_audit",
        tmp_path / "refused",
        base_url,
        model="none",
        grader=PERFECT,
        task_args={"dataset": hss_repo, "kinds": "reference,partial"},
    )
    assert "--model-role perturber=" in refused.stdout + refused.stderr
    assert requests_since(request_log, start) == []
