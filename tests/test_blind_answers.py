"""Blind answers in review (`build new --blind-answers`): each round opens with the media and
the question alone, the reviewer's own answer is stored once before the reference and the
rubric are shown, `build check` grades the answers through `inspect eval` of `hss_human`,
and the status, the funnel, the release's card and the report carry what they measured."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from hss_inspect.construction import blind, store
from hss_inspect.construction.consensus import (
    Grade,
    TaskAnswers,
    baseline_line,
    consensus_lines,
    human_baseline,
    without_consensus,
)
from hss_inspect.report.records import AttemptRecord
from tests.support.build_pool import Build, build, new_build
from tests.support.human_study import served
from tests.support.runs import INSPECT
from tests.test_human import BROWSER_ARGS, CHROMIUM

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
REVIEWERS = ("rev-a", "rev-b", "rev-c")
# Where to keep screenshots of the pages, when set (as the other browser tests do).
SHOTS = Path(os.environ["HSS_TEST_SCREENSHOTS"]) if os.environ.get("HSS_TEST_SCREENSHOTS") else None
# What the authored tasks say; hss/scripted as the judge passes an answer that holds the
# reference answer and fails any other.
TASKS = {
    "street.png": ("Which way did the cyclist come from?", "The cyclist came from the left."),
    "kitchen.jpg": ("What made the cup fall?", "The cat pushed the cup."),
}
ROUND_ONE_WORDS = "In round one I say: the cyclist came from the left."


# ---- the arithmetic ------------------------------------------------------------------------


def test_the_baseline_is_pass_at_1_over_tasks_with_its_bootstrap_interval() -> None:
    grades = [Grade("t1", True, 1.0, "j")] * 3 + [
        Grade("t2", True, 1.0, "j"), Grade("t2", True, 1.0, "j"), Grade("t2", False, 0.0, "j"),
    ]  # fmt: skip
    found = human_baseline(grades)
    assert found is not None
    # two tasks, 1 and 2/3: pass@1 5/6; resampled means 2/3, 5/6, 1 with chances 1/4, 1/2,
    # 1/4, so the 2.5th and 97.5th percentiles are 2/3 and 1, half-width 1/6
    assert (found.pass_at_1, found.ci95) == (pytest.approx(5 / 6), pytest.approx(1 / 6))
    assert (found.tasks, found.answers, found.judges) == (2, 6, ("j",))
    assert baseline_line(found) == (
        "Human baseline: pass@1 83.3% ± 16.7 (95% bootstrap interval) over 2 admitted "
        "task(s), 6 blind answer(s) graded by j."
    )
    assert human_baseline([]) is None and "not measured yet" in baseline_line(None)


def test_admitted_tasks_without_measured_consensus_are_listed() -> None:
    tasks = [
        TaskAnswers("t1", "admitted", 3, 3, 3),
        TaskAnswers("t2", "admitted", 3, 3, 2),
        TaskAnswers("t3", "review", 2, 2, 0),  # not admitted (yet): not listed
        TaskAnswers("t4", "admitted", 3, 1, 1),
    ]
    assert [t.task_id for t in without_consensus(tasks)] == ["t2"]
    assert consensus_lines(tasks) == [
        "Admitted without measured consensus: t2 (2 of 3 met)",
        "Admitted with blind answers not yet graded: t4 (2)",
    ]


# ---- the server: stored once, before the reveal ----------------------------------------------


def blind_build(tmp_path: Path) -> Build:
    return new_build(
        tmp_path, "--authors", "ann", "--reviewers", ",".join(REVIEWERS), "--blind-answers",
        "--seed", "3",
    )  # fmt: skip


def item_of(b: Build, pool_path: str) -> str:
    (item,) = [i.item_id for i, _, _ in store.pool_items(b.path) if i.path == pool_path]
    return item


def author_and_submit(client: httpx.Client, b: Build, pool_path: str) -> str:
    prompt, reference = TASKS[pool_path]
    form = {
        "item_id": item_of(b, pool_path), "task_id": "", "opened_at": "0", "action": "submit",
        "subdomain": "Retrodiction", "prompt": prompt, "reference": reference,
        "criteria": "Names the cause\nSays what happened",
    }  # fmt: skip
    assert client.post(f"/b/{b.token('author', 'ann')}/task", data=form).status_code == 303
    (task_id,) = [
        t.task_id for t in store.tasks_of_author(b.path, "ann") if t.draft.prompt == prompt
    ]
    return task_id


def waiting(b: Build, task_id: str) -> store.ReviewSlot:
    (slot,) = [
        s for h in store.histories(b.path) if h.view.task_id == task_id for s in h.reviews
        if s.verdict is None
    ]  # fmt: skip
    return slot


def slot_form(slot: store.ReviewSlot, **fields: str) -> dict[str, str]:
    return {"task_id": slot.task_id, "revision": str(slot.revision), "round": str(slot.round),
            **fields}  # fmt: skip


def answer_and_pass(client: httpx.Client, b: Build, task_id: str, answer: str) -> str:
    """One round over HTTP: the blind answer, then Pass; the reviewer's name."""
    slot = waiting(b, task_id)
    token = b.token("reviewer", slot.reviewer)
    sent = slot_form(slot, answer=answer, confidence="sure")
    assert client.post(f"/b/{token}/blind", data=sent).status_code == 303
    verdict = client.post(f"/b/{token}/verdict", data=slot_form(slot, verdict="pass"))
    assert verdict.status_code == 303
    return slot.reviewer


def test_the_answer_is_stored_once_before_the_reveal_and_never_shown_to_another_round(
    tmp_path: Path,
) -> None:
    b = blind_build(tmp_path)
    prompt, reference = TASKS["street.png"]
    with (
        served(b.path, dict(os.environ), command="build") as server,
        httpx.Client(base_url=server.base) as client,
    ):
        task_id = author_and_submit(client, b, "street.png")
        slot = waiting(b, task_id)
        token = b.token("reviewer", slot.reviewer)
        before = client.get(f"/b/{token}")
        assert prompt in before.text and "Store my answer (final)" in before.text
        assert reference not in before.text and "Names the cause" not in before.text
        # a verdict before the answer: refused, nothing stored
        early = client.post(f"/b/{token}/verdict", data=slot_form(slot, verdict="pass"))
        assert early.status_code == 409 and reference not in early.text
        assert waiting(b, task_id).verdict is None
        # an answer over the study's limit, or without a confidence: kept, nothing stored
        missing = client.post(f"/b/{token}/blind", data=slot_form(slot, answer="Left."))
        assert missing.status_code == 422 and "sure or unsure" in missing.text
        assert (
            blind.answer_of(b.path, (slot.task_id, slot.revision, slot.round), slot.reviewer)
            is None
        )
        sent = slot_form(slot, answer=ROUND_ONE_WORDS, confidence="unsure")
        assert client.post(f"/b/{token}/blind", data=sent).status_code == 303
        key = (slot.task_id, slot.revision, slot.round)
        assert blind.answer_of(b.path, key, slot.reviewer) == (ROUND_ONE_WORDS, "unsure")
        after = client.get(f"/b/{token}").text
        assert reference in after and "Names the cause" in after and ROUND_ONE_WORDS in after
        # a changed answer is refused; the same answer sent again changes nothing
        changed = client.post(f"/b/{token}/blind", data={**sent, "answer": "From the right."})
        assert changed.status_code == 409 and "cannot be changed" in changed.text
        assert client.post(f"/b/{token}/blind", data=sent).status_code == 303
        assert blind.answer_of(b.path, key, slot.reviewer) == (ROUND_ONE_WORDS, "unsure")
        # another reviewer cannot answer this round for them
        other = next(name for name in REVIEWERS if name != slot.reviewer)
        forged = {**sent, "answer": "Forged."}
        client.post(f"/b/{b.token('reviewer', other)}/blind", data=forged)
        assert blind.answer_of(b.path, key, other) is None
        assert (
            client.post(f"/b/{token}/verdict", data=slot_form(slot, verdict="pass")).status_code
            == 303
        )
        # round 2: its reviewer sees neither round 1's answer, before or after their own
        second = waiting(b, task_id)
        token2 = b.token("reviewer", second.reviewer)
        assert ROUND_ONE_WORDS not in client.get(f"/b/{token2}").text
        client.post(f"/b/{token2}/blind", data=slot_form(second, answer="Mine.", confidence="sure"))
        revealed = client.get(f"/b/{token2}").text
        assert reference in revealed and "Mine." in revealed and ROUND_ONE_WORDS not in revealed


def test_a_build_without_the_setting_reviews_as_before(tmp_path: Path) -> None:
    b = new_build(tmp_path, "--authors", "ann", "--reviewers", ",".join(REVIEWERS))
    _, reference = TASKS["street.png"]
    with (
        served(b.path, dict(os.environ), command="build") as server,
        httpx.Client(base_url=server.base) as client,
    ):
        task_id = author_and_submit(client, b, "street.png")
        slot = waiting(b, task_id)
        page = client.get(f"/b/{b.token('reviewer', slot.reviewer)}").text
        assert reference in page and "Store my answer" not in page
    assert blind.status_lines(b.path) == [] and blind.baseline_lines(b.path) == []


# ---- the funnel's JSON, the Markdown funnel and the card: one baseline ------------------------


def graded_record(task_id: str, reviewer: str, passed: bool) -> AttemptRecord:
    """A blind answer as the `hss_human` log's records give it back, graded."""
    return AttemptRecord(
        log="human.eval", model="none", condition="human", reasoning_effort=None,
        max_frames=None, judge="hss/scripted", scorer="rubric_judge", task_id=task_id,
        epoch=1, attempt_id=f"{task_id}-{reviewer}", media_type="image", domain="d",
        subdomain="s", pass_=1.0 if passed else 0.0, rubric=1.0 if passed else 0.0,
        annotator=reviewer,
    )  # fmt: skip


def test_the_funnels_json_carries_the_human_baseline_the_card_and_the_markdown_print(
    tmp_path: Path,
) -> None:
    from hss_inspect.construction.rules import rules
    from tests.support.build_pool import task_row, write_tasks

    b = blind_build(tmp_path)
    rows = [task_row("t-street", "street.png"), task_row("t-kitchen", "kitchen.jpg")]
    build("import", str(b.path), str(write_tasks(tmp_path / "t.jsonl", rows)), "--author", "ann")
    ids = {t.draft.prompt: t.task_id for t in store.tasks_of_author(b.path, "ann")}
    street, kitchen = (ids[row["prompt"]] for row in rows)
    records = []
    for task_id, failing_round in ((street, None), (kitchen, 2)):
        for n in range(1, rules().rounds + 1):  # each round: the blind answer, then Pass
            slot = waiting(b, task_id)
            key = (task_id, slot.revision, slot.round)
            assert blind.store_answer(b.path, slot.reviewer, key, f"answer {n}", "sure")
            assert store.decide(b.path, slot.reviewer, key, "pass", None, None, rules().rounds)
            records.append(graded_record(task_id, slot.reviewer, n != failing_round))
    assert blind.store_grades(b.path, records, blind.to_grade(b.path), "human.eval") == (6, 5)

    figures = json.loads(build("funnel", str(b.path), "--format", "json").stdout)
    baseline = figures["blind_answers"]["human_baseline"]
    # two admitted tasks, 3 of 3 and 2 of 3 met: pass@1 5/6; the bootstrap's resampled
    # means 2/3, 5/6 and 1 put its 2.5th and 97.5th percentiles at 2/3 and 1 (half-width 1/6)
    assert baseline["pass_at_1"] == pytest.approx(5 / 6)
    assert baseline["ci95"] == pytest.approx(1 / 6)
    assert (baseline["tasks"], sorted(baseline["task_ids"])) == (2, sorted([street, kitchen]))
    assert (baseline["answers"], baseline["judges"]) == (6, ["hss/scripted"])
    assert figures["blind_answers"]["admitted_without_consensus"] == [kitchen]

    line = (
        "Human baseline: pass@1 83.3% ± 16.7 (95% bootstrap interval) over 2 admitted "
        "task(s), 6 blind answer(s) graded by hss/scripted."
    )
    without = f"Admitted without measured consensus: {kitchen} (2 of 3 met)"
    assert f"{100 * baseline['pass_at_1']:.1f}% ± {100 * baseline['ci95']:.1f}" in line
    markdown = build("funnel", str(b.path)).stdout
    build("export", str(b.path), "--out", str(tmp_path / "release"))
    card = (tmp_path / "release" / "README.md").read_text()
    for text in (markdown, card):
        assert line in text and without in text


def test_the_funnels_json_says_when_no_baseline_is_measured_yet(tmp_path: Path) -> None:
    b = blind_build(tmp_path)
    figures = json.loads(build("funnel", str(b.path), "--format", "json").stdout)
    assert figures["blind_answers"]["human_baseline"] is None
    assert "Human baseline: not measured yet" in build("funnel", str(b.path)).stdout


# ---- in Chromium, graded by inspect eval, on the card and in the report --------------------


def review_in_chromium(page, base: str, token: str, answer: str, shot: str = "") -> str:  # type: ignore[no-untyped-def]
    """The blind step, then the reveal and Pass; the text of the page before the reveal."""
    page.goto(f"{base}/b/{token}")
    page.locator(".media img").first.wait_for(timeout=30_000)
    blind_text = page.inner_text("body")
    page.fill("textarea[name=answer]", answer)
    page.check("input[name=confidence][value=sure]")
    if shot and SHOTS:
        page.screenshot(path=str(SHOTS / f"{shot}-blind.png"), full_page=True)
    with page.expect_navigation():
        page.click("text=Store my answer (final)")
    if shot and SHOTS:
        page.screenshot(path=str(SHOTS / f"{shot}-revealed.png"), full_page=True)
    page.check("input[name=verdict][value=pass]")
    with page.expect_navigation():
        page.click("text=Record verdict (final)")
    return blind_text


def check(b: Build, env: dict[str, str]) -> str:
    done = build("check", str(b.path), "--model-role", "grader=hss/scripted", env=env)
    return done.stdout


@pytest.mark.slow
@needs_chromium
def test_blind_answers_in_chromium_graded_by_the_judge_on_the_card_and_in_the_report(
    tmp_path: Path,
) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    b = blind_build(tmp_path)
    env = dict(os.environ)
    street_prompt, street_reference = TASKS["street.png"]
    _, cat = TASKS["kitchen.jpg"]
    if SHOTS:
        SHOTS.mkdir(parents=True, exist_ok=True)
    with (
        served(b.path, env, command="build") as server,
        httpx.Client(base_url=server.base) as client,
        playwright.sync_playwright() as driver,
    ):
        first = author_and_submit(client, b, "street.png")
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        # round 1 in Chromium, with a second tab that still holds the blind step
        slot = waiting(b, first)
        token = b.token("reviewer", slot.reviewer)
        stale = browser.new_context().new_page()
        stale.goto(f"{server.base}/b/{token}")
        stale.fill("textarea[name=answer]", "A second thought: from the right.")
        stale.check("input[name=confidence][value=unsure]")
        before = review_in_chromium(page, server.base, token, ROUND_ONE_WORDS, "round-1")
        assert street_prompt in before and street_reference not in before
        assert "Names the cause" not in before
        key = (slot.task_id, slot.revision, slot.round)
        assert blind.answer_of(b.path, key, slot.reviewer) == (ROUND_ONE_WORDS, "sure")
        with stale.expect_navigation():
            stale.click("text=Store my answer (final)")
        refused = stale.inner_text("body")
        if SHOTS:
            stale.screenshot(path=str(SHOTS / "round-1-changed-refused.png"), full_page=True)
        assert "cannot be changed" in refused and "from the right" not in refused
        assert blind.answer_of(b.path, key, slot.reviewer) == (ROUND_ONE_WORDS, "sure")
        # rounds 2 and 3 in Chromium: neither sees round 1's answer
        for n in (2, 3):
            slot = waiting(b, first)
            answer = f"Reviewer {n}: {street_reference}"
            seen = review_in_chromium(page, server.base, b.token("reviewer", slot.reviewer), answer)
            assert ROUND_ONE_WORDS not in seen
        # the second task (submitted now, so each page above showed the first) has its
        # round 1 over HTTP, then is graded while round 2 waits
        second = author_and_submit(client, b, "kitchen.jpg")
        answer_and_pass(client, b, second, f"I think {cat}")
        graded = check(b, env)
        assert "4 blind answer(s) graded, 4 met the rubric" in graded
        slot = waiting(b, second)
        pending = client.get(f"/b/{b.token('reviewer', slot.reviewer)}").text
        assert f"I think {cat}" not in pending and "met the rubric" not in pending
        answer_and_pass(client, b, second, "The dog did it.")  # fails the rubric
        answer_and_pass(client, b, second, cat)
        browser.close()
    graded = check(b, env)
    assert "3 blind answer(s) graded, 2 met the rubric" in graded
    status = build("status", str(b.path)).stdout
    assert "Blind answers: 6 given at the tasks' latest revisions, 6 graded, 5 met" in status
    assert f"Admitted without measured consensus: {second} (2 of 3 met)" in status
    funnel = json.loads(build("funnel", str(b.path), "--format", "json").stdout)
    assert funnel["blind_answers"]["admitted_without_consensus"] == [second]
    assert [(t["task_id"], t["met"]) for t in funnel["blind_answers"]["tasks"]] == [
        (first, 3), (second, 2),
    ]  # fmt: skip
    assert "met the rubric" in build("funnel", str(b.path)).stdout
    out = tmp_path / "release"
    exported = build("export", str(b.path), "--out", str(out)).stdout
    line = (
        "Human baseline: pass@1 83.3% ± 16.7 (95% bootstrap interval) over 2 admitted "
        "task(s), 6 blind answer(s) graded by hss/scripted."
    )
    print(exported)
    assert line in exported and line in (out / "README.md").read_text()

    # the same answers graded on the export: the human row beside a model run on the split
    logs = tmp_path / "logs"
    for argv in (
        ("hss_inspect/hss_human", "-T", f"answers={b.path}", "--model", "none"),
        ("hss_inspect/hss", "--model", "hss/scripted"),
    ):
        done = subprocess.run(
            [INSPECT, "eval", argv[0], "-T", f"dataset={out}", *argv[1:], "--model-role",
             "grader=hss/scripted", "--log-dir", str(logs), "--display", "none"],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    hss_inspect = str(Path(INSPECT).with_name("hss-inspect"))
    report = subprocess.run(
        [hss_inspect, "report", str(logs), "--format", "json"], env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    rows = {row["condition"]: row for row in json.loads(report.stdout)["rows"]}
    assert rows["human"]["pass_at_1"] == pytest.approx(5 / 6)
    assert rows["human"]["ci95"] == pytest.approx(1 / 6) and rows["human"]["attempts"] == 6
    assert rows["standard"]["n_tasks"] == 2
    markdown = subprocess.run(
        [hss_inspect, "report", str(logs)], env=env, capture_output=True, text=True, timeout=300
    ).stdout
    assert any(line.startswith("| Human baseline (this study) |") for line in markdown.splitlines())
