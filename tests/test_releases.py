"""Releases that change without breaking comparisons (issue 48): each log records what it
measured (a fingerprint of each task, in four parts), `release diff` classes each change by
what it costs, `release carry` brings a log to the new release for that price and equals a
fresh run of it, and no table ranks runs of two releases.

Two commits of one dataset repo, served by olah as an offline hub, are the two releases
(tests/support/release_versions.py says what changes between them)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from tests.support import release_versions as rv
from tests.support.runs import INSPECT
from tests.support.servers import olah_hub, served_viewer_bundle

pytestmark = pytest.mark.slow

HSS = str(Path(INSPECT).with_name("hss-inspect"))


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    made = tmp_path_factory.mktemp("releases")
    first, second = rv.write_both(made / "copies")
    old, new = rv.commit_both(made / "mirrors", first, second)
    with olah_hub(made / "mirrors", tmp_path_factory.mktemp("olah")) as endpoint:
        env = {
            **os.environ,
            "HF_ENDPOINT": endpoint,
            "HF_HOME": str(made / "hf"),
            "HSS_INSPECT_CACHE": str(made / "cache"),
        }
        yield {"env": env, "old": old, "new": new, "first": first, "second": second, "dir": made}


def run(env: dict[str, str], *command: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def eval_release(
    hub: dict[str, Any], commit: str, logs: Path, task: str = "hss_inspect/hss"
) -> EvalLog:
    run(
        hub["env"], INSPECT, "eval", task, "-T", f"dataset={rv.REPO_ID}",
        "-T", f"revision={commit}", "--model", "hss/scripted", "-M", f"answer={rv.ANSWER}",
        "--model-role", "grader=hss/scripted", "--log-dir", str(logs), "--display", "none",
    )  # fmt: skip
    (log,) = logs.glob("*.eval")
    return read_eval_log(str(log))


@pytest.fixture(scope="module")
def old_log(hub: dict[str, Any]) -> EvalLog:
    return eval_release(hub, hub["old"], hub["dir"] / "logs-old")


@pytest.fixture(scope="module")
def new_log(hub: dict[str, Any]) -> EvalLog:
    return eval_release(hub, hub["new"], hub["dir"] / "logs-new")


@pytest.fixture(scope="module")
def carried(hub: dict[str, Any], old_log: EvalLog) -> EvalLog:
    out = hub["dir"] / "logs-carried" / "carried.eval"
    to = f"{rv.REPO_ID}@{hub['new']}"
    run(hub["env"], HSS, "release", "carry", old_log.location, to, "--out", str(out))
    return read_eval_log(str(out))


def short(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:16]


def test_a_log_records_each_tasks_fingerprint_in_four_parts(
    hub: dict[str, Any], old_log: EvalLog, new_log: EvalLog
) -> None:
    recorded = old_log.eval.metadata["hss_release"]
    assert recorded["parts"] == ["media", "prompt", "answer_key", "labels"]
    # the whole release's rows, told apart from another's where runs share no task
    assert len(recorded["rows"]) == 16
    assert recorded["rows"] != new_log.eval.metadata["hss_release"]["rows"]
    assert sorted(recorded["tasks"]) == sorted(r["task_id"] for r in rv.FIRST)
    for found in rv.FIRST:
        media = (hub["first"] / found["media_path"]).read_bytes()
        key = {
            "golden_response": found["golden_response"],
            "criteria": [[c["id"], c["title"], None] for c in found["rubric_criteria"]],
        }
        # the hub keeps these files in git: what it gives of their bytes is git's blob id
        blob = hashlib.sha1(b"blob %d\0" % len(media) + media).hexdigest()
        expected = [
            "g" + blob[:15],
            short(json.dumps([found["prompt"], found["media_type"]])),
            short(json.dumps(key, sort_keys=True)),
            short(json.dumps([found["domain"], found["subdomain"]])),
        ]
        assert recorded["tasks"][found["task_id"]] == ":".join(expected)


def diff_of(hub: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    done = run(hub["env"], HSS, "release", "diff", old, new, "--format", "json")
    return dict(json.loads(done.stdout))


def test_release_diff_classes_each_change_by_what_it_costs(
    hub: dict[str, Any], old_log: EvalLog
) -> None:
    sides = {
        "hub commits": (f"{rv.REPO_ID}@{hub['old']}", f"{rv.REPO_ID}@{hub['new']}"),
        "local copies": (str(hub["first"]), str(hub["second"] / "data" / "test.jsonl")),
        "a log and a commit": (old_log.location, f"{rv.REPO_ID}@{hub['new']}"),
    }
    for name, (old, new) in sides.items():
        diff = diff_of(hub, old, new)
        changed = {c["task_id"]: (c["change"], c["parts"]) for c in diff["changed"]}
        assert changed == {k: (v[0], v[1]) for k, v in rv.EXPECTED.items()}, name
        assert (diff["added"], diff["removed"], diff["unchanged"]) == (
            ["t-new", "t-new2"],
            ["t-gone"],
            2,
        )
    same = diff_of(hub, f"{rv.REPO_ID}@{hub['old']}", str(hub["first"]))
    assert same["changed"] == [] and same["added"] == [] and same["removed"] == []
    markdown = run(hub["env"], HSS, "release", "diff", *sides["hub commits"]).stdout
    assert (
        "2 task(s) added, 1 removed, 4 changed (2 to answer again, 1 to grade again, " in markdown
    )
    assert (
        "| t-fix | grade again | answer_key | reference or rubric changed: the stored answers "
        "are graded again |"
    ) in markdown


def scores(log: EvalLog) -> dict[tuple[str, int], Any]:
    return {(str(s.id), s.epoch): s.scores["rubric_judge"].value for s in log.samples or []}


def test_a_carried_log_scores_as_a_fresh_run_of_the_new_release(
    old_log: EvalLog, new_log: EvalLog, carried: EvalLog
) -> None:
    assert scores(carried) == scores(new_log)
    assert carried.results is not None and new_log.results is not None
    mine, fresh = carried.results.scores[0].metrics, new_log.results.scores[0].metrics
    assert {k: m.value for k, m in mine.items()} == {k: m.value for k, m in fresh.items()}
    assert carried.eval.metadata["hss_release"] == new_log.eval.metadata["hss_release"]
    assert (
        carried.eval.metadata["hss_dataset_revision"]
        == new_log.eval.metadata["hss_dataset_revision"]
    )
    how = {str(s.id): s.metadata["hss_carried"]["how"] for s in carried.samples or []}
    assert how == {
        "t-clip": "kept",
        "t-keep": "kept",
        "t-label": "relabelled",
        "t-fix": "graded again",
        "t-ask": "answered again",
        "t-media": "answered again",
        "t-new": "answered again",
        "t-new2": "answered again",
    }
    # kept samples are the old run's own: same answers, same scores
    old = {(str(s.id), s.epoch): s for s in old_log.samples or []}
    for sample in carried.samples or []:
        if sample.metadata["hss_carried"]["how"] in ("kept", "relabelled"):
            before = old[(str(sample.id), sample.epoch)]
            assert sample.output.completion == before.output.completion
            assert sample.scores == before.scores
            assert sample.uuid == before.uuid
    # the regraded answer is the old one, graded against the new reference
    fixed = [s for s in carried.samples or [] if s.id == "t-fix"]
    assert {s.uuid for s in fixed} == {s.uuid for s in old_log.samples or [] if s.id == "t-fix"}
    assert all(s.target == rv.ANSWER and s.scores["rubric_judge"].value["pass"] == 1 for s in fixed)
    # ... and its usage holds both gradings: the run's and the carry's
    for sample in fixed:
        before = old[("t-fix", sample.epoch)].role_usage["grader"]
        assert sample.role_usage["grader"].output_tokens > before.output_tokens


def test_the_estimate_says_what_the_carry_sends(hub: dict[str, Any], old_log: EvalLog) -> None:
    to = f"{rv.REPO_ID}@{hub['new']}"
    done = run(hub["env"], HSS, "release", "carry", old_log.location, to, "--estimate")
    epochs = old_log.eval.config.epochs
    assert "- graded again (reference or rubric changed): 1 task(s)" in done.stdout
    assert "- answered again (media or prompt changed, or added): 4 task(s)" in done.stdout
    assert f"Sends {(1 + 4) * epochs} judge conversation(s) and {4 * epochs} candidate" in (
        done.stdout
    )
    # running it again: every task of the new release, not of the old log
    assert f"Running it again would send {len(rv.SECOND) * epochs} candidate attempts" in (
        done.stdout
    )


def test_no_leaderboard_ranks_runs_of_two_releases(
    hub: dict[str, Any], old_log: EvalLog, new_log: EvalLog, carried: EvalLog
) -> None:
    logs = [old_log.location, new_log.location, carried.location]
    report = json.loads(run(hub["env"], HSS, "report", *logs, "--format", "json").stdout)
    groups = [sorted(entry["logs"]) for entry in report["releases"]]
    assert groups == [[old_log.location], sorted([new_log.location, carried.location])]
    assert {row["log"]: row["release"] for row in report["rows"]} == {
        old_log.location: 0,
        new_log.location: 1,
        carried.location: 1,
    }
    assert report["releases"][1]["heading"].startswith(f"{rv.REPO_ID}@{hub['new'][:12]}: 8 task(s)")
    (note,) = report["release_notes"]
    assert "2 task(s) added, 1 removed, 4 changed" in note
    assert f"hss-inspect release carry LOG {rv.REPO_ID}@{hub['new'][:12]}" in note
    markdown = run(hub["env"], HSS, "report", *logs, "--with-paper").stdout
    assert markdown.count("## Leaderboard (pass@1, %)") == 2
    assert "(published)" not in markdown
    assert f"The paper's rows are not shown: the runs read {rv.REPO_ID}@" in markdown


def test_compare_pairs_only_the_tasks_both_releases_share_unchanged(
    hub: dict[str, Any], old_log: EvalLog, new_log: EvalLog
) -> None:
    done = run(hub["env"], HSS, "compare", old_log.location, new_log.location, "--format", "json")
    result = json.loads(done.stdout)
    assert result["changed_tasks"] == {"answer again": 2, "grade again": 1, "recount": 1}
    assert result["n_tasks"] == 2  # t-keep and t-clip: the shared tasks that did not change


def test_agreement_and_the_register_refuse_runs_of_two_releases(
    hub: dict[str, Any], old_log: EvalLog, new_log: EvalLog
) -> None:
    logs = [old_log.location, new_log.location]
    done = subprocess.run(
        [HSS, "agreement", *logs], env=hub["env"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        f"hss-inspect agreement: agreement takes runs of one release: "
        f"{old_log.location} and {new_log.location} differ (4 shared task(s) differ"
    )


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_the_viewer_opens_a_carried_log(carried: EvalLog, tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    from tests.test_viewer import BROWSER_ARGS

    site = served_viewer_bundle(Path(carried.location).parent, tmp_path / "site")
    with site as url, playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=shutil.which("chromium"), args=BROWSER_ARGS
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        page.get_by_text("hss", exact=False).first.click(timeout=30_000)
        for task_id in ("t-keep", "t-fix", "t-new"):
            page.get_by_text(task_id).first.wait_for(timeout=30_000)
        page.get_by_text("t-fix").first.click()
        page.get_by_text(rv.ANSWER).first.wait_for(timeout=30_000)  # the stored answer
        browser.close()


@pytest.mark.parametrize(
    ("preset", "answered_again"),
    [
        # its own choice of tasks, the images, is in its log though not among the args passed
        ("hss_image", {"t-ask", "t-media", "t-new", "t-new2"}),
        # the blind control sends no media: a new picture changes nothing it measured
        ("hss_blind", {"t-ask", "t-new", "t-new2"}),
    ],
)
def test_a_presets_log_carries_as_a_fresh_run_of_the_preset(
    hub: dict[str, Any], tmp_path: Path, preset: str, answered_again: set[str]
) -> None:
    task = f"hss_inspect/{preset}"
    old = eval_release(hub, hub["old"], tmp_path / "old", task)
    fresh = eval_release(hub, hub["new"], tmp_path / "new", task)
    out = tmp_path / "carried.eval"
    run(hub["env"], HSS, "release", "carry", old.location, f"{rv.REPO_ID}@{hub['new']}",
        "--out", str(out))  # fmt: skip
    carried = read_eval_log(str(out))
    assert scores(carried) == scores(fresh)
    how = {str(s.id): s.metadata["hss_carried"]["how"] for s in carried.samples or []}
    assert {t for t, h in how.items() if h == "answered again"} == answered_again
    assert carried.eval.metadata["hss_selection"] == fresh.eval.metadata["hss_selection"]
