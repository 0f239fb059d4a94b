"""A split made with `hss-inspect build` is a dataset like HSS (issue 40): exported, pushed to
a dataset repo (a git repo served by olah as an offline hub), run from it at a commit with
`inspect eval hss_inspect/hss -T dataset=<id> -T revision=<commit>`, its results are
published for that dataset id and revision, counted against its own size, under its own
name; a `--limit`ed run of it is refused with one line; its register entry passes the
register's own loader of the pinned inspect-evals and of the newest the package index
serves, and the task file `register` writes for it, committed to the lab's repository and
run from a clone in the register's form (`inspect eval <task_path>@<name>`), gives the
results the entry reports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from inspect_ai.log import EvalLog, read_eval_log

from hss_inspect.commands.cli import main
from tests.support.build_pool import SPLIT_ROWS, admitted_build
from tests.support.register_check import read_by_register
from tests.support.runs import INSPECT, outcome
from tests.support.servers import git_commit_all, olah_hub

pytestmark = pytest.mark.slow

REPO_ID = "lab/wildlife-split"
NAME = "wildlife_split"  # the split's own name: its repo's, as results and entries give it
PASSING = "s-street"  # the scripted model answers this task's reference: only it passes
SHA = "0123456789abcdef0123456789abcdef01234567"
TASK_FILE = "evals/wildlife_split.py"  # where the lab keeps the split's task in its repository


@pytest.fixture(scope="module")
def split_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], str]]:
    """(the environment that reaches the hub, the commit of the pushed split)."""
    made = tmp_path_factory.mktemp("split")
    _, release = admitted_build(made)
    mirrors = made / "mirrors"
    repo = mirrors / "datasets" / REPO_ID
    shutil.copytree(release, repo)
    commit = git_commit_all(repo, "the split, as exported")
    with olah_hub(mirrors, tmp_path_factory.mktemp("olah")) as endpoint:
        env = {"HF_ENDPOINT": endpoint, "HF_HOME": str(made / "hf")}
        yield env, commit


def run_split(env: dict[str, str], commit: str, logs: Path, *args: str) -> EvalLog:
    task = ["hss_inspect/hss", "-T", f"dataset={REPO_ID}", "-T", f"revision={commit}"]
    return run_task(env, task, logs, *args)


def run_task(
    env: dict[str, str], task: list[str], logs: Path, *args: str, cwd: Path | None = None
) -> EvalLog:
    """`inspect eval` of the task (and its -T values) with the scripted model and judge."""
    answer = f"The reference answer of {PASSING}."  # what tests.support.build_pool writes
    command = [
        INSPECT, "eval", *task, "--model", "hss/scripted", "-M", f"answer={answer}",
        "--model-role", "grader=hss/scripted", "--log-dir", str(logs), "--display", "none",
        *args,
    ]  # fmt: skip
    done = subprocess.run(
        command, env={**os.environ, **env}, cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = logs.glob("*.eval")
    return read_eval_log(str(log))


@pytest.fixture(scope="module")
def full_log(
    split_hub: tuple[dict[str, str], str], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    env, commit = split_hub
    logs = tmp_path_factory.mktemp("logs")
    log = run_split(env, commit, logs)
    assert log.status == "success"
    return Path(log.location)


def pass_at_1(log: EvalLog, media: str | None = None) -> float:
    """From the log's own samples: each task's share of attempts passing, the mean over
    tasks, in percent to one decimal (the scale of the paper's Table 1)."""
    tries: dict[str, list[bool]] = {}
    for sample in log.samples or []:
        if media and (sample.metadata or {}).get("media_type") != media:
            continue
        (verdict,) = [s.value for s in (sample.scores or {}).values() if isinstance(s.value, dict)]
        tries.setdefault(str(sample.id), []).append(verdict["pass"] == 1)
    shares = [sum(t) / len(t) for t in tries.values()]
    return round(100 * sum(shares) / len(shares), 1)


def test_a_complete_run_of_a_pushed_split_is_published_for_its_dataset_and_commit(
    split_hub: tuple[dict[str, str], str],
    full_log: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from huggingface_hub import eval_result_entries_to_yaml, parse_eval_result_entries

    _, commit = split_hub
    log = read_eval_log(str(full_log))
    images = sum(media == "image" for _, _, media in SPLIT_ROWS)
    assert log.eval.metadata is not None
    assert log.eval.metadata["hss_dataset_revision"] == commit
    assert log.eval.metadata["hss_dataset_size"] == {
        "tasks": len(SPLIT_ROWS),
        "media": {"image": images, "video": len(SPLIT_ROWS) - images},
    }
    out = tmp_path / "hub"
    assert main(["report", str(full_log), "--format", "hf-eval-results", "--out", str(out)]) == 0
    written = out / "scripted" / ".eval_results" / f"{NAME}.yaml"
    assert [p for p in out.rglob("*") if p.is_file()] == [written]
    text = written.read_text()
    print(f"--- {written.relative_to(out)}\n{text}", file=sys.__stdout__)
    entries = yaml.safe_load(text)
    assert eval_result_entries_to_yaml(parse_eval_result_entries(entries)) == entries
    assert {e["dataset"]["task_id"]: e["value"] for e in entries} == {
        NAME: pass_at_1(log),
        f"{NAME}_image": pass_at_1(log, "image"),
        f"{NAME}_video": pass_at_1(log, "video"),
    }
    assert pass_at_1(log) == 25.0  # one task of four passes every attempt
    for entry in entries:
        assert entry["dataset"]["id"] == REPO_ID and entry["dataset"]["revision"] == commit
        assert entry["date"] == log.eval.created[:10]


def test_a_limited_run_of_the_split_is_refused_with_one_line(
    split_hub: tuple[dict[str, str], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env, commit = split_hub
    log = run_split(env, commit, tmp_path / "logs", "--limit", "1", "--epochs", "1")
    out = tmp_path / "hub"
    code = main(["report", str(log.location), "--format", "hf-eval-results", "--out", str(out)])
    assert code == 1 and not out.exists()
    images = sum(media == "image" for _, _, media in SPLIT_ROWS)
    assert capsys.readouterr().err.strip().splitlines() == [
        f"hss-inspect report: {log.location}: cannot be published: it has 1 of the "
        f"{len(SPLIT_ROWS)} tasks of {REPO_ID}; a leaderboard takes all of them ({NAME}), "
        f"all {images} images ({NAME}_image) or all {len(SPLIT_ROWS) - images} clips "
        f"({NAME}_video): run without --limit or filters"
    ]


# ---- the register entry, read by the pinned and the newest inspect-evals -----------------


def test_the_splits_register_entry_is_its_own_and_passes_both_registers(
    full_log: Path,
    split_hub: tuple[dict[str, str], str],
    newest_inspect_evals: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, commit = split_hub
    monkeypatch.chdir(tmp_path)  # the repository's root, where the task file is written
    where = ["--repository-url", "https://github.com/lab/hss-inspect", "--repository-commit", SHA]
    where += ["--task-file", TASK_FILE]
    plain, gated = tmp_path / "plain.yaml", tmp_path / "gated.yaml"
    assert main(["register", str(full_log), *where, "--out", str(plain)]) == 0
    assert main(["register", str(full_log), *where, "--gated", "manual", "--out", str(gated)]) == 0
    capsys.readouterr()
    entry = yaml.safe_load(plain.read_text())
    (task,) = entry["tasks"]
    assert (task["name"], task["dataset_samples"]) == (NAME, len(SPLIT_ROWS))
    assert task["task_path"] == TASK_FILE and (tmp_path / TASK_FILE).is_file()
    assert "human_baseline" not in task  # HSS's 93.1 is HSS's; a split measures its own
    assert "522" not in plain.read_text() and "ScaleAI/HSS" not in plain.read_text()
    (result,) = entry["evaluation_report"]["results"]
    assert (result["task"], result["dataset"], result["dataset_revision"]) == (
        NAME,
        REPO_ID,
        commit,
    )
    (asset,) = entry["metadata"]["extras"]["external_assets"]
    assert (asset["source"], asset["state"]) == (REPO_ID, "pinned")

    pinned = read_by_register(plain, NAME, None)
    newest = read_by_register(plain, NAME, newest_inspect_evals)
    for code, read, err in (pinned, newest):
        assert code == 0, err
        assert (read["kind"], read["id"], read["task"], read["samples"]) == (
            "ExternalEvalMetadata",
            NAME,
            NAME,
            len(SPLIT_ROWS),
        )
        assert read["results"] == [[NAME, "hss/scripted"]]
    assert newest[1]["loaded_from"].startswith(str(newest_inspect_evals))

    # `gated` on the asset: the newest register's asset model takes it, the pinned one not yet
    code, read, err = read_by_register(gated, NAME, newest_inspect_evals)
    assert code == 0, err
    assert read["asset"]["gated"] == "manual"
    code, _, err = read_by_register(gated, NAME, None)
    assert code == 1 and "gated" in err


# ---- the register's run form: the task file committed, run from a clone ----------------------


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout


def test_the_registers_run_form_from_a_clone_runs_the_split_at_the_commit_reported(
    full_log: Path,
    split_hub: tuple[dict[str, str], str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The whole round of docs/publishing.md: `register --task-file` in the lab's
    repository writes the task, the lab commits it and writes the entry again at that
    commit; the register's tooling finds the task at `task_path` in the file at the pinned
    commit, and `inspect eval <task_path>@<name>` in a clone of that commit gives the
    results of the logs the entry reports."""
    from register_tooling.task_resolver import resolve_task

    env, commit = split_hub
    repo = tmp_path / "lab-evals"
    repo.mkdir()
    (repo / "README.md").write_text("The lab's evals.\n")
    first = git_commit_all(repo, "the lab's repository")
    monkeypatch.chdir(repo)
    entry_file = Path("register") / NAME / "eval.yaml"

    def register(pinned: str) -> str:
        where = ["--repository-url", "https://github.com/lab/lab-evals"]
        where += ["--repository-commit", pinned, "--task-file", TASK_FILE]
        assert main(["register", str(full_log), *where, "--out", str(entry_file)]) == 0
        return capsys.readouterr().err

    said = register(first)
    assert f"wrote {TASK_FILE}, the task {NAME} (inspect eval {TASK_FILE}@{NAME})" in said
    assert "commit it to https://github.com/lab/lab-evals and give that commit" in said
    pinned = git_commit_all(repo, "the split's task, for the register")
    assert f"commit {pinned[:12]} holds it as written" in register(pinned)
    assert git(repo, "status", "--porcelain", "--", TASK_FILE) == ""  # the same file again

    entry = yaml.safe_load(entry_file.read_text())
    (task,) = entry["tasks"]
    assert (task["name"], task["task_path"]) == (NAME, TASK_FILE)
    assert entry["source"]["repository_commit"] == pinned
    committed = git(repo, "show", f"{pinned}:{task['task_path']}")
    assert resolve_task(committed, line_anchor=None, file_label=TASK_FILE).name == task["name"]
    code, read, err = read_by_register(repo / entry_file, NAME, None)
    assert code == 0 and read["task"] == NAME, err

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", pinned)
    again = run_task(env, [f"{task['task_path']}@{task['name']}"], tmp_path / "again", cwd=clone)
    before = read_eval_log(str(full_log))
    (result,) = entry["evaluation_report"]["results"]
    assert again.eval.metadata is not None
    assert again.eval.metadata["hss_dataset_revision"] == result["dataset_revision"] == commit
    assert again.eval.metadata["hss_dataset_pinned"] is True
    assert outcome(again) == outcome(before)
    metrics = {m["key"]: m["value"] for m in result["metrics"]}
    assert metrics["pass_at_1"] == pass_at_1(again)
    # an entry of the clone's run gives back the register's form as the result's command
    register_again = ["register", str(again.location), "--task-file", TASK_FILE]
    register_again += ["--repository-url", "https://github.com/lab/lab-evals"]
    register_again += ["--repository-commit", pinned, "--out", "again.yaml"]
    assert main(register_again) == 0
    (rerun,) = yaml.safe_load(Path("again.yaml").read_text())["evaluation_report"]["results"]
    assert rerun["command"].startswith(f"inspect eval {TASK_FILE}@{NAME} --model hss/scripted ")
    assert rerun["dataset_revision"] == commit
