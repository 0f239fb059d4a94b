"""Building tasks through the real command and server: roles enforced by the server, one
author and three reviewers driving the real pages in Chromium (an Edit that re-enters, a
Drop, the server killed mid-review), the checks run through `inspect eval` against scripted
models, and the export graded by `inspect eval` and opened by a human study."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml
from inspect_ai.log import read_eval_log

from hss_inspect.construction import store
from hss_inspect.report.records import read_log
from tests.support.build_pool import Build, build, new_build, task_row, write_tasks
from tests.support.human_study import HSS_INSPECT, has_audio, served
from tests.support.runs import CANDIDATE, INSPECT, JUDGE
from tests.support.servers import scripted_models
from tests.test_canary import frames
from tests.test_human import BROWSER_ARGS, CHROMIUM

pytestmark = pytest.mark.slow
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
REVIEWERS = ("rev-a", "rev-b", "rev-c")


def three_reviewers(tmp_path: Path, *flags: str) -> Build:
    return new_build(tmp_path, "--authors", "ann,bob", "--reviewers", ",".join(REVIEWERS), *flags)


def item_of(build_: Build, pool_path: str) -> str:
    (item,) = [i.item_id for i, _, _ in store.pool_items(build_.path) if i.path == pool_path]
    return item


def draft_form(
    item_id: str, task_id: str = "", action: str = "submit", **text: str
) -> dict[str, str]:
    return {
        "item_id": item_id, "task_id": task_id, "opened_at": str(time.time() - 120),
        "subdomain": "Retrodiction", "prompt": "What happened just before?",
        "reference": "The cup fell off the table.", "criteria": "Says the cup fell",
        "action": action, **text,
    }  # fmt: skip


def reviewer_of(build_: Build, task_id: str) -> tuple[str, store.ReviewSlot]:
    (slot,) = [
        s
        for h in store.histories(build_.path)
        if h.view.task_id == task_id
        for s in h.reviews
        if s.verdict is None
    ]
    return slot.reviewer, slot


def verdict_form(slot: store.ReviewSlot, verdict: str, **rest: str) -> dict[str, str]:
    return {
        "task_id": slot.task_id,
        "revision": str(slot.revision),
        "round": str(slot.round),
        "verdict": verdict,
        **rest,
    }


# ---- the server: roles, ids, double sends ------------------------------------------------


def test_roles_are_enforced_by_the_server_and_items_are_reached_by_id_only(tmp_path: Path) -> None:
    b = three_reviewers(tmp_path)
    ann, bob = b.token("author", "ann"), b.token("author", "bob")
    rev = {name: b.token("reviewer", name) for name in REVIEWERS}
    street, kitchen = item_of(b, "street.png"), item_of(b, "kitchen.jpg")
    secret = "SECRET-REFERENCE-kept-from-other-authors"
    with (
        served(b.path, dict(os.environ), command="build") as server,
        httpx.Client(base_url=server.base) as client,
    ):
        assert (
            client.post(f"/b/{ann}/task", data=draft_form(street, reference=secret)).status_code
            == 303
        )
        (task_id,) = [t.task_id for t in store.tasks_of_author(b.path, "ann")]
        dealt, slot = reviewer_of(b, task_id)
        others = [name for name in REVIEWERS if name != dealt]
        refused = [
            client.get(f"/b/{ann[:-1]}{'y' if ann.endswith('x') else 'x'}"),  # one char changed
            client.get("/b/"),
            client.get(f"/b/{bob}/task/{task_id}"),  # another author's task
            client.post(f"/b/{bob}/task", data=draft_form(street, task_id=task_id, action="save")),
            client.post(f"/b/{ann}/verdict", data=verdict_form(slot, "pass")),  # an author's link
            client.get(f"/b/{rev[dealt]}/item/{kitchen}"),  # a reviewer's link cannot author
            client.post(f"/b/{rev[dealt]}/task", data=draft_form(kitchen)),
            client.get(f"/b/{rev[others[0]]}/media/{street}"),  # not dealt to them
            client.get(f"/b/{ann}/media/street.png"),  # a path, not an id
            client.get(f"/b/{ann}/media/..%2F..%2Fbuild.sqlite"),
            client.get(f"/b/{ann}/media/item-9999"),
        ]
        assert [r.status_code for r in refused] == [404] * len(refused)
        assert not any(secret in r.text for r in refused)
        assert secret not in client.get(f"/b/{bob}").text
        taken = client.get(f"/b/{bob}/item/{street}").text
        assert "taken by another author" in taken and "<form" not in taken
        assert client.get(f"/b/{rev[dealt]}/media/{street}").status_code == 200
        assert secret in client.get(f"/b/{rev[dealt]}").text
        assert secret not in client.get(f"/b/{rev[others[0]]}").text
        clip = client.get(f"/b/{ann}/media/{item_of(b, 'clips/sound.mp4')}")
        assert clip.status_code == 200 and clip.headers["content-type"] == "video/mp4"
        served_clip = tmp_path / "served.mp4"
        served_clip.write_bytes(clip.content)
        assert has_audio(b.pool / "clips/sound.mp4") and not has_audio(served_clip)

        # sent four times at once: one verdict, one next round
        codes: list[int] = []
        sends = [
            threading.Thread(target=lambda: codes.append(
                client.post(f"/b/{rev[dealt]}/verdict", data=verdict_form(slot, "pass")).status_code
            ))
            for _ in range(4)
        ]  # fmt: skip
        for send in sends:
            send.start()
        for send in sends:
            send.join()
        assert codes == [303] * 4
    (history,) = store.histories(b.path)
    assert [(s.round, s.verdict) for s in history.reviews] == [(1, "pass"), (2, None)]


def test_the_frames_view_shows_the_frames_and_labels_a_model_is_sent(tmp_path: Path) -> None:
    from hss_inspect.conditions.prompt import frame_label

    b = three_reviewers(tmp_path, "--view", "frames", "--fps", "2")
    ann, clip = b.token("author", "ann"), item_of(b, "clips/door.mp4")
    with (
        served(b.path, dict(os.environ), command="build") as server,
        httpx.Client(base_url=server.base) as client,
    ):
        page = client.get(f"/b/{ann}/item/{clip}").text
        sources = re.findall(r'<img loading=lazy src="([^"]+)"', page)
        labels = re.findall(r"<figcaption>([^<]+)</figcaption>", page)
        # a 3 s clip at 2 fps: frames at 0, 0.5, ..., 2.5 s, each after its label
        assert labels == [frame_label(n / 2) for n in range(6)] and "0.50" in labels[1]
        frames = [client.get(src) for src in sources]
        assert {(f.status_code, f.headers["content-type"]) for f in frames} == {(200, "image/jpeg")}
        assert client.get(f"/b/{ann}/frames/6/{clip}").status_code == 404
        assert client.get(f"/b/{b.token('reviewer', 'rev-a')}/frames/0/{clip}").status_code == 404


# ---- in Chromium: one author, three reviewers -------------------------------------------


def screenshots() -> Path | None:
    folder = os.environ.get("HSS_TEST_SCREENSHOTS")
    return Path(folder) if folder else None


def review_in_browser(page, base: str, token: str, verdict: str, **fields: str) -> str:  # type: ignore[no-untyped-def]
    """Open the reviewer's page, check the media shows, give the verdict; the page's text."""
    page.goto(f"{base}/b/{token}")
    page.locator(".media img, .media video").first.wait_for(timeout=30_000)
    text = page.inner_text("body")
    page.check(f"input[name=verdict][value={verdict}]")
    if "feedback" in fields:
        page.fill("textarea[name=feedback]", fields["feedback"])
    if "reason" in fields:
        page.select_option("select[name=reason]", fields["reason"])
    with page.expect_navigation():
        page.click("text=Record verdict (final)")
    return text


@needs_chromium
def test_one_author_and_three_reviewers_build_through_the_pages_and_a_killed_server(
    tmp_path: Path,
) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    b = three_reviewers(tmp_path, "--seed", "5")
    ann = b.token("author", "ann")
    feedback = "Name the colour of the cup in the reference."
    shots = screenshots()
    with (
        served(b.path, dict(os.environ), command="build") as server,
        playwright.sync_playwright() as driver,
    ):
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        author = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        reviewer = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        author.goto(f"{server.base}/b/{ann}")
        assert "9 free" in author.inner_text("body")
        for file, prompt in (("street.png", "Which way did the cyclist come from?"),
                             ("kitchen.jpg", "What colour is the cup?")):  # fmt: skip
            author.goto(f"{server.base}/b/{ann}")
            # the row whose path cell is the file (a duplicate note may name it too)
            path_cell = author.locator("td", has_text=re.compile(f"^{re.escape(file)}$"))
            author.locator("tr", has=path_cell).locator("a").first.click()
            author.wait_for_function("document.querySelector('.media img').naturalWidth > 0")
            author.select_option("select[name=subdomain]", "Retrodiction")
            author.fill("textarea[name=prompt]", prompt)
            author.fill("textarea[name=reference]", f"The answer to: {prompt}")
            author.fill("textarea[name=criteria]", "States where it came from\nSays it was moving")
            with author.expect_navigation():
                author.click("text=Save draft")
            if shots and file == "street.png":
                author.screenshot(path=str(shots / "authoring.png"), full_page=True)
        # the server killed with two drafts saved: both are there after it starts again
        server.kill()
        server.start()
        author.goto(f"{server.base}/b/{ann}")
        assert author.inner_text("body").count("draft") >= 2
        first, second = (t.task_id for t in store.tasks_of_author(b.path, "ann"))
        for task_id in (first, second):
            author.goto(f"{server.base}/b/{ann}/task/{task_id}")
            assert (
                author.input_value("textarea[name=criteria]")
                == "States where it came from\nSays it was moving"
            )
            with author.expect_navigation():
                author.click("text=Submit for review")
        assert author.inner_text("body").count("in review (round 1 of 3)") == 2

        # the second task dropped in round 1, for pure perception
        name, _ = reviewer_of(b, second)
        review_in_browser(
            reviewer, server.base, b.token("reviewer", name), "drop", reason="pure_perception"
        )
        # the first passes round 1, and round 2 sends it back with feedback
        name, _ = reviewer_of(b, first)
        review_in_browser(reviewer, server.base, b.token("reviewer", name), "pass")
        name, _ = reviewer_of(b, first)
        review_in_browser(
            reviewer, server.base, b.token("reviewer", name), "edit", feedback=feedback
        )
        author.goto(f"{server.base}/b/{ann}")
        assert "Returned to you for revision" in author.inner_text("body")
        author.goto(f"{server.base}/b/{ann}/task/{first}")
        assert feedback in author.inner_text("body")
        author.fill("textarea[name=reference]", "The cyclist came from the left, on the red bike.")
        with author.expect_navigation():
            author.click("text=Submit for review")
        # the revision starts again at round 1; no reviewer ever sees another round's words
        seen = []
        for expected_round in (1, 2):
            name, slot = reviewer_of(b, first)
            assert (slot.revision, slot.round) == (2, expected_round)
            seen.append(review_in_browser(reviewer, server.base, b.token("reviewer", name), "pass"))
        name, slot = reviewer_of(b, first)
        reviewer.goto(f"{server.base}/b/{b.token('reviewer', name)}")
        reviewer.locator(".media img").wait_for(timeout=30_000)
        if shots:
            reviewer.screenshot(path=str(shots / "review.png"), full_page=True)
        # killed with the round-3 page open: nothing lost, the same review is there after
        server.kill()
        server.start()
        seen.append(review_in_browser(reviewer, server.base, b.token("reviewer", name), "pass"))
        assert all(feedback not in text and "round 3 of 3" in seen[-1] for text in seen)
        assert "No review waiting" in reviewer.inner_text("body")
        author.goto(f"{server.base}/b/{ann}")
        assert "admitted" in author.inner_text("body") and "dropped" in author.inner_text("body")
        browser.close()

    found = json.loads(build("funnel", str(b.path), "--format", "json").stdout)
    assert found["authored"] == 2 and found["admitted"] == 1 and found["reentries"] == 1
    assert [r["survivors"] for r in found["rounds"]] == [1, 1, 1]
    assert [r["dropped"] for r in found["rounds"]] == [1, 0, 0]
    assert found["rounds"][0]["drop_reasons"] == {"pure_perception": 1}
    assert [r["edits"] for r in found["rounds"]] == [0, 1, 0]
    (history,) = [h for h in store.histories(b.path) if h.view.task_id == first]
    assert [(s.revision, s.round, s.verdict) for s in history.reviews] == [
        (1, 1, "pass"), (1, 2, "edit"), (2, 1, "pass"), (2, 2, "pass"), (2, 3, "pass"),
    ]  # fmt: skip
    for revision in (1, 2):
        rounds = [s.reviewer for s in history.reviews if s.revision == revision]
        assert len(set(rounds)) == len(rounds)  # a distinct reviewer each round
    html = build("funnel", str(b.path), "--format", "html").stdout
    assert "<svg" in html and "After round 3" in html


# ---- the checks, through inspect eval ----------------------------------------------------


def test_the_checks_flag_a_reference_that_fails_its_rubric_and_a_blind_pass(tmp_path: Path) -> None:
    b = three_reviewers(tmp_path)
    rows = [
        task_row("fine", "street.png"),
        task_row("bad-rubric", "kitchen.jpg", golden_response="It FAILs to say the cup fell."),
        task_row("guessable", "park.png", prompt="[GUESS] What is obvious from the words alone?"),
    ]
    build(
        "import", str(b.path), str(write_tasks(tmp_path / "tasks.jsonl", rows)), "--author", "bob"
    )
    imported = {t.draft.prompt: t.task_id for t in store.tasks_of_author(b.path, "bob")}
    ids = {row["task_id"]: imported[row["prompt"]] for row in rows}
    with scripted_models(tmp_path / "models") as (base_url, _):
        env = {**os.environ, "SCRIPTED_API_KEY": "test-key", "SCRIPTED_BASE_URL": base_url}
        done = build(
            "check", str(b.path), "--model-role", f"grader={JUDGE}", "--model", CANDIDATE, env=env
        )
        again = build("check", str(b.path), "--model-role", f"grader={JUDGE}", env=env)
    assert "1 reference answer(s) short of their rubric, 1 blind pass(es)" in done.stdout
    assert "nothing to check: 3 task(s) in review" in again.stdout
    flags = {name: store.flags_of(b.path, task_id, 1) for name, task_id in ids.items()}
    flagged = {name: sorted((f.kind, f.flagged) for f in found) for name, found in flags.items()}
    assert flagged == {
        "fine": [("blind", False), ("reference", False)],
        "bad-rubric": [("blind", False), ("reference", True)],
        "guessable": [("blind", True), ("reference", False)],
    }
    (reference,) = [f for f in flags["bad-rubric"] if f.kind == "reference"]
    assert "criterion c1 ('Says what bad-rubric shows')" in reference.detail
    logs = sorted(b.path.parent.glob("build.checks/*/logs/*.eval"))
    conditions = sorted(read_log(str(p))[0].condition for p in logs)
    assert conditions == ["blind", "oracle"]
    # the reviewer dealt the task sees the finding, as a finding
    name, _ = reviewer_of(b, ids["bad-rubric"])
    with served(b.path, dict(os.environ), command="build") as server:
        html = httpx.get(f"{server.base}/b/{b.token('reviewer', name)}").text
    assert ids["bad-rubric"] in html  # one task dealt to each reviewer: theirs is shown
    assert "does not meet its own criterion" in html and "the verdict is yours" in html


# ---- the export: a release the tasks load ----------------------------------------------


def admit_all_but_one(b: Build) -> list[str]:
    """Pass every imported task through the rounds (the store's own calls), the last one
    dropped in round 2; the admitted ids."""
    admitted = []
    tasks = [t.task_id for t in store.tasks_of_author(b.path, "bob")]
    for task_id in tasks:
        for round_ in (1, 2, 3):
            name, slot = reviewer_of(b, task_id)
            verdict = "drop" if task_id == tasks[-1] and round_ == 2 else "pass"
            reason = "no_consensus" if verdict == "drop" else None
            assert store.decide(
                b.path, name, (task_id, slot.revision, slot.round), verdict, reason, None, 3
            )
            if verdict == "drop":
                break
        else:
            admitted.append(task_id)
    return admitted


def test_the_export_is_a_release_that_inspect_grades_and_a_study_opens(tmp_path: Path) -> None:
    b = three_reviewers(tmp_path)
    rows = [
        task_row("one", "street.png"),
        task_row(
            "two",
            "clips/ball.mp4",
            media_type="video",
            subdomain="Theory of Mind",
            domain="Social Understanding",
        ),
        task_row(
            "three", "desk.jpg", rubric_criteria=[{"id": "k", "title": "Weighted", "weight": 2}]
        ),
        task_row("four", "hall.png"),
    ]
    build(
        "import", str(b.path), str(write_tasks(tmp_path / "tasks.jsonl", rows)), "--author", "bob"
    )
    admitted = admit_all_but_one(b)
    out = tmp_path / "release"
    done = build("export", str(b.path), "--out", str(out), "--title", "Our private split")
    assert f"wrote version 1: {len(admitted)} admitted task(s)" in done.stdout
    assert (
        subprocess.run(["sha256sum", "-c", "--quiet", "checksums.sha256"], cwd=out).returncode == 0
    )
    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["configs"] == [
        {"config_name": "default", "data_files": [{"split": "test", "path": "data/test.jsonl"}]}
    ]
    assert "| after round 2 | 3 | 75.0% | 1 |" in card and "Our private split" in card
    written = [json.loads(line) for line in (out / "data" / "test.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in written] == admitted
    by_path = {r["media_path"]: r for r in written}
    assert by_path["media/desk.jpg"]["rubric_criteria"] == [
        {"id": "k", "title": "Weighted", "weight": 2.0}
    ]
    # the clip as released: the build's canary in it, every frame as the pool's
    released, pooled = out / "media" / "clips" / "ball.mp4", b.pool / "clips/ball.mp4"
    assert store.settings_of(b.path)["canary"].encode() in released.read_bytes()
    assert frames(released) == frames(pooled)
    assert not (out / "media" / "hall.png").exists()  # dropped: not released

    logs = tmp_path / "logs"
    graded = subprocess.run(
        [INSPECT, "eval", "hss_inspect/hss_oracle", "-T", f"dataset={out}", "--model", "none",
         "--model-role", "grader=hss/scripted", "--log-dir", str(logs), "--display", "none"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert graded.returncode == 0, graded.stderr
    (log_file,) = logs.glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["tasks"].value == len(admitted) and metrics["pass_at_1"].value == 1.0
    study = subprocess.run(
        [HSS_INSPECT, "human", "new", str(tmp_path / "study.sqlite"), "--dataset", str(out),
         "--annotators", "2"], capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert study.returncode == 0, study.stderr
    assert f"{len(admitted)} tasks from {out / 'data' / 'test.jsonl'}" in study.stdout


# ---- a user's mistakes: one line each ----------------------------------------------------


def test_a_builds_mistakes_are_one_line_each(tmp_path: Path) -> None:
    b = three_reviewers(tmp_path)
    pool = str(b.pool)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task_row("x", "no-such.png")])
    study = tmp_path / "not-a-build.sqlite"
    shutil.copy(b.path, study)
    with store.connect(study) as db:
        db.execute("DROP TABLE reviews")
    new = ("new", "--pool", pool, "--authors")
    cases = [
        ((*new, "1", "--reviewers", "2"), "each of the 3 review rounds needs its own reviewer"),
        ((*new, "ann", "--reviewers", "ann,b,c"), "2 reviewer(s) besides the author ann"),
        ((*new, "1", "--reviewers", "3", str(b.path)), "exists: a build is made once"),
        (("new", "--pool", str(tmp_path / "nope"), "--authors", "1", "--reviewers", "3"),
         "no such folder"),
        (("status", str(tmp_path / "missing.sqlite")), "no such file; make a build with"),
        (("status", str(study)), "a SQLite file, but not a build (no reviews table)"),
        (("import", str(b.path), str(tasks), "--author", "ann"),
         "task x: media_path 'no-such.png' names no file of the pool"),
        (("export", str(b.path), "--out", str(tmp_path / "out")), "no task is admitted yet"),
        (("check", str(b.path), "--model-role", "judge=x/y"),
         "--model-role grader=<provider/model> is required"),
    ]  # fmt: skip
    for n, (argv, says) in enumerate(cases):
        target = () if "exists" in says or argv[0] != "new" else (str(tmp_path / f"n{n}.sqlite"),)
        done = build(*argv, *target, ok=False)
        output = done.stdout + done.stderr
        assert done.returncode == 1 and "Traceback" not in output, output
        assert says in output and len(done.stderr.strip().splitlines()) == 1, output
