"""The real log viewer (`inspect view bundle`, headless Chromium) shows an HSS sample:
the frames after their labels in the transcript, and the verdict table under Scoring."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import served_viewer_bundle

CHROMIUM = shutil.which("chromium")
playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
]
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def served_bundle(standard_run, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log, _ = standard_run
    bundle = tmp_path_factory.mktemp("bundle") / "site"
    with served_viewer_bundle(Path(log.location).parent, bundle) as url:
        yield url


def test_sample_reads_in_the_viewer(served_bundle: str) -> None:
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(served_bundle)
        page.get_by_text("hss", exact=False).first.click(timeout=30_000)
        page.get_by_text("vid-rot-flaky").first.click(timeout=30_000)
        page.get_by_text("Frame at 1.50 s:").first.wait_for(timeout=30_000)
        assert page.get_by_text("Frame at 0.00 s:").count() >= 1
        assert page.locator("img").count() >= 4
        page.get_by_text("Scoring", exact=False).first.click()
        page.get_by_text("Gives the direction").first.wait_for(timeout=30_000)
        assert page.get_by_text("judge_attempts").count() >= 1
        browser.close()
