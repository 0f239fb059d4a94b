"""`hss-inspect report --format register`: the register's Evaluation Report section from
logs, checked against figures computed here from the attempts written and the paper's
rows read straight from task_configs/paper_models.yaml; on real scripted runs, the
commands it gives back run the same evals again."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai.log import EvalLog, read_eval_log

from hss_inspect.commands.cli import main
from hss_inspect.report.numbers import points
from tests.support.logs import Item, Try, write_log

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
T, F = Try(True), Try(False)


def published(model: str) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "task_configs" / "paper_models.yaml").read_text())
    (entry,) = [m for m in data["models"] if m["model"] == model]
    return dict(entry)


def table_rows(report: str) -> dict[str, list[str]]:
    """The Results table's rows by model."""
    lines = report.split("### Results")[1].split("\n\n")[1].splitlines()[2:]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    return {row[0]: row for row in cells}


def section(report: str, heading: str) -> str:
    return report.split(f"### {heading}")[1].split("###")[0]


@pytest.fixture
def three_logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    tasks = [("t1", "retrodiction"), ("t2", "hidden_invisible"), ("t3", "theory_of_mind")]
    astra = [(T, T, F), (F, F, F), (T, T, T)]  # per task 2/3, 0, 1: pass@1 5/9
    write_log(
        folder / "astra.eval",
        [Item(t, s, "image", tries) for (t, s), tries in zip(tasks, astra, strict=True)],
        model="openai/gpt-6-astra",
        effort="max",
    )
    write_log(
        folder / "gemini.eval",
        [Item(t, s, "video", (T, T, T)) for t, s in tasks],
        model="google/gemini-3.8-flash",
        effort="low",
    )
    error = Try(False, model_error=True, error_message="provider outage")
    proxied = [(F, F, F), (F, error, F), (F, F, F)]
    write_log(
        folder / "proxied.eval",
        [Item(t, s, "image", tries) for (t, s), tries in zip(tasks, proxied, strict=True)],
        model="openai-api/proxy/claude",
        effort="xhigh",
    )
    return folder


def test_each_run_beside_the_papers_row(
    three_logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", str(three_logs), "--format", "register"]
    assert main([*argv, "--paper-model", "openai-api/proxy/claude=Claude-Opus-5.5"]) == 0
    report = capsys.readouterr().out
    rows = table_rows(report)
    astra, opus = published("GPT-6-astra")["table1"], published("Claude-Opus-5.5")["table1"]

    mine = 100 * 5 / 9
    row = rows["openai/gpt-6-astra"]
    assert row[3].startswith(f"{points(mine)} ± ")
    assert row[4] == f"{points(astra['pass_at_1'])} ± {points(astra['ci95'])}"
    assert row[5] == f"{mine - astra['pass_at_1']:+.1f}"
    assert row[6] == ("yes" if abs(mine - astra["pass_at_1"]) <= astra["ci95"] else "no")
    assert row[7:] == ["3", "0/9"]

    assert rows["google/gemini-3.8-flash"][4] == "ran at low; Table 1 is at high"
    assert rows["google/gemini-3.8-flash"][5] == "—"

    proxied = rows["openai-api/proxy/claude"]
    assert proxied[3] == "0.0 ± 0.0"
    assert proxied[5] == f"{-opus['pass_at_1']:+.1f}" and proxied[6] == "no"
    assert proxied[8] == "1/9"  # the outage: left out of the mean, counted invalid
    details = section(report, "Implementation Details")
    assert "openai-api/proxy/claude: 1 of 9 attempts invalid" in details
    assert '"Known differences from the reference harness" of this README' in details
    assert (
        f"1 of the 2 run(s) compared with the paper lie within its 95 % interval; the largest "
        f"difference is {-opus['pass_at_1']:+.1f} points (openai-api/proxy/claude)."
    ) in report
    assert "hss-inspect ships no results of real models" in report


def test_the_settings_that_differ_from_the_papers_are_listed(
    three_logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(three_logs / "astra.eval"), "--format", "register"]) == 0
    report = capsys.readouterr().out
    details = section(report, "Implementation Details")
    # the written log sets only the effort; the judge role carries no settings
    assert "openai/gpt-6-astra: timeout unset (paper: 1200)" in details
    assert "openai/gpt-6-astra: max_tokens unset (paper: 128000)" in details
    assert "openai/gpt-6-astra: judge reasoning_effort unset (paper: high)" in details
    assert "reasoning_effort max" not in details  # it matches Table 5
    assert "The register asks for results on at least two models; these logs hold 1." in report
    command = report.split("```bash\n")[1].split("\n```")[0]
    assert command == (
        "inspect eval hss_inspect/hss --model openai/gpt-6-astra --epochs 3 "
        "--reasoning-effort max --model-role 'grader={model: anthropic/claude-opus-5}'"
    )


def test_without_a_paper_model_it_says_no_comparison_is_possible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(tmp_path / "x.eval", [Item("t1", "retrodiction", "image", (T,))])
    assert main(["report", path, "--format", "register"]) == 0
    report = capsys.readouterr().out
    assert table_rows(report)["openai/gpt-test"][4] == "not in Table 1"
    assert "no comparison with the paper is possible" in report


# ---- real scripted runs: the commands given back run the same evals ---------------------


def _inspect(args: list[str], log_dir: Path) -> EvalLog:
    env = {**os.environ, "COLUMNS": "400"}
    command = [*args, "--log-dir", str(log_dir), "--display", "plain", "--log-format", "eval"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = sorted(log_dir.glob("*.eval"))
    return read_eval_log(str(path))


def _scores(log: EvalLog) -> dict[tuple[str | int, int], Any]:
    return {(s.id, s.epoch): s.scores["rubric_judge"].value for s in log.samples or []}


@pytest.mark.slow
def test_the_commands_given_back_run_the_same_evals(tmp_path: Path) -> None:
    inspect = str(BIN / "inspect")
    runs = {
        "standard": [inspect, "eval", "hss_inspect/hss_demo", "--model", "hss/scripted"],
        "oracle": [inspect, "eval", "hss_inspect/hss_oracle", "--model", "hss/scripted"],
    }
    common = ["--epochs", "2", "--reasoning-effort", "high", "--max-tokens", "4096"]
    common += [
        "-T",
        "dataset=demo",
        "--model-role",
        "grader={model: hss/scripted, max_tokens: 512}",
    ]
    first = {
        name: _inspect([*run, *common], tmp_path / "first" / name) for name, run in runs.items()
    }

    done = subprocess.run(
        [str(BIN / "hss-inspect"), "report", str(tmp_path / "first"), "--format", "register"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = done.stdout
    commands = report.split("```bash\n")[1].split("\n```")[0].splitlines()
    assert len(commands) == 2
    rows = table_rows(report)
    assert set(rows) == {"hss/scripted"}  # one row per model name: the last run's
    for name, log in first.items():
        metrics = log.results.scores[0].metrics if log.results else {}
        shown = f"{points(100 * metrics['pass_at_1'].value)} ± "
        shown += points(100 * metrics["pass_at_1_ci95"].value)
        assert f"| hss/scripted | high | {name} | {shown} |" in report

    for command in commands:
        words = shlex.split(command)
        condition = "oracle" if words[2] == "hss_inspect/hss_oracle" else "standard"
        again = _inspect([inspect, *words[1:]], tmp_path / "again" / condition)
        before = first[condition]
        for field in ("task_registry_name", "task_args_passed", "model", "model_roles"):
            assert getattr(again.eval, field) == getattr(before.eval, field), field
        assert again.eval.model_generate_config == before.eval.model_generate_config
        assert again.eval.config.epochs == 2
        assert _scores(again) == _scores(before)
    assert {"hss/scripted"} == {log.eval.model for log in first.values()}
    assert _scores(first["oracle"]) != _scores(first["standard"])


@pytest.mark.parametrize(
    "value", ["demo", 10, "temporal,physical", ["temporal", "physical"], "a, b", "x: y", "false"]
)
def test_a_value_survives_the_command_line_as_inspect_reads_it(value: Any) -> None:
    from inspect_ai._util.config import parse_cli_args  # Inspect's -T/-M reader, the oracle

    from hss_inspect.core.command_line import cli_value, survives_cli

    read = parse_cli_args([f"x={cli_value(value)}"])["x"]
    same = read == value or str(read).lower() == str(value).lower()
    assert survives_cli(value) == (same and not isinstance(read, dict))


def test_a_value_the_command_line_cannot_carry_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hss_inspect.report.log_header import invocation_of

    path = write_log(tmp_path / "m.eval", [Item("t1", "retrodiction", "image", (T,))])
    log = read_eval_log(path)
    log.eval.model_args = {"answer": "left, then right"}
    run = invocation_of(log)
    from hss_inspect.report.register import unwritable_args

    (note,) = unwritable_args(run)
    assert note.startswith("`-M answer=...` of `hss_inspect/hss`") and "--model-config" in note


def test_a_run_at_the_providers_default_effort_or_unfinished_is_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    items = [Item("t1", "retrodiction", "image", (T, T, T))]
    write_log(folder / "default.eval", items, model="openai/gpt-6-astra", effort=None)
    write_log(
        folder / "broken.eval",
        items,
        model="google/gemini-3.8-flash",
        effort="high",
        status="error",
        task_id="T2",
    )
    assert main(["report", str(folder), "--format", "register"]) == 0
    rows = table_rows(capsys.readouterr().out)
    assert (
        rows["openai/gpt-6-astra"][4] == "ran at the provider's default effort; Table 1 is at max"
    )
    assert rows["google/gemini-3.8-flash"][4] == (
        "the run ended error: complete it with inspect eval-retry"
    )
    assert rows["openai/gpt-6-astra"][6] == rows["google/gemini-3.8-flash"][6] == "—"
