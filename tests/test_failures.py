"""The failure-cause labeller and the failure tables, end to end: five scripted models,
single-call and agentic, a scripted labeller (some replies unreadable), then
`hss-inspect failures`, checked against tables computed here from the scripts."""

from __future__ import annotations

import json
import math
import shutil
import statistics
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from tests.support.agent_server import BY_MODEL, REASONING_TOKENS
from tests.support.fixture_repo import FixtureTask
from tests.support.runs import INSPECT, run_eval
from tests.support.servers import scripted_models

pytestmark = pytest.mark.slow

MODELS = ("m1", "m2", "m3", "m4", "m5")
LABELER = "openai-api/scripted/labeler"
ONE = ({"id": "c1", "title": "States the key fact"},)
TASKS = (
    FixtureTask("t-size", "FAIL CAUSE=size_fit|AGENT:PASS", "Physical & Spatial Logic",
                "Affordance & Feasibility", "image", "media/img.png", ONE),
    FixtureTask("t-model", "FAIL CAUSE=BY-MODEL", "Social Understanding", "Theory of Mind",
                "video", "media/clip.mp4", ONE),
    FixtureTask("t-nonsense", "FAIL CAUSE=NONSENSE", "Physical & Spatial Logic",
                "Hidden & Invisible", "image", "media/img.png", ONE),
    FixtureTask("t-once", "FAIL CAUSE=ONCE-NONSENSE|AGENT:PASS", "Temporal & Causal Dynamics",
                "Retrodiction", "video", "media/clip.mp4", ONE),
    FixtureTask("t-pass", "PASS|AGENT:FAIL CAUSE=overlap_as_depth",
                "Abstract & Contextual Inference", "Patterns & Pareidolia", "image",
                "media/img.png", ONE),
    FixtureTask("t-empty", "EMPTY", "Temporal & Causal Dynamics", "Extrapolation", "video",
                "media/clip.mp4", ONE),
)  # fmt: skip
SUBDOMAIN_LABEL = {
    "Affordance & Feasibility": "affordance_feasibility",
    "Theory of Mind": "theory_of_mind",
    "Hidden & Invisible": "hidden_invisible",
    "Retrodiction": "retrodiction",
    "Patterns & Pareidolia": "patterns_pareidolia",
    "Extrapolation": "extrapolation",
}
FAMILY = {
    "size_fit": "perception", "overlap_as_depth": "perception", "motive": "latent",
    "missed_cue": "latent", "no_committed_answer": "no_answer",
}  # fmt: skip


def expected_outcome(task: FixtureTask, model: str, agentic: bool) -> tuple[bool, str | None]:
    """(passed, cause) as the scripts decide them, written out here independently."""
    single, _, agent = task.behaviour.partition("|AGENT:")
    words = agent if agentic and agent else single
    if words == "EMPTY":
        return False, "no_committed_answer"
    if words == "PASS":
        return True, None
    cause = words.split("CAUSE=")[1]
    return False, {
        "BY-MODEL": BY_MODEL[model],
        "NONSENSE": "unlabelled",
        "ONCE-NONSENSE": "missed_cue",
    }.get(cause, cause)


def write_release(root: Path, source: Path) -> Path:
    (root / "media").mkdir(parents=True)
    shutil.copy(source / "media" / "img_pass.png", root / "media" / "img.png")
    shutil.copy(source / "media" / "vid_cfr.mp4", root / "media" / "clip.mp4")
    (root / "data").mkdir()
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(t.row()) + "\n" for t in TASKS))
    return root


@pytest.fixture(scope="module")
def labelled_logs(
    hss_repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, Path, str]]:
    release = write_release(tmp_path_factory.mktemp("failures-release"), hss_repo)
    logs = tmp_path_factory.mktemp("failures-logs")
    with scripted_models(tmp_path_factory.mktemp("failures-server"), "agent_server.py") as (
        base_url,
        _,
    ):
        run_eval(
            "hss_inspect/hss",
            logs,
            base_url,
            "hss_inspect/hss_agentic",
            "--model-role",
            f"labeler={LABELER}",
            model=",".join(f"openai-api/scripted/{m}" for m in MODELS),
            epochs=1,
            task_args={"dataset": release, "labeler": "true"},
            env={"HSS_INSPECT_CACHE": str(tmp_path_factory.mktemp("failures-cache"))},
        )
        yield logs, release, base_url


def read_all(logs: Path) -> list[EvalLog]:
    return [read_eval_log(str(path)) for path in sorted(logs.glob("*.eval"))]


def failures_json(*logs: Path) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hss_inspect.commands.cli",
            "failures",
            *map(str, logs),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_labels_in_the_log_follow_the_labeller_and_its_re_asks(labelled_logs) -> None:
    logs, _, _ = labelled_logs
    found = read_all(logs)
    single_m1 = next(
        log for log in found
        if log.eval.model.endswith("/m1") and log.eval.metadata["hss_condition"] == "standard"
    )  # fmt: skip
    assert single_m1.results is not None
    metrics = next(s for s in single_m1.results.scores if s.name == "failure_cause").metrics
    # m1's failures: size_fit, motive, unlabelled, missed_cue, no committed answer.
    assert (metrics["labelled"].value, metrics["unlabelled"].value) == (4, 1)
    assert metrics["perception"].value == pytest.approx(1 / 4)
    assert metrics["latent"].value == pytest.approx(2 / 4)
    assert metrics["no_answer"].value == pytest.approx(1 / 4)
    assert len(found) == 2 * len(MODELS)
    for log in found:
        assert log.status == "success"
        model = log.eval.model.rsplit("/", 1)[1]
        agentic = log.eval.metadata["hss_condition"] == "agentic"
        for sample in log.samples or []:
            task = next(t for t in TASKS if t.task_id == sample.id)
            passed, cause = expected_outcome(task, model, agentic)
            label = (sample.scores or {}).get("failure_cause")
            assert (label is None) == passed, (sample.id, model, agentic)
            if label is None:
                continue
            assert label.metadata["cause"] == cause
            family = FAMILY.get(str(cause))
            assert label.value["labelled"] == (family is not None)
            for name in ("perception", "latent", "reasoning", "no_answer"):
                expected = math.nan if family is None else float(name == family)
                assert label.value[name] == pytest.approx(expected, nan_ok=True)
            attempts = label.metadata["labeler_attempts"]
            expected_calls = {"unlabelled": 3, "no_committed_answer": 0}.get(str(cause), 1)
            if task.task_id == "t-once":
                expected_calls = 2
            assert attempts == expected_calls, (sample.id, model)


def expected_tables() -> dict[str, Any]:
    single = [(t, m, *expected_outcome(t, m, agentic=False)) for t in TASKS for m in MODELS]
    failed = [(t, m, c) for t, m, passed, c in single if not passed]
    labelled = [(t, m, c) for t, m, c in failed if c != "unlabelled"]
    overall = Counter(c for _, _, c in labelled)
    by_subdomain: dict[str, Counter[str]] = {}
    by_media: dict[str, Counter[str]] = {}
    for t, _, c in labelled:
        by_subdomain.setdefault(SUBDOMAIN_LABEL[t.subdomain], Counter())[c] += 1
        by_media.setdefault(t.media_type, Counter())[c] += 1
    per_task: dict[str, list[str]] = {}
    for t, _, c in labelled:
        per_task.setdefault(t.task_id, []).append(c)
    agreement = [Counter(cs).most_common(1)[0][1] / len(cs) for cs in per_task.values()]
    return {
        "failed": len(failed),
        "labelled": len(labelled),
        "overall": overall,
        "by_subdomain": by_subdomain,
        "by_media": by_media,
        "consensus_tasks": len(per_task),
        "median_same_cause": statistics.median(agreement),
        "all_same_cause": sum(a == 1 for a in agreement) / len(agreement),
    }


def test_cause_tables_match_an_independent_count(labelled_logs) -> None:
    logs, _, _ = labelled_logs
    result = failures_json(logs)
    expected = expected_tables()
    overall = result["overall"]
    assert overall["failures"] == expected["failed"]
    assert overall["labelled"] == expected["labelled"]
    assert overall["unlabelled"] == len(MODELS)  # t-nonsense, for every model
    assert overall["not_labelled"] == 0
    total = expected["labelled"]
    assert {c: v["count"] for c, v in overall["causes"].items()} == dict(expected["overall"])
    for cause, count in expected["overall"].items():
        assert overall["causes"][cause]["share"] == pytest.approx(count / total)
    families = Counter()
    for cause, count in expected["overall"].items():
        families[FAMILY[cause]] += count
    assert {f: v["count"] for f, v in overall["families"].items()} == dict(families)
    for group, table in (("by_subdomain", "by_subdomain"), ("by_media", "by_media")):
        for name, counts in expected[table].items():
            row = result[group][name]
            assert {c: v["count"] for c, v in row["causes"].items()} == dict(counts), name
            n = sum(counts.values())
            for cause, count in counts.items():
                assert row["causes"][cause]["share"] == pytest.approx(count / n)
    consensus = result["consensus"]
    assert consensus["tasks"] == expected["consensus_tasks"] == 4
    assert consensus["median_same_cause"] == pytest.approx(expected["median_same_cause"])
    assert consensus["all_same_cause"] == pytest.approx(expected["all_same_cause"])


def test_agentic_against_single_call_tables(labelled_logs) -> None:
    logs, _, _ = labelled_logs
    agentic = failures_json(logs)["agentic"]
    assert len(agentic["pairs"]) == len(MODELS)
    rows = [
        (t, expected_outcome(t, m, False), expected_outcome(t, m, True))
        for t in TASKS
        for m in MODELS
    ]
    assert agentic["paired_attempts"] == len(rows)
    before = Counter(s[1] for _, s, _ in rows if not s[0])
    after = Counter(a[1] for _, _, a in rows if not a[0])
    fixed = Counter(s[1] for _, s, a in rows if not s[0] and a[0])
    for cause in set(before) | set(after):
        row = agentic["causes"][cause]
        assert (row["before"], row["after"]) == (before[cause], after[cause]), cause
        if before[cause]:
            assert row["fixed_share"] == pytest.approx(fixed[cause] / before[cause])
    a_only = sum(s[0] and not a[0] for _, s, a in rows)
    b_only = sum(a[0] and not s[0] for _, s, a in rows)
    assert (agentic["pass"]["a_only"], agentic["pass"]["b_only"]) == (a_only, b_only)
    # Exact two-sided McNemar over the discordant pairs, computed directly.
    n = a_only + b_only
    tail = sum(math.comb(n, i) for i in range(min(a_only, b_only) + 1))
    assert agentic["pass"]["mcnemar_p"] == pytest.approx(min(1.0, 2 * tail / 2**n))
    for task in TASKS:
        group = agentic["by_subdomain"][SUBDOMAIN_LABEL[task.subdomain]]
        single_pass = statistics.mean(s[0] for t, s, _ in rows if t is task)
        agent_pass = statistics.mean(a[0] for t, _, a in rows if t is task)
        assert group["a_pass"] == pytest.approx(single_pass)
        assert group["delta"] == pytest.approx(agent_pass - single_pass)
    cost = agentic["agent_cost"]
    assert cost["pass"]["median_steps"] == 1 and cost["fail"]["median_steps"] == 1
    assert cost["fail"]["mean_thinking_tokens"] == REASONING_TOKENS


def test_inspect_score_labels_an_existing_log(labelled_logs, tmp_path: Path) -> None:
    _, release, base_url = labelled_logs
    log, _ = run_eval(
        "hss_inspect/hss",
        tmp_path / "unlabelled",
        base_url,
        model="openai-api/scripted/m4",
        epochs=1,
        task_args={"dataset": release},
    )
    assert all("failure_cause" not in (s.scores or {}) for s in log.samples or [])
    before = failures_json(tmp_path / "unlabelled")["overall"]
    assert before["labelled"] == 0 and before["not_labelled"] == before["failures"] == 5
    command = [INSPECT, "score", "--scorer", "hss_inspect/failure_cause", "--action", "append"]
    command += ["--overwrite"]
    command += ["--model-role", f"labeler={LABELER}", str(log.location)]
    env = {**__import__("os").environ, "SCRIPTED_API_KEY": "k", "SCRIPTED_BASE_URL": base_url}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rescored = read_eval_log(str(log.location))
    labels = {
        str(s.id): s.scores["failure_cause"].metadata["cause"]
        for s in rescored.samples or []
        if "failure_cause" in (s.scores or {})
    }
    assert labels == {
        t.task_id: c
        for t in TASKS
        for passed, c in [expected_outcome(t, "m4", agentic=False)]
        if not passed
    }
