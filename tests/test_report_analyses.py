"""Judge agreement, paired comparison, sweeps, the paper's data and the plots, on
hand-made tables and logs whose every number is worked out here."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from hss_inspect.commands.cli import main
from hss_inspect.providers.paper_models import (
    deployments,
    judges,
    request_settings,
)
from hss_inspect.report import plots
from hss_inspect.report.paper import published_rows
from hss_inspect.report.records import read_logs
from hss_inspect.report.stats import cohen_kappa, mcnemar_exact_p, pass_at_k, spearman
from hss_inspect.report.sweep import build_sweep
from hss_inspect.report.tables import leaderboard_row, runs_of
from tests.support.logs import Item, Try, write_log

OTHER = "openai/gpt-5.6-terra"


def test_kappa_on_a_textbook_table() -> None:
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = 0.7, p_e = .5*.6 + .5*.4 = 0.5
    pairs = [(True, True)] * 20 + [(True, False)] * 5 + [(False, True)] * 10 + [(False, False)] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert math.isnan(cohen_kappa([(True, True)] * 3))  # no variation: undefined


def test_mcnemar_exact_on_a_hand_made_pairing() -> None:
    # 1 task only A passes, 9 only B: 2 * (C(10,0) + C(10,1)) / 2^10
    assert mcnemar_exact_p(1, 9) == pytest.approx(2 * 11 / 1024)
    assert mcnemar_exact_p(9, 1) == mcnemar_exact_p(1, 9)
    assert mcnemar_exact_p(5, 5) == 1.0
    assert mcnemar_exact_p(0, 0) == 1.0


def test_spearman_with_ties_and_pass_at_k_edges() -> None:
    # ranks of y: 1, 2, 3.5, 5, 3.5 -> r = 8 / sqrt(10 * 9.5)
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95))
    assert spearman([1, 2, 3], [30, 20, 10]) == pytest.approx(-1.0)
    assert pass_at_k(3, 0, 2) == 0.0 and pass_at_k(3, 2, 2) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def _regraded_log(path: Path, model: str = "openai/gpt-a") -> str:
    """Six answers with two criteria each, graded by the primary judge and re-graded
    (an appended scorer) by a second judge that differs on chosen criteria."""
    first = [(True, True), (True, False), (False, False), (True, True), (False, True), (True, True)]
    second = [
        (True, True),
        (True, True),
        (False, False),
        (True, False),
        (False, True),
        (True, True),
    ]
    items = []
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        items.append(
            Item(
                f"t{i}",
                "retrodiction",
                "image",
                (Try(all(a), verdicts=a),),
                extra={"rubric_judge1": (Try(all(b), verdicts=b, judge=OTHER),)},
            )
        )
    return write_log(path, items, model=model)


def test_agreement_between_two_judges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _regraded_log(tmp_path / "regraded.eval")
    assert main(["agreement", path, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["judges"] == ["anthropic/claude-opus-5", OTHER]
    (pair,) = result["pairs"]
    # criteria: 12 pairs, 2 differ (t1 c2, t3 c2); yes-rates 8/12 and 8/12
    assert pair["n_criteria"] == 12
    assert pair["criterion_agreement"] == pytest.approx(10 / 12)
    p_e = (8 / 12) ** 2 + (4 / 12) ** 2
    assert pair["criterion_kappa"] == pytest.approx((10 / 12 - p_e) / (1 - p_e))
    # items: first passes t0 t3 t5, second passes t0 t1 t5: 4 of 6 agree, p_e = 0.5
    assert pair["n_items"] == 6
    assert pair["item_agreement"] == pytest.approx(4 / 6)
    assert pair["item_kappa"] == pytest.approx((4 / 6 - 0.5) / 0.5)
    # both judges give 50%: no leniency either way
    assert result["leniency"] == {"anthropic/claude-opus-5": 0.0, OTHER: 0.0}


def test_leniency_correlation_and_self_preference(tmp_path: Path) -> None:
    from hss_inspect.report.agreement import judge_alignment

    def log(name: str, model: str, first: list[bool], second: list[bool]) -> str:
        items = [
            Item(f"t{i}", "retrodiction", "image", (Try(a),), extra={"s2": (Try(b, judge=OTHER),)})
            for i, (a, b) in enumerate(zip(first, second, strict=True))
        ]
        return write_log(tmp_path / name, items, model=model)

    log("x.eval", "anthropic/claude-x", [True, True, True, False], [True, True, False, False])
    log("y.eval", "openai/gpt-y", [True, False, False, False], [True, False, False, False])
    _, records = read_logs([tmp_path])
    alignment = judge_alignment(records)
    claude = "anthropic/claude-opus-5"
    assert alignment.model_scores == {
        "anthropic/claude-x": {claude: 75.0, OTHER: 50.0},
        "openai/gpt-y": {claude: 25.0, OTHER: 25.0},
    }
    assert alignment.leniency[claude] == pytest.approx((25 + 0) / 2)
    assert alignment.leniency[OTHER] == pytest.approx((-25 + 0) / 2)
    own = {(s["judge"], s["model"]): s["residual"] for s in alignment.self_preference}
    assert own == {
        (claude, "anthropic/claude-x"): pytest.approx(25 - 12.5),
        (OTHER, "openai/gpt-y"): pytest.approx(0 - (-12.5)),
    }
    (corr,) = alignment.correlations
    assert corr["n_models"] == 2 and corr["spearman"] == pytest.approx(1.0)


def test_compare_first_attempts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    P, F = Try(True), Try(False)
    # A passes t0 t1 t2 on first attempts, B passes t0 t3 t4 t5; t6 shared but B's first
    # attempt is a grading failure; later attempts never count.
    a_items = [
        Item("t0", "retrodiction", "image", (P, F)),
        Item("t1", "retrodiction", "image", (P, F)),
        Item("t2", "theory_of_mind", "video", (P, P)),
        Item("t3", "theory_of_mind", "video", (F, P)),
        Item("t4", "theory_of_mind", "video", (F, F)),
        Item("t5", "theory_of_mind", "video", (F, F)),
        Item("t6", "retrodiction", "image", (P, P)),
    ]
    b_items = [
        Item("t0", "retrodiction", "image", (P,)),
        Item("t1", "retrodiction", "image", (F,)),
        Item("t2", "theory_of_mind", "video", (F,)),
        Item("t3", "theory_of_mind", "video", (P,)),
        Item("t4", "theory_of_mind", "video", (P,)),
        Item("t5", "theory_of_mind", "video", (P,)),
        Item("t6", "retrodiction", "image", (Try(None),)),
        Item("t7", "retrodiction", "image", (P,)),
    ]
    a = write_log(tmp_path / "a.eval", a_items, model="m/single")
    b = write_log(tmp_path / "b.eval", b_items, model="m/agent")
    assert main(["compare", a, b, "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n_tasks"] == 6 and result["unpaired_tasks"] == 1
    assert result["a_pass"] == pytest.approx(3 / 6) and result["b_pass"] == pytest.approx(4 / 6)
    assert (result["a_only"], result["b_only"]) == (2, 3)
    assert result["mcnemar_p"] == pytest.approx(1.0)  # 2 * (1+5+10) / 32 capped at 1
    social = result["by_subdomain"]["theory_of_mind"]
    assert (social["n_tasks"], social["a_only"], social["b_only"]) == (4, 1, 3)
    assert social["delta"] == pytest.approx(3 / 4 - 1 / 4)
    # the page says how many shared tasks it left out, and says nothing when it left none
    assert main(["compare", a, b]) == 0
    assert "\n1 shared task(s) left out: first attempt not graded.\n" in capsys.readouterr().out
    c = write_log(tmp_path / "c.eval", b_items[:6], model="m/other")
    assert main(["compare", a, c]) == 0
    page = capsys.readouterr().out
    assert "| all |" in page and "left out" not in page


def _sweep_logs(tmp_path: Path) -> list[str]:
    P, F = Try(True), Try(False)
    # retrodiction passes 0, 1, 1 of one task; theory_of_mind 0, 0, 1 of two tasks... per level
    table = {
        "10": [(F,), (F,), (F,)],
        "100": [(P,), (F,), (F,)],
        "500": [(P,), (P,), (F,)],
    }
    paths = []
    for budget, tries in table.items():
        items = [
            Item("v0", "retrodiction", "video", tries[0]),
            Item("v1", "theory_of_mind", "video", tries[1]),
            Item("v2", "theory_of_mind", "video", tries[2]),
        ]
        paths.append(
            write_log(tmp_path / f"frames{budget}.eval", items, model="m/x", max_frames=int(budget))
        )
    return paths


def test_frame_sweep_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _sweep_logs(tmp_path)
    assert main(["report", "--sweep", "frames", *reversed(paths), "--format", "json"]) == 0
    sweep = json.loads(capsys.readouterr().out)
    assert sweep["sweep"] == "frames" and sweep["levels"] == ["10", "100", "500"]
    rows = {row["group"]: row for row in sweep["rows"]}
    assert rows["all"]["values"] == pytest.approx({"10": 0.0, "100": 1 / 3, "500": 2 / 3})
    assert rows["all"]["delta"] == pytest.approx(2 / 3)
    assert rows["retrodiction"]["values"] == {"10": 0.0, "100": 1.0, "500": 1.0}
    assert rows["theory_of_mind"]["values"] == {"10": 0.0, "100": 0.0, "500": 0.5}
    assert rows["theory_of_mind"]["delta"] == 0.5


def test_effort_levels_sort_weakest_first(tmp_path: Path) -> None:
    for effort in ("max", "low", "high"):
        write_log(
            tmp_path / f"{effort}.eval",
            [Item("t", "retrodiction", "image", (Try(effort != "low"),))],
            effort=effort,
        )
    _, records = read_logs([tmp_path])
    sweep = build_sweep(runs_of(records), "effort")
    assert sweep.levels == ("low", "high", "max")
    assert sweep.rows[0].delta == 1.0


def test_two_logs_at_one_level_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    item = [Item("t", "retrodiction", "image", (Try(True),))]
    write_log(tmp_path / "a.eval", item)
    write_log(tmp_path / "b.eval", item)
    assert main(["report", "--sweep", "effort", str(tmp_path)]) == 1
    assert "pass one log per level" in capsys.readouterr().err


# ---- the paper's data -------------------------------------------------------------------


def test_published_table1_rows() -> None:
    rows = published_rows()
    assert [r.kind for r in rows].count("model") == 25
    assert rows[0].label == "Human baseline" and rows[0].values["pass_at_1"] == 93.1
    assert rows[1].label == "GPT-6-astra (max)" and rows[1].values["ci95"] == 4.1
    assert rows[-1].kind == "control" and rows[-1].values["pass_at_1"] == 6.6
    gemini = next(r for r in rows if r.label.startswith("Gemini-3.8-flash"))
    assert gemini.values["think_tokens"] == 10407 and gemini.values["social"] == 40.0


def table5_rows() -> dict[str, dict[str, Any]]:
    """Table 5 as the paper prints it: judges, and models whose settings it does not
    publish, show no native video or frame cap."""
    rows = {}
    for found in deployments() + judges():
        published = found.settings_published and found.vendor != "Judge"
        rows[found.name] = {
            "effort": found.effort,
            "max_tokens": found.max_tokens,
            "native_video": found.native_video if published else None,
            "frames": found.frame_cap if published else None,
        }
    return rows


def test_table5_registry_with_derived_frame_caps() -> None:
    table5 = table5_rows()
    assert len(deployments()) == 25 and len(judges()) == 3
    # Native video and frame caps as the paper's Table 5 gives them, derived from the
    # model limits rather than stored twice.
    expected = {
        "GPT-6-astra": (False, 500),
        "Gemini-3.8-flash": (True, 500),
        "Muse Spark 1.3": (True, 50),
        "Qwen3.8-Max": (False, 250),
        "GLM-5.3-flash": (False, 60),
        "Kimi-K3": (False, 100),
        "Claude-Opus-5.5": (False, 500),
    }
    for model, (native, frames) in expected.items():
        assert (table5[model]["native_video"], table5[model]["frames"]) == (native, frames), model
    assert table5["MiMo-v2.6-pro"]["frames"] is None  # Table 5 gives none
    assert table5["Claude-Opus-5.5"]["effort"] == "xhigh"
    assert table5["Gemini-3.6-flash"]["max_tokens"] == 16384
    assert table5["judge-claude-opus-5"]["max_tokens"] == 8192
    assert request_settings() == {"timeout": 1200, "max_retries": 5, "epochs": 3}


# ---- plots ------------------------------------------------------------------------------


def _check_images(out: Path, name: str, size: tuple[int, int]) -> None:
    with Image.open(out / f"{name}.png") as image:
        image.verify()
    with Image.open(out / f"{name}.png") as image:
        assert image.size == size
    root = ET.parse(out / f"{name}.svg").getroot()
    assert root.tag.endswith("svg")


def test_each_plot_renders_once(tmp_path: Path) -> None:
    from tests.test_report import ITEMS

    logs = [
        write_log(tmp_path / "logs" / "a.eval", ITEMS, model="m/a"),
        write_log(tmp_path / "logs" / "b.eval", ITEMS[:3], model="m/b", effort=None),
    ]
    _, records = read_logs(logs)
    rows = [leaderboard_row(run) for run in runs_of(records)]
    out = tmp_path / "plots"
    uris = plots.report_figures(rows, out)
    assert len(uris) == 2 and all(u.startswith("data:image/svg+xml;base64,") for u in uris.values())
    _check_images(out, "leaderboard", (800, 500))
    _check_images(out, "heatmap", (800, 500))
    _, sweep_records = read_logs(_sweep_logs(tmp_path / "sweep"))
    plots.sweep_figures(build_sweep(runs_of(sweep_records), "frames"), out)
    _check_images(out, "sweep_frames", (800, 500))
    scores = {"m/a": {"j1": 40.0, "j2": 38.0}, "m/b": {"j1": 20.0, "j2": 21.0}}
    plots.agreement_figures({"judges": ["j1", "j2"], "model_scores": scores}, out)
    _check_images(out, "judges_j1_vs_j2", (500, 500))


def test_missing_matplotlib_is_one_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    path = write_log(tmp_path / "a.eval", [Item("t", "retrodiction", "image", (Try(True),))])
    assert main(["report", path, "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "pip install 'hss-inspect[report]'" in err
    assert "the report (no plots)" in err and "its plots" not in err
    assert (tmp_path / "out" / "report.html").is_file()
    assert not (tmp_path / "out" / "leaderboard.png").exists()


# ---- recipes (plans; the frame sweep and the re-grading run in test_report_e2e) --------


def test_recipe_plans_follow_table5() -> None:
    from hss_inspect.recipes.plans import plan_recipe

    table1 = plan_recipe("table1")
    assert len(table1) == 25 and {r.task for r in table1} == {"hss"}
    assert all(r.epochs == 3 for r in table1)
    by_model = {r.model: r for r in table1}
    gemini = by_model["google/gemini-3.6-flash"].generate
    assert gemini == {
        "reasoning_effort": "high",
        "timeout": 1200,
        "max_retries": 5,
        "max_tokens": 16384,
    }
    assert "max_tokens" not in by_model["openai-api/dashscope/qwen3.8-flash"].generate
    assert table1[0].grader == {
        "model": "anthropic/claude-opus-5",
        "reasoning_effort": "high",
        "max_tokens": 8192,
    }
    (blind,) = plan_recipe("blind")
    assert (blind.task, blind.model, blind.epochs) == ("hss_blind", "openai/gpt-6-astra", 3)
    effort = plan_recipe("effort")
    levels = [(r.model, r.generate["reasoning_effort"]) for r in effort]
    assert len(effort) == 5 + 4 + 3 and all(r.epochs == 1 for r in effort)
    assert levels[:5] == [
        ("openai/gpt-6-astra", e) for e in ("low", "medium", "high", "xhigh", "max")
    ]
    frames = plan_recipe("frames", ["Kimi-K3"], {"Kimi-K3": "openai-api/proxy/kimi"})
    assert [r.task_args["max_frames"] for r in frames] == [10, 25, 50, 100, 250, 500]
    assert {r.model for r in frames} == {"openai-api/proxy/kimi"}
    with pytest.raises(ValueError, match="not a model of the paper's Table 5"):
        plan_recipe("table1", ["GPT-7"])


def test_recipe_dry_run_prints_inspect_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recipe", "blind", "--dry-run", "-T", "revision=abc123"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line == (
        "inspect eval hss_inspect/hss_blind --model openai/gpt-6-astra --epochs 3 "
        "--reasoning-effort max --timeout 1200 --max-retries 5 --max-tokens 128000 "
        "-T revision=abc123 --model-role "
        "'grader={model: anthropic/claude-opus-5, reasoning_effort: high, max_tokens: 8192}'"
    )


def test_report_benchmark_runs_and_its_readers_agree(tmp_path: Path) -> None:
    from benchmarks.bench_report import build_log, measure

    path = tmp_path / "small.eval"
    build_log(path, tasks=4, image_kb=1)
    row = measure(str(path), repeats=1)  # raises if any reader gives another pass@1
    # tasks i=0..3, attempts e=0..2 pass when (i + e) % 3 == 0: one of three each
    assert row["pass_at_1"] == pytest.approx(1 / 3)
    assert all(row[f"{name}_s"] > 0 for name in ("ours", "streamed", "excluded", "full"))
