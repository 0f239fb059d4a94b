"""`hss-inspect recipe NAME --flow OUT`: every recipe's Inspect Flow spec, read back by
Flow's own loader, holds the recipe's plan; on the demo set a spec run by `flow run`
gives the logs the recipe gives, and each finishes the other's folder.

Inspect Flow is an optional extra (`hss-inspect[flow]`; `.ci/run` installs it after the
test extra, see pyproject.toml); without it these tests are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from hss_inspect.commands.cli import main
from hss_inspect.providers.paper_models import deployment, paper_data
from hss_inspect.recipes.plans import RECIPES, plan_recipe, with_task_args

inspect_flow = pytest.importorskip("inspect_flow", reason="Inspect Flow: pip install '.[flow]'")
from inspect_flow.api import load_spec  # noqa: E402

BIN = Path(sys.executable).parent
SCRIPTED = {"GPT-6-astra": "hss/scripted", "judge-claude-opus-5": "hss/scripted"}


def _set(config: Any) -> dict[str, Any]:
    return {k: v for k, v in config.model_dump().items() if v is not None}


@pytest.mark.parametrize("suffix", [".py", ".yaml"])
@pytest.mark.parametrize("name", list(RECIPES))
def test_every_recipe_spec_reads_back_as_its_plan(name: str, suffix: str, tmp_path: Path) -> None:
    out = tmp_path / "specs" / f"{name}{suffix}"
    log_dir = tmp_path / "logs" / name
    argv = ["recipe", name, "--flow", str(out), "--log-dir", str(log_dir), "-T", "revision=c0ffee"]
    assert main(argv) == 0
    spec = load_spec(str(out))  # Flow's loader: defaults folded into every task
    planned = with_task_args(plan_recipe(name), {"revision": "c0ffee"})
    assert spec.log_dir == str(log_dir)
    assert len(spec.tasks) == len(planned)
    for task, run in zip(spec.tasks, planned, strict=True):
        assert task.name == f"hss_inspect/{run.task}"
        assert task.args == run.task_args
        assert task.model.name == run.model
        assert _set(task.config) == run.generate
        grader = task.model_roles["grader"]
        assert {"model": grader.name, **_set(grader.config)} == run.grader
        assert task.epochs == run.epochs


def test_the_judges_spec_runs_the_answers_app_i_regrades(tmp_path: Path) -> None:
    out = tmp_path / "judges.py"
    assert main(["recipe", "judges", "--flow", str(out)]) == 0
    spec = load_spec(str(out))
    names = paper_data()["sweeps"]["judges"]["models"]
    assert [t.model.name for t in spec.tasks] == [deployment(n).inspect_model for n in names]
    assert {t.epochs for t in spec.tasks} == {3}
    assert "hss-inspect recipe judges" in out.read_text()


def test_a_spec_log_dir_is_the_recipes_folder_seen_from_the_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["recipe", "blind", "--flow", "specs/blind.yaml", "--log-dir", "logs/b"]) == 0
    assert load_spec("specs/blind.yaml").log_dir == "../logs/b"


def test_a_spec_file_must_be_python_or_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recipe", "blind", "--flow", str(tmp_path / "blind.json")]) == 1
    assert "Inspect Flow reads .py or .yaml specs" in capsys.readouterr().err
    assert not (tmp_path / "blind.json").exists()


# ---- end to end on the demo set -----------------------------------------------------


def _offline_env(home: Path) -> dict[str, str]:
    """Flow runs `uv pip freeze` (uv from this venv, offline) and keeps a file under the
    user's data folder (here a temporary one)."""
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "UV_OFFLINE": "1",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
    }


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _logs(folder: Path) -> list[EvalLog]:
    return [read_eval_log(str(p)) for p in sorted(folder.glob("*.eval"))]


def _samples(log: EvalLog) -> dict[tuple[str | int, int], tuple[str, dict[str, Any]]]:
    return {
        (s.id, s.epoch): (s.output.completion, {k: v.value for k, v in (s.scores or {}).items()})
        for s in log.samples or []
    }


@pytest.mark.slow
def test_a_flow_run_gives_the_recipes_logs(tmp_path: Path) -> None:
    env = _offline_env(tmp_path / "home")
    recipe = ["table1", "--models", "GPT-6-astra", "-T", "dataset=demo"]
    recipe += [arg for name, model in SCRIPTED.items() for arg in ("--as", f"{name}={model}")]
    hss = str(BIN / "hss-inspect")
    _run([hss, "recipe", *recipe, "--flow", "demo.py", "--log-dir", "flow"], env, tmp_path)
    _run(
        [str(BIN / "flow"), "run", "demo.py", "--store", "none", "--display", "plain"],
        env,
        tmp_path,
    )
    _run([hss, "recipe", *recipe, "--log-dir", "recipe"], env, tmp_path)

    (by_flow,), (by_recipe,) = _logs(tmp_path / "flow"), _logs(tmp_path / "recipe")
    for log in (by_flow, by_recipe):
        assert log.status == "success"
        assert (log.eval.model, log.eval.task_args_passed) == ("hss/scripted", {"dataset": "demo"})
    for field in ("task_registry_name", "task_version", "task_args", "model_roles", "metadata"):
        assert getattr(by_flow.eval, field) == getattr(by_recipe.eval, field), field
    # The task was built with its model active (the recipe as Flow and `inspect eval` do),
    # so the provider's limits were checked and recorded.
    assert by_recipe.eval.metadata["hss_provider_limits"]["model"] == "hss/scripted"
    assert by_flow.plan.config == by_recipe.plan.config
    assert by_flow.eval.config.epochs == by_recipe.eval.config.epochs == 3
    flow_samples = _samples(by_flow)
    assert len(flow_samples) == 8 * 3
    assert flow_samples == _samples(by_recipe)
    assert by_flow.results and by_recipe.results
    assert by_flow.results.scores[0].metrics == by_recipe.results.scores[0].metrics

    # Each finishes the other's folder: Flow finds the recipe's log complete, and the
    # recipe run on Flow's folder adds nothing.
    check = _run(
        [str(BIN / "flow"), "check", "demo.py", "--log-dir", "recipe", "--json"], env, tmp_path
    )
    summary = json.loads(check.stdout[check.stdout.index("{") :])["summary"]
    assert summary == {"total": 1, "complete": 1, "incomplete": 0}
    _run([hss, "recipe", *recipe, "--log-dir", "flow"], env, tmp_path)
    assert len(_logs(tmp_path / "flow")) == 1
