"""The task pages and failure examples of `hss-inspect report --pages --examples`, read in
headless Chromium from `file://`: runs of three scripted models (two attempts each, a
labeller, logs without images) and one more at a lower frame cap. Every image the pages
show is checked against the request the scripted model received (the count, the bytes,
the decoded pixels), every verdict against the log, every request the pages make against
the pages' folder, and the examples' captions against counts made here from the logs."""

from __future__ import annotations

import base64
import io
import json
import math
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from PIL import Image, ImageOps

from tests.support.fixture_repo import FixtureTask
from tests.support.runs import run_eval
from tests.support.servers import scripted_models, served_viewer_bundle

CHROMIUM = shutil.which("chromium")
playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
]
# file:// pages may read their own folder's files (the test reads back each image's
# bytes and pixels); the pages themselves never need it
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"]
HSS = str(Path(sys.executable).with_name("hss-inspect"))
MODELS = (
    "m1",
    "m2",
    "m4",
)  # the labeller names m1's and m2's BY-MODEL failures motive, m4's missed_cue
LABELER = "openai-api/scripted/labeler"
TWO = ({"id": "c1", "title": "Names the object"}, {"id": "c2", "title": "Says whether it fits"})
ONE = ({"id": "c1", "title": "States the key fact"},)
TASKS = (
    FixtureTask("t-size", "FAIL CAUSE=size_fit", "Physical & Spatial Logic",
                "Affordance & Feasibility", "image", "media/exif.jpg", TWO),
    FixtureTask("t-mixed", "FAIL CAUSE=BY-MODEL ON-IMAGE", "Physical & Spatial Logic",
                "Affordance & Feasibility", "image", "media/img.png", ONE),
    FixtureTask("t-mind", "FAIL CAUSE=BY-MODEL", "Social Understanding", "Theory of Mind",
                "video", "media/rot.mp4", ONE),
    FixtureTask("t-pass", "PASS", "Temporal & Causal Dynamics", "Retrodiction", "video",
                "media/clip.mp4", ONE),
    FixtureTask("t-garble", "GARBLE", "Physical & Spatial Logic", "Hidden & Invisible",
                "image", "media/img.png", ONE),
    FixtureTask("t-empty", "EMPTY", "Temporal & Causal Dynamics", "Extrapolation", "video",
                "media/clip.mp4", ONE),
    FixtureTask("t-outage", "OUTAGE", "Social Understanding",
                "Social Role, Norm & Power Dynamics", "image", "media/img.png", ONE),
)  # fmt: skip
LOW_CAP = 3  # the frame cap of the fourth run: other frames than the others were served


@dataclass(frozen=True)
class Pages:
    out: Path
    logs: list[EvalLog]
    sent: dict[tuple[str, str], list[bytes]]  # (log, task) -> the images its requests carried
    viewer: str  # `inspect view bundle` of the logs, served


def write_release(root: Path, source: Path) -> Path:
    (root / "media").mkdir(parents=True)
    for name, copied in (
        ("img_exif.jpg", "exif.jpg"),  # its EXIF orientation turns it upright when prepared
        ("img_pass.png", "img.png"),
        ("vid_rot.mp4", "rot.mp4"),  # displayed rotated: the frames sent are upright
        ("vid_cfr.mp4", "clip.mp4"),
    ):
        shutil.copy(source / "media" / name, root / "media" / copied)
    (root / "data").mkdir()
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(t.row()) + "\n" for t in TASKS))
    return root


def images_of(request: dict[str, Any]) -> list[bytes]:
    parts = [p for m in request["messages"] for p in m.get("content") or [] if isinstance(p, dict)]
    uris = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    return [base64.b64decode(uri.split(",", 1)[1]) for uri in uris]


def task_of(request: dict[str, Any]) -> str | None:
    text = json.dumps(request["messages"][:1])
    found = [t.task_id for t in TASKS if f"[{t.behaviour}]" in text]
    return found[0] if len(found) == 1 else None


@pytest.fixture(scope="module")
def pages(hss_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pages]:
    release = write_release(tmp_path_factory.mktemp("pages-release"), hss_repo)
    log_dir = tmp_path_factory.mktemp("pages-logs")
    cache = str(tmp_path_factory.mktemp("pages-cache"))
    common = {"dataset": release, "labeler": "true", "model_errors": "omit"}
    sent: dict[tuple[str, str], list[bytes]] = {}
    with scripted_models(tmp_path_factory.mktemp("pages-server"), "agent_server.py") as served:
        base_url, request_log = served
        for models, epochs, extra in (
            (MODELS, 2, {}),
            (("m1",), 1, {"max_frames": LOW_CAP}),
        ):
            before = set(log_dir.glob("*.eval"))
            start = len(request_log.read_text().splitlines())
            run_eval(
                "hss_inspect/hss",
                log_dir,
                base_url,
                "--no-log-images",
                "--max-retries",
                "0",  # t-outage's provider error is not retried
                "--model-role",
                f"labeler={LABELER}",
                model=",".join(f"openai-api/scripted/{m}" for m in models),
                epochs=epochs,
                task_args={**common, **extra},
                env={"HSS_INSPECT_CACHE": cache},
            )
            new = sorted(set(log_dir.glob("*.eval")) - before)
            requests = [json.loads(line) for line in request_log.read_text().splitlines()[start:]]
            for path in new:
                model = read_eval_log(str(path), header_only=True).eval.model.rsplit("/", 1)[1]
                for request in requests:
                    task = task_of(request)
                    if request["model"] != model or task is None or not images_of(request):
                        continue
                    found = sent.setdefault((str(path), task), images_of(request))
                    assert found == images_of(request)  # each attempt was sent the same
    out = tmp_path_factory.mktemp("pages-out")
    done = subprocess.run(
        [HSS, "report", str(log_dir), "--out", str(out), "--pages", "--examples"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "HSS_INSPECT_CACHE": cache},
    )
    assert done.returncode == 0, done.stderr
    logs = [read_eval_log(str(p)) for p in sorted(log_dir.glob("*.eval"))]
    bundle = tmp_path_factory.mktemp("pages-bundle") / "site"
    with served_viewer_bundle(log_dir, bundle) as url:
        yield Pages(out, logs, sent, url)


@pytest.fixture(scope="module")
def browser(pages: Pages) -> Iterator[Any]:
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield launched
        launched.close()


def opened(browser: Any, path: Path, requests: list[str]) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    return page


def sample_of(log: EvalLog, task_id: str, epoch: int) -> EvalSample:
    return next(s for s in log.samples or [] if s.id == task_id and s.epoch == epoch)


def log_by_path(pages: Pages, path: str) -> EvalLog:
    return next(log for log in pages.logs if Path(log.location) == Path(path))


# Reads each image of a set once it has loaded: its size, its bytes (as the file holds
# them) and its pixels (as the browser decoded them).
READ_IMAGES = """async (set) => {
  const out = [];
  for (const img of set.querySelectorAll('img')) {
    img.scrollIntoView();
    await img.decode();
    const bytes = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
    let binary = '';
    bytes.forEach(b => binary += String.fromCharCode(b));
    let rgb = '';
    for (let i = 0; i < pixels.length; i += 4)
      rgb += String.fromCharCode(pixels[i], pixels[i + 1], pixels[i + 2]);
    out.push({width: img.naturalWidth, height: img.naturalHeight,
              bytes: btoa(binary), rgb: btoa(rgb)});
  }
  return out;
}"""


def test_every_image_is_what_the_model_was_sent(pages: Pages, browser: Any) -> None:
    requests: list[str] = []
    checked = 0
    for task in TASKS:
        page = opened(browser, pages.out / "tasks" / f"{task.task_id}.html", requests)
        sets = {s.get_attribute("data-key"): s for s in page.locator(".set").all()}
        for article in page.locator("article.attempt").all():
            log, key = article.get_attribute("data-log"), article.get_attribute("data-media")
            expected = pages.sent.get((str(log), task.task_id))
            if expected is None:  # t-outage: the request failed, nothing was received
                assert task.task_id == "t-outage" and key
                continue
            shown = sets[key].evaluate(READ_IMAGES)
            assert len(shown) == len(expected)
            for image, sent in zip(shown, expected, strict=True):
                assert base64.b64decode(image["bytes"]) == sent
                # upright, as the package sizes it (and records it) and browsers show it
                decoded = ImageOps.exif_transpose(Image.open(io.BytesIO(sent))).convert("RGB")
                assert (image["width"], image["height"]) == decoded.size
                pixels = np.frombuffer(base64.b64decode(image["rgb"]), dtype=np.uint8)
                difference = np.abs(pixels.astype(int) - np.asarray(decoded).reshape(-1))
                assert difference.max() <= 3 and difference.mean() < 0.5
                checked += 1
        page.close()
    assert checked > 0
    assert all(url.startswith(pages.out.as_uri() + "/") for url in requests), requests


def test_a_run_served_other_frames_is_shown_apart(pages: Pages, browser: Any) -> None:
    requests: list[str] = []
    page = opened(browser, pages.out / "tasks" / "t-mind.html", requests)
    counts = sorted(s.locator("img").count() for s in page.locator(".set").all())
    assert counts == sorted({len(v) for (_, t), v in pages.sent.items() if t == "t-mind"})
    assert LOW_CAP in counts and len(counts) == 2
    warning = page.locator(".warn").first.inner_text()
    assert "not all served the same media" in warning and "frame cap" in warning
    labels = page.locator(".set").first.locator(".strip span").all_inner_texts()
    assert labels[0] == "Frame at 0.00 s:"
    page.locator(".set").first.locator("a.open").nth(1).click()
    large = page.locator("dialog[open] img")
    large.wait_for(timeout=10_000)
    assert large.evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
    assert page.locator("dialog[open] span").inner_text() == labels[1]
    page.close()


def verdicts_in_log(sample: EvalSample) -> list[tuple[str, bool, str]]:
    metadata = sample.scores["rubric_judge"].metadata or {}
    return [(v["id"], v["met"], v["justification"]) for v in metadata.get("verdicts") or []]


def outcome_in_log(sample: EvalSample) -> str:
    value = sample.scores["rubric_judge"].value
    assert isinstance(value, dict)
    if value["model_error"]:
        return "provider error"
    if value["grading_failure"]:
        return "grading failure"
    if value["no_answer"]:
        return "no answer"
    return "pass" if value["pass"] == 1 else "fail"


def test_each_verdict_shown_is_the_logs(pages: Pages, browser: Any) -> None:
    requests: list[str] = []
    seen = Counter[str]()
    for task in TASKS:
        page = opened(browser, pages.out / "tasks" / f"{task.task_id}.html", requests)
        articles = page.locator("article.attempt").all()
        expected = sum(1 for log in pages.logs for s in log.samples or [] if s.id == task.task_id)
        assert len(articles) == expected
        for article in articles:
            log = log_by_path(pages, str(article.get_attribute("data-log")))
            sample = sample_of(log, task.task_id, int(article.get_attribute("data-epoch") or 0))
            outcome = outcome_in_log(sample)
            assert article.get_attribute("data-outcome") == outcome
            seen[outcome] += 1
            rows = article.locator("tr.verdict").all()
            shown = [
                (
                    r.get_attribute("data-criterion"),
                    r.get_attribute("data-met") == "true",
                    r.locator("td").nth(2).inner_text(),
                )
                for r in rows
            ]
            assert shown == verdicts_in_log(sample)
            answer = sample.scores["rubric_judge"].answer or ""
            if answer:
                assert answer in article.inner_text()
        page.close()
    assert set(seen) == {"pass", "fail", "grading failure", "no answer", "provider error"}


def expected_captions(logs: list[EvalLog]) -> dict[str, str]:
    """Per task: 'F of R runs fail; K of them for CAUSE' from the logs' first attempts."""
    firsts: dict[str, list[tuple[bool, str | None]]] = {}
    for log in logs:
        for sample in log.samples or []:
            value = sample.scores["rubric_judge"].value
            assert isinstance(value, dict)
            if sample.epoch != 1 or math.isnan(value["pass"]):
                continue
            label = sample.scores.get("failure_cause")
            cause = (label.metadata or {}).get("cause") if label else None
            firsts.setdefault(str(sample.id), []).append((value["pass"] == 0, cause))
    captions = {}
    for task_id, found in firsts.items():
        failing = [cause for failed, cause in found if failed]
        if failing:
            cause, same = Counter(failing).most_common(1)[0]
            captions[task_id] = (
                f"{len(failing)} of {len(found)} runs fail; {same} of them for {cause}"
            )
    return captions


def test_examples_are_chosen_by_rule_and_say_how(pages: Pages, browser: Any) -> None:
    requests: list[str] = []
    page = opened(browser, pages.out / "examples.html", requests)
    figures = page.locator("figure.example").all()
    chosen = [f.get_attribute("data-task") for f in figures]
    # one a subdomain with a failure: t-size beats t-mixed (4 runs fail it for one cause,
    # against 3 of 4 for motive); t-garble and t-outage have no graded first attempt
    assert chosen == ["t-empty", "t-size", "t-mind"]
    captions = expected_captions(pages.logs)
    assert captions["t-size"] == "4 of 4 runs fail; 4 of them for size_fit"
    assert captions["t-mind"] == "4 of 4 runs fail; 3 of them for motive"
    for figure, task_id in zip(figures, chosen, strict=True):
        assert figure.locator(".how").inner_text() == captions[str(task_id)]
        assert figure.locator("img").count() > 0
    figures[1].get_by_text("Every run's answers").click()
    page.locator("h1").get_by_text("Task t-size").wait_for(timeout=10_000)
    assert all(url.startswith(pages.out.as_uri() + "/") for url in requests), requests
    page.close()


def test_the_reports_task_lists_link_to_the_task_pages(pages: Pages, browser: Any) -> None:
    requests: list[str] = []
    page = opened(browser, pages.out / "report.html", requests)
    always = page.locator("li").filter(has_text="solved by every run in every attempt")
    always.get_by_role("link", name="t-pass").click()
    page.locator("h1").get_by_text("Task t-pass").wait_for(timeout=10_000)
    page.close()


def test_a_link_opens_the_sample_in_inspect_view(pages: Pages, browser: Any) -> None:
    requests: list[str] = []
    page = opened(browser, pages.out / "tasks" / "t-mind.html", requests)
    link = str(page.locator("a.view").nth(1).get_attribute("href"))
    page.close()
    assert link.startswith("http://127.0.0.1:7575/#/logs/")
    viewer = browser.new_page(viewport={"width": 1400, "height": 1000})
    viewer.goto(pages.viewer + "#" + link.split("#", 1)[1])
    viewer.get_by_text("Sample t-mind (Epoch 2)").wait_for(timeout=30_000)
    viewer.close()
