"""The frame-budget recipe run as an eval set against the scripted models, then the
report, its sweep table and its HTML page (headless Chromium) on the logs it wrote."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from hss_inspect.recipes.plans import plan_recipe
from hss_inspect.recipes.run import run_plan
from tests.support.runs import JUDGE

pytestmark = [pytest.mark.slow, pytest.mark.inspect_api]
HSS = str(Path(sys.executable).with_name("hss-inspect"))
BUDGETS = ["10", "25", "50", "100", "250", "500"]
ALIASES = {"GPT-6-astra": "openai-api/scripted/candidate", "judge-claude-opus-5": JUDGE}


@pytest.fixture(scope="module")
def sweep_logs(
    hss_repo: Path, model_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[EvalLog]]:
    base_url, _ = model_server
    log_dir = tmp_path_factory.mktemp("recipe-logs")
    patch = pytest.MonkeyPatch()
    patch.setenv("SCRIPTED_API_KEY", "test-key")
    patch.setenv("SCRIPTED_BASE_URL", base_url)
    patch.setenv("HSS_INSPECT_CACHE", str(tmp_path_factory.mktemp("recipe-cache")))
    try:
        runs = plan_recipe("frames", aliases=ALIASES)
        assert run_plan(runs, str(log_dir), {"dataset": str(hss_repo)}, display="none")
    finally:
        patch.undo()
    logs = [read_eval_log(str(p)) for p in sorted(log_dir.glob("*.eval"))]
    yield logs


def _hss(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([HSS, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_recipe_runs_every_budget_with_the_paper_settings(sweep_logs: list[EvalLog]) -> None:
    budgets = sorted(log.eval.task_args["max_frames"] for log in sweep_logs)
    assert budgets == [int(b) for b in BUDGETS]
    for log in sweep_logs:
        assert log.status == "success"
        config = log.plan.config  # the task's own generate config
        assert (config.reasoning_effort, config.timeout, config.max_retries) == ("max", 1200, 5)
        assert log.eval.config.epochs == 1
        assert log.eval.model_roles and log.eval.model_roles["grader"].model == JUDGE
        # built with its model active, as `inspect eval` builds it: the limits are recorded
        limits = log.eval.metadata["hss_provider_limits"]
        assert limits["model"] == ALIASES["GPT-6-astra"]


def test_report_agrees_with_inspects_own_metrics(sweep_logs: list[EvalLog], tmp_path: Path) -> None:
    folder = str(Path(sweep_logs[0].location).parent)
    out = tmp_path / "out"
    done = _hss("report", folder, "--format", "json", "--out", str(out), "--with-paper")
    rows = {row["log"]: row for row in json.loads(done.stdout)["rows"]}
    for log in sweep_logs:
        row = rows[log.location]
        assert log.results is not None
        metrics = log.results.scores[0].metrics
        assert row["pass_at_1"] == pytest.approx(metrics["pass_at_1"].value)
        assert row["n_tasks"] == 3 and row["grading_failures"] == 1
        assert row["max_frames"] == log.eval.task_args["max_frames"]
    for name in ("report.md", "report.csv", "report.json", "report.html"):
        assert (out / name).stat().st_size > 0
    for plot in ("leaderboard", "heatmap"):
        assert (out / f"{plot}.png").stat().st_size > 0 and (out / f"{plot}.svg").is_file()
    table = (out / "report.md").read_text()
    assert "| model (effort) | judge | pass@1 | image | video |" in table
    # runs of a local copy did not measure the paper's release: its rows stay out, saying why
    assert "(published)" not in table
    assert "The paper's rows are not shown: the runs read " in table
    assert ", not the paper's ScaleAI/HSS." in table


def test_sweep_table_over_the_recipe_logs(sweep_logs: list[EvalLog]) -> None:
    folder = str(Path(sweep_logs[0].location).parent)
    sweep = json.loads(_hss("report", "--sweep", "frames", folder, "--format", "json").stdout)
    assert sweep["levels"] == BUDGETS
    overall = next(r for r in sweep["rows"] if r["group"] == "all")
    by_budget = {str(log.eval.task_args["max_frames"]): log for log in sweep_logs}
    for level, value in overall["values"].items():
        results = by_budget[level].results
        assert results is not None
        assert value == pytest.approx(results.scores[0].metrics["pass_at_1"].value)


CHROMIUM = shutil.which("chromium")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_html_report_reads_in_chromium(sweep_logs: list[EvalLog], tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    from tests.test_viewer import BROWSER_ARGS

    folder = str(Path(sweep_logs[0].location).parent)
    page_file = tmp_path / "report.html"
    page_file.write_text(_hss("report", folder, "--format", "html").stdout)
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(page_file.as_uri())
        page.get_by_text("Leaderboard (pass@1, %)").wait_for(timeout=30_000)
        page.get_by_text("What each run cost").wait_for(timeout=30_000)
        # the leaderboard, the subdomains, what each run cost and each model over all runs
        assert page.locator("table").count() == 4
        assert page.locator("table").nth(3).locator("tbody tr").count() == 2  # model, judge
        assert page.locator("table").first.locator("tbody tr").count() == len(sweep_logs)
        images = page.locator("figure img")
        assert images.count() == 2
        widths = images.evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth)")
        assert all(w and w > 100 for w in widths), widths
        browser.close()


def test_the_judges_recipes_dry_run_prints_commands_that_regrade_as_it_does(
    sweep_logs: list[EvalLog], model_server: tuple[str, Path], tmp_path: Path
) -> None:
    """`recipe judges --dry-run` prints `inspect score` commands; run as printed, they
    append the same scores as the recipe does."""
    from hss_inspect.recipes.run import regrade

    base_url, _ = model_server
    env = {**os.environ, "SCRIPTED_API_KEY": "test-key", "SCRIPTED_BASE_URL": base_url}
    aliases = {
        "judge-gpt-5.6-terra": "openai-api/scripted/judge-b",
        "judge-gemini-3.6-flash": "hss/scripted",
    }
    by_recipe, by_commands = tmp_path / "recipe.eval", tmp_path / "commands.eval"
    for copy in (by_recipe, by_commands):
        shutil.copy(sweep_logs[0].location, copy)
    as_flags = [word for name, model in aliases.items() for word in ("--as", f"{name}={model}")]
    done = _hss("recipe", "judges", str(by_commands), *as_flags, "--dry-run")
    commands = [shlex.split(line) for line in done.stdout.splitlines()]
    assert len(commands) == 2 and all(
        c[:3] == ["inspect", "score", str(by_commands)] for c in commands
    )
    for words in commands:
        ran = subprocess.run(
            [str(Path(sys.executable).with_name("inspect")), *words[1:], "--display", "none"],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    patch = pytest.MonkeyPatch()
    patch.setenv("SCRIPTED_API_KEY", "test-key")
    patch.setenv("SCRIPTED_BASE_URL", base_url)
    try:
        regrade([str(by_recipe)], aliases)
    finally:
        patch.undo()

    def scores(path: Path) -> list[list[object]]:
        log = read_eval_log(str(path))
        return [[s.value for s in (x.scores or {}).values()] for x in log.samples or []]

    assert scores(by_commands) == scores(by_recipe)
    assert all(len(values) == 3 for values in scores(by_commands))


def test_judges_recipe_appends_a_scorer_per_judge_and_agreement_reads_them(
    sweep_logs: list[EvalLog], model_server: tuple[str, Path], tmp_path: Path
) -> None:
    from hss_inspect.recipes.run import regrade

    base_url, _ = model_server
    copy = tmp_path / "regraded.eval"
    shutil.copy(sweep_logs[0].location, copy)
    patch = pytest.MonkeyPatch()
    patch.setenv("SCRIPTED_API_KEY", "test-key")
    patch.setenv("SCRIPTED_BASE_URL", base_url)
    try:
        # A second scripted judge that grades like the first, and the demo provider's
        # judge, which marks every criterion unmet unless the answer quotes the reference.
        regrade(
            [str(copy)],
            {
                "judge-gpt-5.6-terra": "openai-api/scripted/judge-b",
                "judge-gemini-3.6-flash": "hss/scripted",
            },
        )
    finally:
        patch.undo()
    log = read_eval_log(str(copy))
    assert log.samples is not None
    assert all(len(s.scores or {}) == 3 for s in log.samples)
    done = _hss("agreement", str(copy), "--format", "json", "--out", str(tmp_path / "agree"))
    result = json.loads(done.stdout)
    assert result["judges"] == [JUDGE, "openai-api/scripted/judge-b", "hss/scripted"]
    pairs = {(p["a"], p["b"]): p for p in result["pairs"]}
    # vid-pass and vid-rot-flaky are graded (all criteria met by the scripted judges);
    # vid-garble stays a grading failure for the scripted judges and is left out.
    criteria = sum(
        len(s.metadata["criteria"]) for s in log.samples if s.metadata["task_id"] != "vid-garble"
    )
    same = pairs[(JUDGE, "openai-api/scripted/judge-b")]
    assert (same["n_items"], same["item_agreement"], same["item_kappa"]) == (2, 1.0, None)
    assert (same["n_criteria"], same["criterion_agreement"]) == (criteria, 1.0)
    strict = pairs[(JUDGE, "hss/scripted")]
    assert (strict["n_items"], strict["item_agreement"], strict["item_kappa"]) == (2, 0.0, 0.0)
    assert result["leniency"]["hss/scripted"] == pytest.approx(-100.0)
    assert (tmp_path / "agree" / "judges_openai-api-scripted-judge_vs_hss-scripted.png").is_file()
