"""A log written with --no-log-images still reads in the real viewer: the media note, every
frame's label with its time and the question are there; the images are not."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.runs import run_eval
from tests.support.servers import served_viewer_bundle

CHROMIUM = shutil.which("chromium")
playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
]
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]


@pytest.fixture(scope="module")
def served_bundle(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    logs = tmp_path_factory.mktemp("logs")
    log, done = run_eval(
        "hss_inspect/hss",
        logs,
        model_server[0],
        "--no-log-images",
        "--sample-id",
        "vid-rot-flaky",
        task_args={"dataset": hss_repo},
        epochs=1,
        env={"HSS_INSPECT_CACHE": str(tmp_path_factory.mktemp("cache"))},
    )
    assert log.status == "success", done.stderr
    bundle = tmp_path_factory.mktemp("bundle") / "site"
    with served_viewer_bundle(logs, bundle) as url:
        yield url


def test_frame_times_show_without_the_images(served_bundle: str) -> None:
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(served_bundle)
        page.get_by_text("hss", exact=False).first.click(timeout=30_000)
        page.get_by_text("vid-rot-flaky").first.click(timeout=30_000)
        page.get_by_text("Frame at 1.50 s:").first.wait_for(timeout=30_000)
        assert page.get_by_text("Frame at 0.00 s:").count() >= 1
        assert page.get_by_text("Question:", exact=False).count() >= 1
        sources = page.locator("img").evaluate_all("els => els.map(e => e.src)")
        assert not [s for s in sources if s.startswith("data:image/jpeg")]
        browser.close()
