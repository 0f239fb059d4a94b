"""Publishing results: the register entry (`hss-inspect register`) validated by the
Inspect Evals register's own models and loader (inspect-evals), the package's eval.yaml
by the register's internal schema, the hub's eval-results files (`report --format
hf-eval-results`) read back by the hub client's own parser, and the release datum that
pins the default revision. Expected figures are computed here from the attempts written."""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai.log import EvalLog, read_eval_log

from hss_inspect.commands.cli import main
from hss_inspect.core.config import commit_in, eval_metadata, release_commit
from hss_inspect.data.fingerprints import TaskPrint, prints_record
from tests.support.logs import Item, Try, write_log
from tests.support.runs import outcome

ROOT = Path(__file__).resolve().parents[1]
T, F = Try(True), Try(False)
REPO = "https://github.com/example-org/hss-inspect"
SHA = "0123456789abcdef0123456789abcdef01234567"
DATASET_SHA = "fedcba9876543210fedcba9876543210fedcba98"
VERSION = str(eval_metadata()["version"])


def paper() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "task_configs" / "paper_models.yaml").read_text()))


def hub_record(revision: str = DATASET_SHA, requested: str | None = None) -> dict[str, Any]:
    """The dataset records of a run on the hub's ScaleAI/HSS (pinned unless `requested`),
    with the release's fingerprints: every commit here holds the same tasks, so runs at
    two commits measured the same thing."""
    return {
        "hss_dataset_requested": {"dataset": "ScaleAI/HSS", "revision": requested or revision},
        "hss_dataset_revision": revision,
        "hss_dataset_pinned": requested is None,
        "hss_task_version": VERSION,
        "hss_release": prints_record(
            {item.task_id: TaskPrint("m", "p", "k", item.task_id) for item in release_items()}
        ),
    }


# The release's shape: 288 images and 234 clips. Image i passes all three attempts when
# i % 3 == 0, one when i % 3 == 1, none otherwise; clip j two of three when j is even.
IMAGE_TRIES = [(T, T, T), (T, F, F), (F, F, F)]
VIDEO_TRIES = [(T, T, F), (F, F, F)]


def release_items(media: str = "all") -> list[Item]:
    images = [Item(f"img-{i}", "retrodiction", "image", IMAGE_TRIES[i % 3]) for i in range(288)]
    videos = [Item(f"vid-{j}", "theory_of_mind", "video", VIDEO_TRIES[j % 2]) for j in range(234)]
    return {"all": images + videos, "image": images, "video": videos}[media]


def percent(items: list[Item]) -> float:
    """pass@1 in percent: the mean over tasks of the share of attempts passing."""
    shares = [sum(bool(t.passed) for t in item.tries) / len(item.tries) for item in items]
    return round(100 * sum(shares) / len(shares), 1)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished standard run of the whole release on the hub's dataset, pinned."""
    folder = tmp_path_factory.mktemp("full")
    write_log(
        folder / "astra.eval",
        release_items(),
        model="openai/gpt-6-astra",
        effort="max",
        metadata=hub_record(),
    )
    return folder / "astra.eval"


def a_second_run(
    path: Path,
    items: list[Item],
    model: str,
    effort: str | None,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Another model's run, started on 2 December."""
    created = "2026-12-02T08:00:00+00:00"
    record = metadata or hub_record()
    write_log(path, items, model=model, effort=effort, metadata=record, created=created)


def register(capsys: pytest.CaptureFixture[str], *logs: str | Path) -> tuple[int, str, str]:
    code = main(["register", *map(str, logs), "--repository-url", REPO, "--repository-commit", SHA])
    out, err = capsys.readouterr()
    return code, out, err


def load_with_the_register(entry_text: str, tmp_path: Path) -> Any:
    """The entry read as the register reads `register/hss/eval.yaml`: inspect_evals'
    own loader, which picks ExternalEvalMetadata for an entry with a `source`."""
    from inspect_evals.metadata import load_listing

    package = tmp_path / "checkout" / "src" / "inspect_evals"  # holds no internal evals
    package.mkdir(parents=True)
    entry = tmp_path / "checkout" / "register" / "hss" / "eval.yaml"
    entry.parent.mkdir(parents=True)
    entry.write_text(entry_text, encoding="utf-8")
    (found,) = load_listing(package).evals
    return found


# ---- the register entry ------------------------------------------------------------------


def test_the_entry_passes_the_registers_own_schema_without_a_warning(
    full_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    from inspect_evals.metadata import ExternalEvalMetadata

    code, out, _ = register(capsys, full_run)
    assert code == 0
    with caplog.at_level(logging.WARNING, logger="inspect_evals"):
        entry = load_with_the_register(out, tmp_path)
    assert isinstance(entry, ExternalEvalMetadata)
    assert not caplog.records, [r.getMessage() for r in caplog.records]  # one task per entry
    assert entry.id == "hss" and entry.common_title == "HSS"
    assert str(entry.source.repository_url) == REPO and entry.source.repository_commit == SHA
    assert entry.source.maintainers == ["example-org"]  # the register's default: the owner
    (task,) = entry.tasks
    assert (task.name, task.task_path, task.dataset_samples) == (
        "hss",
        "src/hss_inspect/task.py",
        paper()["release"]["tasks"],
    )
    assert task.human_baseline is not None
    assert task.human_baseline.score == paper()["human"]["pass_at_1"] == 93.1
    assert task.human_baseline.metric == "pass_at_1"
    for other in ("hss_image", "hss_video", "hss_blind", "hss_agentic", "hss_judge_audit"):
        assert other in entry.description
    assert "\n" not in entry.description


def test_the_entry_passes_the_newest_registers_loader_too(
    full_run: Path,
    newest_inspect_evals: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The register moves on: the newest inspect-evals the package index serves reads the
    entry as the pinned one does (and a gated asset, which only the newest takes)."""
    from tests.support.register_check import read_by_register

    entry, gated = tmp_path / "eval.yaml", tmp_path / "gated.yaml"
    where = ["--repository-url", REPO, "--repository-commit", SHA]
    assert main(["register", str(full_run), *where, "--out", str(entry)]) == 0
    assert main(["register", str(full_run), *where, "--gated", "auto", "--out", str(gated)]) == 0
    for path in (None, newest_inspect_evals):
        code, read, err = read_by_register(entry, "hss", path)
        assert code == 0, err
        assert (read["id"], read["task"], read["samples"], read["human_baseline"]) == (
            "hss",
            "hss",
            paper()["release"]["tasks"],
            True,
        )
    code, read, err = read_by_register(gated, "hss", newest_inspect_evals)
    assert code == 0 and read["asset"]["gated"] == "auto", err
    assert read["asset"]["source"] == "ScaleAI/HSS"


def test_the_evaluation_report_holds_each_models_result_from_its_log(
    full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images = release_items("image")
    flash = hub_record(revision=SHA, requested="main")
    a_second_run(tmp_path / "flash.eval", images, "google/gemini-3.8-flash", "high", flash)
    code, out, _ = register(capsys, full_run, tmp_path / "flash.eval")
    assert code == 0
    report = load_with_the_register(out, tmp_path).evaluation_report
    assert report.commit == SHA and report.version == VERSION
    rows = {r.model: r for r in report.results}
    assert set(rows) == {"openai/gpt-6-astra", "google/gemini-3.8-flash"}

    astra = rows["openai/gpt-6-astra"]
    metrics = {m.key: m.value for m in astra.metrics}
    assert metrics["pass_at_1"] == percent(release_items())
    assert 0 < metrics["pass_at_1_ci95"] < 10
    extra = astra.model_extra or {}
    assert extra["dataset"] == "ScaleAI/HSS" and extra["dataset_revision"] == DATASET_SHA
    assert extra["command"] == (
        "inspect eval hss_inspect/hss --model openai/gpt-6-astra --epochs 3 "
        "--reasoning-effort max --model-role 'grader={model: anthropic/claude-opus-5}'"
    )
    assert (extra["tasks"], extra["attempts"], astra.date) == (522, 1566, "2026-11-29")
    assert astra.task == "hss"

    flash = rows["google/gemini-3.8-flash"]
    assert {m.key: m.value for m in flash.metrics}["pass_at_1"] == percent(images)
    assert (flash.model_extra or {})["dataset_revision"] == SHA
    notes = report.notes or []
    assert (
        f"google/gemini-3.8-flash: run with -T revision=main (not pinned), which resolved "
        f"to commit {SHA}" in notes
    )
    assert "google/gemini-3.8-flash: 288 of the dataset's 522 tasks" in notes
    assert not [n for n in notes if n.startswith("openai/gpt-6-astra")]
    assert any("ScaleAI/HSS floats" in n for n in notes) == (release_commit() is None)
    assert report.command is None  # the two were run differently; each result has its own


def test_a_log_of_another_comparability_version_is_refused_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = f"{int(VERSION.split('-')[0]) - 1}-A"
    path = write_log(
        tmp_path / "old.eval",
        [Item("t1", "retrodiction", "image", (T,))],
        metadata={**hub_record(), "hss_task_version": older},
    )
    code, out, err = register(capsys, path)
    assert code == 1 and out == ""
    assert err.strip().splitlines() == [
        f"hss-inspect register: {path}: task version {older}, not comparable with this "
        f"package's {VERSION}: run it again with this version, or leave the log out"
    ]


def test_other_conditions_are_left_out_and_one_result_is_kept_per_model(
    full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blind = write_log(
        tmp_path / "blind.eval",
        [Item("t1", "retrodiction", "image", (F, F, F))],
        model="openai/gpt-6-astra",
        condition="blind",
        metadata={**hub_record(), "hss_task_version": "1-A"},  # left out: its version is moot
    )
    code, out, err = register(capsys, full_run, blind)
    assert code == 0
    assert f"hss-inspect register: {blind}: condition blind: the register's results are of " in err
    assert [r["model"] for r in yaml.safe_load(out)["evaluation_report"]["results"]] == [
        "openai/gpt-6-astra"
    ]
    again = write_log(
        tmp_path / "again.eval",
        [Item("t1", "retrodiction", "image", (T, T, T))],
        model="openai/gpt-6-astra",
        metadata=hub_record(),
    )
    code, out, err = register(capsys, full_run, again)
    assert code == 1
    assert "openai/gpt-6-astra: 2 logs give a result of hss" in err
    assert len(err.strip().splitlines()) == 1


def test_a_demo_run_is_reported_with_a_note_maintainers_named_a_short_commit_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = write_log(
        tmp_path / "demo.eval",
        [Item("demo-1", "retrodiction", "image", (F, F, F))],
        model="hss/scripted",
        metadata={
            "hss_dataset_requested": {"dataset": "demo", "revision": "main"},
            "hss_dataset_revision": None,
            "hss_dataset_pinned": False,
            "hss_task_version": VERSION,
        },
    )
    code, out, _ = register(capsys, demo)
    notes = yaml.safe_load(out)["evaluation_report"]["notes"]
    assert code == 0
    assert (
        "hss/scripted: run on the demo set shipped in the package, a check of the "
        "installation, not a result on HSS" in notes
    )
    maintainers = ["--maintainer", "alice", "--maintainer", "bob"]
    named = main(
        ["register", demo, "--repository-url", REPO, "--repository-commit", SHA, *maintainers]
    )
    assert named == 0
    assert yaml.safe_load(capsys.readouterr().out)["source"]["maintainers"] == ["alice", "bob"]
    code = main(["register", demo, "--repository-url", REPO, "--repository-commit", "65d8b58"])
    assert code == 1
    assert capsys.readouterr().err.startswith(
        "hss-inspect register: --repository-commit '65d8b58' is not a full commit id"
    )


def test_the_task_path_names_the_task_as_the_registers_tooling_finds_it() -> None:
    """The register's submission tooling reads the @task at the path's line."""
    from register_tooling.task_resolver import resolve_task

    source = (ROOT / "src" / "hss_inspect" / "task.py").read_text(encoding="utf-8")
    (line,) = [
        n for n, text in enumerate(source.splitlines(), start=1) if text.startswith("def hss(")
    ]
    found = resolve_task(source, line_anchor=line - 1, file_label="task.py")
    assert found.name == "hss"


# ---- a split's entry and the task file it points at ----------------------------------------

SPLIT = "lab/hss-mini"


def split_record(revision: str | None = DATASET_SHA) -> dict[str, Any]:
    """The dataset records of a run of the split lab/hss-mini at `revision` (None: a local
    copy of it)."""
    return {
        "hss_dataset_requested": {"dataset": SPLIT if revision else "/data/hss-mini",
                                  "revision": revision or "main"},
        "hss_dataset_revision": revision,
        "hss_dataset_pinned": revision is not None,
        "hss_dataset_size": {"tasks": 2, "media": {"image": 2, "video": 0}},
        "hss_task_version": VERSION,
    }  # fmt: skip


def split_run(path: Path, revision: str | None = DATASET_SHA, model: str = "openai/x") -> Path:
    items = [Item(f"m{i}", "retrodiction", "image", IMAGE_TRIES[i]) for i in range(2)]
    return Path(write_log(path, items, model=model, metadata=split_record(revision)))


def register_split(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    where = ["--repository-url", REPO, "--repository-commit", SHA]
    code = main(["register", *map(str, args), *where])
    return code, capsys.readouterr().err


def test_a_splits_entry_names_the_task_file_it_writes_which_runs_the_split_at_its_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The register's check passes (its schema, and its tooling finds the task at
    task_path), and the file's task is hss on the split at the commit the logs read."""
    import importlib.util

    from inspect_ai.util import registry_info
    from inspect_evals.metadata import ExternalEvalMetadata
    from register_tooling.task_resolver import resolve_task

    log = split_run(tmp_path / "run.eval")
    monkeypatch.chdir(tmp_path)
    code = main(["register", str(log), "--repository-url", REPO, "--repository-commit", SHA,
                 "--task-file", "evals/hss_mini.py", "--out", "eval.yaml"])  # fmt: skip
    said = capsys.readouterr().err
    assert code == 0, said
    assert (
        "wrote evals/hss_mini.py, the task hss_mini (inspect eval evals/hss_mini.py@hss_mini)"
        in said
    )
    assert f"commit it to {REPO} and give that commit as --repository-commit" in said
    entry = load_with_the_register((tmp_path / "eval.yaml").read_text(), tmp_path)
    assert isinstance(entry, ExternalEvalMetadata)
    (task,) = entry.tasks
    assert (task.name, task.task_path, task.dataset_samples) == ("hss_mini", "evals/hss_mini.py", 2)
    source = (tmp_path / "evals" / "hss_mini.py").read_text()
    assert resolve_task(source, line_anchor=None, file_label="hss_mini.py").name == "hss_mini"
    assert "inspect eval evals/hss_mini.py@hss_mini" in entry.description

    spec = importlib.util.spec_from_file_location("hss_mini_task", tmp_path / "evals/hss_mini.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (module.DATASET, module.REVISION) == (SPLIT, DATASET_SHA)
    assert registry_info(module.hss_mini).name == "hss_mini"  # the name Inspect runs it by
    (asset,) = (entry.runtime_metadata.extras if entry.runtime_metadata else {})["external_assets"]
    assert (asset["source"], asset["state"]) == (SPLIT, "pinned")
    assert DATASET_SHA in asset["comment"]


def test_a_splits_entry_without_its_task_file_or_of_two_commits_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    log = split_run(tmp_path / "run.eval")
    code, said = register_split(capsys, log)
    assert (code, said.strip().splitlines()) == (1, [
        f"hss-inspect register: the logs ran on {SPLIT}, whose entry needs a task file of its "
        "own: give --task-file PATH (from the repository's root, e.g. evals/hss_mini.py), "
        "which this command writes for you to commit"
    ])  # fmt: skip
    other = split_run(tmp_path / "other.eval", SHA, model="openai/y")
    code, said = register_split(capsys, log, other, "--task-file", "t.py")
    assert code == 1 and len(said.strip().splitlines()) == 1
    assert f"the runs read 2 commits of {SPLIT}: {DATASET_SHA} ({log}), {SHA} ({other})" in said
    local = split_run(tmp_path / "local.eval", None)
    code, said = register_split(capsys, local, "--task-file", "t.py")
    assert code == 1 and f"{local}: run on a local copy (/data/hss-mini)" in said
    for wrong in ("/abs/t.py", "../t.py", "t.txt"):
        code, said = register_split(capsys, log, "--task-file", wrong)
        assert code == 1 and f"--task-file {wrong!r}: give the .py file's path" in said
    assert not list(tmp_path.glob("*.py"))

    mine = tmp_path / "mine.py"
    mine.write_text("# the lab's own code\n")
    code, said = register_split(capsys, log, "--task-file", "mine.py")
    assert code == 1 and "mine.py: the file exists and was not written by" in said
    assert mine.read_text() == "# the lab's own code\n"
    assert register_split(capsys, log, "--task-file", "t.py")[0] == 0
    assert register_split(capsys, log, "--task-file", "t.py")[0] == 0  # its own: again


def test_hss_takes_no_task_file(
    full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = register_split(capsys, full_run, "--task-file", str(tmp_path / "t.py"))
    assert code == 1 and "whose entry runs the package's own task hss" in said
    assert "leave --task-file out" in said and not (tmp_path / "t.py").exists()


# ---- the package's own eval.yaml and the release datum -----------------------------------


def test_the_packages_eval_yaml_passes_the_registers_internal_schema() -> None:
    from inspect_evals.metadata import InternalEvalMetadata

    data = yaml.safe_load((ROOT / "src" / "hss_inspect" / "eval.yaml").read_text())
    checked = InternalEvalMetadata(**data, id="hss_inspect")
    assert str(checked.version) == VERSION
    (asset,) = checked.external_assets
    assert (asset.type.value, asset.source) == ("huggingface", "ScaleAI/HSS")
    # the datum and the declared state move together (docs/publishing.md)
    assert asset.state.value == ("floating" if release_commit() is None else "pinned")


def test_the_release_datum_is_a_full_commit_or_unset(tmp_path: Path) -> None:
    assert commit_in({"commit": None}, "r.yaml") is None
    assert commit_in({"commit": DATASET_SHA}, "r.yaml") == DATASET_SHA
    for wrong in ("main", DATASET_SHA[:12], 1234567, DATASET_SHA.upper()):
        with pytest.raises(ValueError, match=r"r\.yaml: commit .* is not a full commit id"):
            commit_in({"commit": wrong}, "r.yaml")
    shipped = release_commit()
    assert shipped is None or re.fullmatch(r"[0-9a-f]{40}", shipped)


# ---- the hub's eval results --------------------------------------------------------------


def hub_files(out: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        str(p.relative_to(out)): yaml.safe_load(p.read_text()) for p in sorted(out.rglob("*.yaml"))
    }


def test_each_model_gets_its_leaderboards_in_the_hubs_format(
    full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from huggingface_hub import eval_result_entries_to_yaml, parse_eval_result_entries

    videos = release_items("video")
    a_second_run(tmp_path / "qwen.eval", videos, "vllm/Qwen/Qwen2.5-VL-7B-Instruct", None)
    out = tmp_path / "hub"
    logs = [str(full_run), str(tmp_path / "qwen.eval")]
    code = main(["report", *logs, "--format", "hf-eval-results", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    files = hub_files(out)
    assert set(files) == {
        "gpt-6-astra/.eval_results/hss.yaml",
        "Qwen/Qwen2.5-VL-7B-Instruct/.eval_results/hss.yaml",
    }
    astra = files["gpt-6-astra/.eval_results/hss.yaml"]
    # the hub client reads each file back to the same entries
    assert eval_result_entries_to_yaml(parse_eval_result_entries(astra)) == astra
    values = {e["dataset"]["task_id"]: e["value"] for e in astra}
    assert values == {
        "hss": percent(release_items()),
        "hss_image": percent(release_items("image")),
        "hss_video": percent(videos),
    }
    for entry in astra:
        assert entry["dataset"]["id"] == "ScaleAI/HSS"
        assert entry["dataset"]["revision"] == DATASET_SHA
        assert entry["date"] == "2026-11-29"
        assert entry["notes"] == (
            "condition standard; reasoning effort max; judge anthropic/claude-opus-5; "
            f"pass@1 over 3 attempts per task; task version {VERSION} of hss-inspect"
        )
    (qwen,) = files["Qwen/Qwen2.5-VL-7B-Instruct/.eval_results/hss.yaml"]
    assert qwen["dataset"]["task_id"] == "hss_video" and qwen["value"] == percent(videos)
    assert qwen["notes"].startswith("condition standard; judge ")


def test_a_run_that_cannot_be_published_gets_one_line_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = [Item("t1", "retrodiction", "image", (T, T, T))]
    local = {"hss_dataset_requested": {"dataset": "/data/hss", "revision": "main"}}
    logs = {
        "demo": write_log(
            tmp_path / "demo.eval",
            one,
            metadata={"hss_dataset_requested": {"dataset": "demo", "revision": "main"}},
        ),
        "local": write_log(tmp_path / "local.eval", release_items(), metadata=local),
        "blind": write_log(
            tmp_path / "blind.eval", release_items(), condition="blind", metadata=hub_record()
        ),
        "short": write_log(tmp_path / "short.eval", one, metadata=hub_record()),
    }
    out = tmp_path / "hub"
    assert main(["report", *logs.values(), "--format", "hf-eval-results", "--out", str(out)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == len(logs)
    said = {
        name: next(line for line in lines if f" {path}: " in line) for name, path in logs.items()
    }
    assert not out.exists()
    prefix = {
        name: f"hss-inspect report: {path}: cannot be published: " for name, path in logs.items()
    }
    assert said["demo"] == prefix["demo"] + (
        "it ran on the demo set shipped in the package, a setup check, not HSS"
    )
    assert said["local"].startswith(prefix["local"] + "it ran on a local copy (/data/hss)")
    assert said["blind"].startswith(prefix["blind"] + "it is the blind control")
    assert said["short"].startswith(prefix["short"] + "it has 1 of the 522 tasks of ScaleAI/HSS")


def test_a_split_of_images_only_is_published_under_its_own_name_and_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any dataset, not HSS: its own name, its own size as the log recorded it, and no
    leaderboard of clips where it has none."""
    photos = [Item(f"p{i}", "retrodiction", "image", IMAGE_TRIES[i % 3]) for i in range(5)]
    record = {
        "hss_dataset_requested": {"dataset": "lab/Street-Photos", "revision": DATASET_SHA},
        "hss_dataset_revision": DATASET_SHA,
        "hss_dataset_pinned": True,
        "hss_dataset_size": {"tasks": 5, "media": {"image": 5, "video": 0}},
    }
    full = write_log(tmp_path / "full.eval", photos, metadata=record)
    short = write_log(tmp_path / "short.eval", photos[:4], metadata=record)
    out = tmp_path / "hub"
    assert main(["report", full, short, "--format", "hf-eval-results", "--out", str(out)]) == 0
    files = hub_files(out)
    (entries,) = files.values()
    assert list(files) == ["gpt-test/.eval_results/street_photos.yaml"]
    assert {e["dataset"]["task_id"]: e["value"] for e in entries} == {
        "street_photos": percent(photos),
        "street_photos_image": percent(photos),
    }
    assert {e["dataset"]["id"] for e in entries} == {"lab/Street-Photos"}
    assert capsys.readouterr().err.splitlines()[0] == (
        f"hss-inspect report: {short}: cannot be published: it has 4 of the 5 tasks of "
        "lab/Street-Photos; a leaderboard takes all of them (street_photos) or all 5 images "
        "(street_photos_image): run without --limit or filters"
    )


def test_two_runs_with_the_same_settings_on_one_leaderboard_are_refused(
    full_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    again = write_log(
        tmp_path / "again.eval",
        release_items(),
        model="openai/gpt-6-astra",
        effort="max",
        metadata=hub_record(),
    )
    code = main(
        [
            "report",
            str(full_run),
            again,
            "--format",
            "hf-eval-results",
            "--out",
            str(tmp_path / "hub"),
        ]
    )
    assert code == 1
    assert "two results of openai/gpt-6-astra on hss with the same settings" in (
        capsys.readouterr().err
    )


def test_the_dataset_repos_eval_yaml_in_the_docs_declares_the_leaderboards_written() -> None:
    from hss_inspect.report.hub_results import leaderboards

    page = (ROOT / "docs" / "publishing.md").read_text(encoding="utf-8")
    (block,) = [
        b for b in re.findall(r"```yaml\n(.*?)```", page, re.S) if "evaluation_framework" in b
    ]
    declared = yaml.safe_load(block)
    assert [t["id"] for t in declared["tasks"]] == [task_id for task_id, _ in leaderboards("hss")]
    assert declared["evaluation_framework"] != "inspect-ai"


# ---- the register's way of running it ------------------------------------------------------


def run_demo(task: str, cwd: Path, log_dir: Path, env: dict[str, str]) -> EvalLog:
    inspect = str(Path(sys.executable).with_name("inspect"))
    command = [inspect, "eval", task, "--model", "hss/scripted"]
    command += ["--model-role", "grader=hss/scripted", "--log-dir", str(log_dir)]
    command += ["--display", "plain", "--log-format", "eval"]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    (path,) = log_dir.glob("*.eval")
    return read_eval_log(str(path))


@pytest.mark.slow
def test_the_registers_run_form_from_a_clean_clone_gives_the_packaged_tasks_result(
    tmp_path: Path,
) -> None:
    """`inspect eval src/hss_inspect/task.py@hss_demo` in a fresh clone, the form the
    register's users run (its own package on the path, as an install of the clone puts it),
    against the installed package's `hss_inspect/hss_demo`."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to clone")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    env = {**os.environ, "COLUMNS": "400"}
    packaged = run_demo("hss_inspect/hss_demo", tmp_path, tmp_path / "packaged", env)
    cloned_env = {**env, "PYTHONPATH": str(clone / "src")}
    cloned = run_demo("src/hss_inspect/task.py@hss_demo", clone, tmp_path / "cloned", cloned_env)

    # the clone's own package ran: its demo set was read from inside the clone
    assert str((cloned.eval.metadata or {})["hss_dataset"]).startswith(str(clone))
    assert cloned.eval.task_file == "src/hss_inspect/task.py"
    assert cloned.eval.task_version == packaged.eval.task_version
    assert outcome(cloned) == outcome(packaged)
    assert len(outcome(packaged)["attempts"]) == 8 * 3
