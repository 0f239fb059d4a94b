"""The human study (paper Sec. 3.1): tasks dealt to annotators, their pages served by the
real `hss-inspect human serve` (driven in Chromium and over HTTP), the answers kept through
a SIGKILL, nothing of the reference or rubric sent to a browser, and the answers graded by
the same judge and reported beside the models."""

from __future__ import annotations

import base64
import json
import random
import re
import shutil
import statistics
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from inspect_ai.log import read_eval_log

from hss_inspect.core.errors import InputError
from hss_inspect.human.answers import jsonl_answers
from hss_inspect.human.assign import Assignable, assign
from hss_inspect.web.answers import ANSWER_MAX_CHARS
from tests.support.human_study import (
    TASKS,
    build_release,
    criterion,
    has_audio,
    human,
    reference,
    served,
)
from tests.support.runs import INSPECT

CHROMIUM = shutil.which("chromium")
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]
SECRETS = [text for task in TASKS for text in (reference(task[0]), criterion(task[0]))]
TASK_OF_QUESTION = re.compile(r"What do you see in (h-[a-z]+-\d)\?")


# ---- the assignment (pure) -------------------------------------------------------------


def spread(counts: list[int]) -> int:
    return max(counts) - min(counts)


@pytest.mark.parametrize("seed", range(40))
def test_tasks_are_dealt_to_distinct_annotators_in_even_shares(seed: int) -> None:
    rng = random.Random(seed)
    tasks = [
        Assignable(f"t{n}", rng.choice(("image", "video")), rng.choice("ABCD"))
        for n in range(rng.randint(5, 90))
    ]
    names = [f"a{n}" for n in range(rng.randint(1, 7))]
    per_task = rng.randint(1, len(names))
    given = assign(tasks, names, per_task, seed)
    copies = Counter(task_id for mine in given.values() for task_id in mine)
    assert copies == {task.task_id: per_task for task in tasks}
    assert all(len(set(mine)) == len(mine) for mine in given.values())
    by_id = {task.task_id: task for task in tasks}

    def shares(field: str, value: object) -> list[int]:
        return [sum(getattr(by_id[t], field) == value for t in given[name]) for name in names]

    assert spread([len(given[name]) for name in names]) <= 1
    for media in ("image", "video"):
        assert spread(shares("media_type", media)) <= 1
        for domain in "ABCD":
            assert spread(shares("kind", (media, domain))) <= 1
    for domain in "ABCD":
        assert spread(shares("domain", domain)) <= 2
    assert assign(tasks, names, per_task, seed) == given


def test_the_seed_changes_the_deal_and_too_many_answers_a_task_is_refused() -> None:
    tasks = [Assignable(f"t{n}", "image", "A") for n in range(30)]
    names = ["x", "y", "z"]
    assert assign(tasks, names, 1, 1) != assign(tasks, names, 1, 2)
    with pytest.raises(InputError, match="--answers-per-task 4: give 1 to 3"):
        assign(tasks, names, 4, 0)


# ---- answers from other platforms ------------------------------------------------------


def test_answers_in_jsonl_are_read_and_a_second_answer_by_one_person_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "answers.jsonl"
    line = {"task_id": "t1", "annotator": "p", "answer": "A dog.", "confidence": "sure"}
    path.write_text(json.dumps(line) + "\n\n" + json.dumps({**line, "annotator": "q"}) + "\n")
    first, second = jsonl_answers(path)
    assert (first.annotator, second.annotator, first.view, first.seconds) == (
        "p",
        "q",
        "media",
        None,
    )
    path.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(InputError, match="line 2: p answered t1 on line 1 too"):
        jsonl_answers(path)
    path.write_text(json.dumps({**line, "confidence": "maybe"}) + "\n")
    with pytest.raises(InputError, match="line 1: confidence 'maybe'"):
        jsonl_answers(path)


# ---- a study on disk, served -----------------------------------------------------------


@dataclass
class Study:
    path: Path
    release: Path
    tokens: dict[str, str]
    env: dict[str, str]


def new_study(tmp_path: Path, *flags: str) -> Study:
    import os

    release = build_release(tmp_path / "release")
    path = tmp_path / "study.sqlite"
    env = dict(os.environ)
    done = human("new", str(path), "--dataset", str(release), *flags, env=env)
    tokens = dict(re.findall(r"^  (\S+): http://127\.0\.0\.1:\d+/a/(\S+)$", done.stdout, re.M))
    return Study(path, release, tokens, env)


def page_task(html: str) -> str:
    found = re.search(r'name=task_id value="([^"]+)"', html)
    assert found, html
    return found.group(1)


def answer(
    client: httpx.Client, token: str, task_id: str, text: str, confidence: str = "sure"
) -> httpx.Response:
    form = {"task_id": task_id, "answer": text, "confidence": confidence}
    return client.post(f"/a/{token}/answer", data=form, follow_redirects=False)


def exported(study: Study, tmp_path: Path) -> list[dict]:
    out = tmp_path / "export.jsonl"
    human("export", str(study.path), "--out", str(out), env=study.env)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_token_reaches_its_own_tasks_only_and_nothing_secret_is_served(tmp_path: Path) -> None:
    study = new_study(tmp_path, "--annotators", "ann,bob", "--seed", "4")
    ann, bob = study.tokens["ann"], study.tokens["bob"]
    assert len(base64.urlsafe_b64decode(ann + "=" * (-len(ann) % 4))) * 8 >= 128
    with served(study.path, study.env) as server, httpx.Client(base_url=server.base) as client:
        bodies = []
        mine = page_task(client.get(f"/a/{ann}").text)
        theirs = page_task(client.get(f"/a/{bob}").text)
        # One character changed: never the token itself, whatever its last character is.
        altered = ann[:-1] + ("y" if ann.endswith("x") else "x")
        for path in (
            f"/a/{altered}",
            f"/a/{ann}/media/{theirs}",
            f"/a/{bob}/media/{mine}",
            f"/a/{ann}/media/../../data/test.jsonl",
            "/media/" + mine,
            "/",
            f"/a/{ann}/media/media/img_1.png",
        ):
            response = client.get(path)
            assert response.status_code == 404, path
            assert mine not in response.text and "What do you see" not in response.text
            bodies.append(response.content)
        assert answer(client, bob, mine, "taken").status_code == 303  # not bob's: not stored
        for task_id in (t[0] for t in TASKS):
            for token in (ann, bob):
                bodies.append(client.get(f"/a/{token}/media/{task_id}").content)
            bodies.append(client.get(f"/a/{ann}").content)
        assert not any(secret.encode() in body for body in bodies for secret in SECRETS)
    assert exported(study, tmp_path) == []


def test_the_clip_is_served_without_its_audio_track_and_with_every_frame(tmp_path: Path) -> None:
    import av

    study = new_study(tmp_path, "--annotators", "1", "--media", "video")
    original = study.release / "media" / "vid_sound.mp4"
    assert has_audio(original)
    (token,) = study.tokens.values()
    with served(study.path, study.env) as server, httpx.Client(base_url=server.base) as client:
        clip = client.get(f"/a/{token}/media/h-vid-2")
    assert clip.status_code == 200 and clip.headers["content-type"] == "video/mp4"
    served_clip = tmp_path / "served.mp4"
    served_clip.write_bytes(clip.content)
    assert not has_audio(served_clip)

    def video_packets(path: Path) -> list[bytes]:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            return [bytes(p) for p in container.demux(stream) if p.size]

    assert video_packets(served_clip) == video_packets(original)


def test_an_answer_over_the_cap_is_refused_kept_whole_and_escaped_and_a_double_submit_stores_one(
    tmp_path: Path,
) -> None:
    study = new_study(tmp_path, "--annotators", "1")
    (token,) = study.tokens.values()
    typed = "<script>document.title='owned'</script>" + "x" * ANSWER_MAX_CHARS
    with served(study.path, study.env) as server, httpx.Client(base_url=server.base) as client:
        task_id = page_task(client.get(f"/a/{token}").text)
        refused = answer(client, token, task_id, typed)
        assert refused.status_code == 422
        assert f"{len(typed):,} characters" in refused.text and "nothing was stored" in refused.text
        assert (
            "&lt;script&gt;document.title=&#x27;owned&#x27;&lt;/script&gt;" + "x" * ANSWER_MAX_CHARS
            in refused.text
        )
        assert "<script>document" not in refused.text
        assert answer(client, token, task_id, "unsure of it", confidence="").status_code == 422
        results: list[int] = []
        sends = [
            threading.Thread(
                target=lambda: results.append(answer(client, token, task_id, "Once.").status_code)
            )
            for _ in range(4)
        ]
        for send in sends:
            send.start()
        for send in sends:
            send.join()
        assert results == [303] * 4
        assert page_task(client.get(f"/a/{token}").text) != task_id
    (stored,) = exported(study, tmp_path)
    assert (stored["task_id"], stored["answer"], stored["confidence"]) == (task_id, "Once.", "sure")
    assert stored["seconds"] >= 0 and stored["view"] == "media"


# ---- in Chromium: two annotators at once, the server killed and started again ---------


needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


def typed_answer(task_id: str) -> str:
    """Even-numbered tasks answered with their reference (the scripted judge passes them)."""
    return (
        reference(task_id) if int(task_id[-1]) % 2 == 0 else f"I am not sure what {task_id} shows."
    )


def answer_in_browser(page, expected_position: int, assigned: int) -> str:  # type: ignore[no-untyped-def]
    header = page.locator("header").inner_text()
    assert f"task {expected_position} of {assigned}" in header
    media = page.locator(".media img, .media video").first
    media.wait_for(timeout=30_000)
    if page.locator(".media video").count():
        page.wait_for_function("document.querySelector('video').readyState >= 1", timeout=30_000)
    else:
        page.wait_for_function(
            "document.querySelector('.media img').naturalWidth > 0", timeout=30_000
        )
    task_id = TASK_OF_QUESTION.search(page.content()).group(1)  # type: ignore[union-attr]
    page.fill("textarea[name=answer]", typed_answer(task_id))
    page.check("input[value=sure]" if expected_position % 2 else "input[value=unsure]")
    with page.expect_navigation():
        page.click("button[type=submit]")
    return task_id


@pytest.mark.slow
@needs_chromium
def test_two_annotators_answer_at_once_through_a_server_killed_mid_study(tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    study = new_study(tmp_path, "--annotators", "ann,bob", "--seed", "2")
    bodies: list[bytes] = []
    answered: dict[str, list[str]] = {"ann": [], "bob": []}
    with served(study.path, study.env) as server, playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        pages = {}
        for name in answered:
            pages[name] = browser.new_context().new_page()
            pages[name].on(
                "response", lambda r: bodies.append(r.body()) if r.status != 206 else None
            )
            pages[name].goto(f"{server.base}/a/{study.tokens[name]}")
        for position in (1, 2):
            for name, page in pages.items():
                answered[name].append(answer_in_browser(page, position, 3))
        server.kill()
        server.start()
        for name, page in pages.items():
            page.goto(f"{server.base}/a/{study.tokens[name]}")
            answered[name].append(answer_in_browser(page, 3, 3))
            assert "All 3 tasks are answered" in page.content()
        browser.close()
    assert not any(secret.encode() in body for body in bodies for secret in SECRETS)
    stored = exported(study, tmp_path)
    by_person = {
        name: [a["task_id"] for a in stored if a["annotator"] == name] for name in answered
    }
    assert {k: sorted(v) for k, v in by_person.items()} == {
        k: sorted(v) for k, v in answered.items()
    }
    assert sorted(answered["ann"] + answered["bob"]) == sorted(t[0] for t in TASKS)
    assert all(a["answer"] == typed_answer(a["task_id"]) for a in stored)
    status = human("status", str(study.path), env=study.env).stdout
    assert re.search(r"ann\s+\|?\s*3\s+\|?\s*3", status) and re.search(
        r"bob\s+\|?\s*3\s+\|?\s*3", status
    )


# ---- the frames view shows what a model is sent ---------------------------------------


def request_frames(request: dict) -> tuple[str, list[str], list[bytes]]:
    """The question, frame labels and frame JPEGs of a candidate request."""
    parts = [p for m in request["messages"] if isinstance(m["content"], list) for p in m["content"]]
    texts = [p["text"] for p in parts if p.get("type") == "text"]
    images = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    labels = [t.strip() for t in texts if t.strip().startswith("Frame at ")]
    jpegs = [base64.b64decode(uri.split(",", 1)[1]) for uri in images]
    return "\n".join(texts), labels, jpegs


@pytest.mark.slow
def test_the_frames_view_shows_the_frames_and_labels_a_model_is_sent(
    hss_repo: Path, standard_run: tuple, tmp_path: Path
) -> None:
    import os

    _, requests = standard_run
    sent = [request_frames(r) for r in requests if "candidate" in r["model"]]
    path = tmp_path / "frames.sqlite"
    env = dict(os.environ)
    done = human(
        "new", str(path), "--dataset", str(hss_repo), "--media", "video", "--view", "frames",
        "--annotators", "1", env=env,
    )  # fmt: skip
    (token,) = re.findall(r"/a/(\S+)$", done.stdout, re.M)
    shown = 0
    with served(path, env) as server, httpx.Client(base_url=server.base, timeout=60) as client:
        while "All " not in (html := client.get(f"/a/{token}").text):
            task_id = page_task(html)
            labels = [escape_free(x) for x in re.findall(r"<figcaption>([^<]*)</figcaption>", html)]
            sources = re.findall(r'<img loading=lazy src="([^"]+)"', html)
            jpegs = [client.get(source).content for source in sources]
            question = re.search(r"<h2>Question</h2><p>([^<]*)</p>", html).group(1)  # type: ignore[union-attr]
            same = [s for s in sent if escape_free(question) in s[0] and len(s[2]) > 1]
            assert same, task_id
            assert any(labels == s[1] and jpegs == s[2] for s in same), task_id
            assert len(labels) > 1
            shown += 1
            assert answer(client, token, task_id, "Seen.").status_code == 303
    assert shown == sum(
        1
        for line in (hss_repo / "data" / "test.jsonl").read_text().splitlines()
        if '"video"' in line
    )


def escape_free(text: str) -> str:
    import html

    return html.unescape(text)


# ---- graded by the same judge, reported beside the models -----------------------------


def graded(
    answers: Path, release: Path, log_dir: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    command = [
        INSPECT, "eval", "hss_inspect/hss_human", "-T", f"answers={answers}",
        "-T", f"dataset={release}", "--model", "none", "--model-role", "grader=hss/scripted",
        "--log-dir", str(log_dir), "--display", "plain",
    ]  # fmt: skip
    # wide enough that the warning is one line
    wide = {**env, "COLUMNS": "400"}
    return subprocess.run(command, env=wide, capture_output=True, text=True, timeout=600)


def report_json(log_dir: Path, env: dict[str, str]) -> dict:
    command = [
        str(Path(INSPECT).with_name("hss-inspect")),
        "report",
        str(log_dir),
        "--format",
        "json",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


@pytest.mark.slow
def test_the_answers_are_graded_by_the_judge_and_reported_as_the_studys_row(
    tmp_path: Path, standard_run: tuple
) -> None:
    study = new_study(tmp_path, "--annotators", "ann,bob", "--answers-per-task", "2", "--seed", "7")
    domains = {t[0]: t[2] for t in TASKS}
    media = {t[0]: t[1] for t in TASKS}
    left_out = "h-img-3"
    with served(study.path, study.env) as server, httpx.Client(base_url=server.base) as client:
        for name, token in study.tokens.items():
            while "All " not in (html := client.get(f"/a/{token}").text):
                task_id = page_task(html)
                if task_id == left_out:
                    break
                n = int(task_id[-1]) + (name == "bob")
                text = reference(task_id) if n % 2 == 0 else ("" if n == 3 else "A guess.")
                sure = "sure" if task_id.startswith("h-img") or name == "ann" else "unsure"
                assert answer(client, token, task_id, text, sure).status_code == 303
    rows = exported(study, tmp_path)
    assert {r["task_id"] for r in rows} == {t[0] for t in TASKS} - {left_out}
    jsonl = tmp_path / "export.jsonl"
    figures = {}
    for source in (study.path, jsonl):
        log_dir = tmp_path / f"logs-{source.suffix[1:]}"
        done = graded(source, study.release, log_dir, study.env)
        assert done.returncode == 0, done.stderr
        assert f"no human answer and are left out: {left_out}" in done.stdout + done.stderr
        (log_file,) = log_dir.glob("*.eval")
        header = read_eval_log(str(log_file), header_only=True)
        assert header.eval.metadata["hss_human_unanswered"] == [left_out]
        figures[source.suffix] = report_json(log_dir, study.env)
    assert figures[".sqlite"]["rows"][0]["pass_at_1"] == figures[".jsonl"]["rows"][0]["pass_at_1"]

    passed = {(r["task_id"], r["annotator"]): r["answer"] == reference(r["task_id"]) for r in rows}
    tasks = sorted({t for t, _ in passed})
    per_task = {t: mean([float(p) for (u, _), p in passed.items() if u == t]) for t in tasks}
    (row,) = figures[".sqlite"]["rows"]
    assert (
        row["condition"] == "human"
        and row["n_tasks"] == len(tasks)
        and row["attempts"] == len(rows)
    )
    assert row["no_answer"] == sum(r["answer"] == "" for r in rows) == 1
    assert row["pass_at_1"] == pytest.approx(mean(list(per_task.values())))
    assert row["image"] == pytest.approx(
        mean([v for t, v in per_task.items() if media[t] == "image"])
    )
    assert row["video"] == pytest.approx(
        mean([v for t, v in per_task.items() if media[t] == "video"])
    )
    assert row["social"] == pytest.approx(
        mean([v for t, v in per_task.items() if domains[t] == "Social Understanding"])
    )
    (study_figures,) = figures[".sqlite"]["human"]
    unsure = [r for r in rows if r["confidence"] == "unsure"]
    sure = [r for r in rows if r["confidence"] == "sure"]
    assert study_figures["answers"] == len(rows)
    assert study_figures["unsure_share"] == pytest.approx(len(unsure) / len(rows))
    assert study_figures["pass_sure"] == pytest.approx(
        mean([passed[r["task_id"], r["annotator"]] for r in sure])
    )
    assert study_figures["pass_unsure"] == pytest.approx(
        mean([passed[r["task_id"], r["annotator"]] for r in unsure])
    )
    assert study_figures["median_seconds"] == pytest.approx(
        statistics.median(r["seconds"] for r in rows)
    )
    for person in study_figures["annotators"]:
        own = [p for (_, a), p in passed.items() if a == person["annotator"]]
        assert (person["answers"], person["pass_at_1"]) == (len(own), pytest.approx(mean(own)))

    command = [
        str(Path(INSPECT).with_name("hss-inspect")),
        "report",
        str(tmp_path / "logs-sqlite"),
        str(Path(standard_run[0].location).parent),
        "--with-paper",
    ]
    markdown = subprocess.run(
        command, env=study.env, capture_output=True, text=True, timeout=300
    ).stdout
    # the study's tasks are not the model run's: each heads a leaderboard of its own
    boards = markdown.split("## Leaderboard (pass@1, %)")[1:]
    assert len(boards) == 2
    (mine,) = [b for b in boards if "| Human baseline (this study) |" in b]
    (theirs,) = [b for b in boards if b is not mine]
    table = [line for line in mine.splitlines() if line.startswith("| ")]
    assert table[1].startswith("| Human baseline (this study) |")
    assert f"{100 * row['pass_at_1']:.1f} ±" in table[1]
    assert any(line.startswith("| openai-api/scripted/candidate") for line in theirs.splitlines())
    assert "openai-api/scripted/candidate" not in mine.split("## By subdomain")[0]
    # the study's rates in a sentence carry their sign
    assert f"unsure: {100 * study_figures['unsure_share']:.1f}% of the answers" in markdown
    assert f"pass@1 where sure: {100 * study_figures['pass_sure']:.1f}%; where unsure: " in markdown
    # both ran on local copies: the paper's published rows are set beside neither
    assert "(published)" not in markdown
    assert markdown.count("The paper's rows are not shown: the runs read ") == 2


def test_human_answer_submits_the_persons_text_as_the_answer_and_calls_no_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The solver of `hss_human` puts the person's answer where a model's would be; an
    empty answer leaves no assistant message (a no-answer zero for the scorer). (The
    check that a judge is bound has its own tests: here no eval binds roles.)"""
    import asyncio

    from hss_inspect.conditions import solver

    monkeypatch.setattr(solver, "require_roles", lambda labeler: None)

    from inspect_ai.model import ModelName
    from inspect_ai.solver import TaskState

    from hss_inspect.conditions.solver import human_answer
    from hss_inspect.core.settings import HUMAN_ANSWER

    def solved(text: str) -> TaskState:
        metadata = {"prompt": "What happens next?", HUMAN_ANSWER: text}
        state = TaskState(
            ModelName("none/none"), "s@p", 0, "What happens next?", [], metadata=metadata
        )

        async def no_model(state: TaskState, **kwargs: object) -> TaskState:
            raise AssertionError("no model is called")

        return asyncio.run(human_answer()(state, no_model))  # type: ignore[arg-type]

    answered = solved("The glass falls.")
    assert answered.output.completion == "The glass falls."
    assert [m.role for m in answered.messages] == ["user", "assistant"]
    assert "What happens next?" in answered.messages[0].text
    empty = solved("  ")
    assert empty.output.completion.strip() == "" and [m.role for m in empty.messages] == ["user"]
