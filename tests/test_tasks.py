"""Every task is a plain @task function: Inspect's static listing finds each one, in the
source tree and in a built wheel, and each preset is `hss` with its own defaults."""

from __future__ import annotations

import inspect as pyinspect
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from inspect_ai import Task

from hss_inspect import task as tasks
from hss_inspect.versioning import register_entry
from tests.support.fixture_repo import TASKS
from tests.support.runs import INSPECT

ROOT = Path(__file__).resolve().parents[1]


def registered_task_names() -> set[str]:
    return {entry["name"] for entry in register_entry()["tasks"]}


def listed_tasks(folder: Path) -> set[str]:
    # `inspect list tasks` takes paths relative to where it runs.
    done = subprocess.run(
        [INSPECT, "list", "tasks", folder.name],
        cwd=folder.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split("@")[-1].strip() for line in done.stdout.splitlines() if "@" in line}


def test_eval_yaml_lists_every_task_function() -> None:
    task_functions = {
        name
        for name, value in vars(tasks).items()
        if callable(value)
        and pyinspect.signature(value).return_annotation in (Task, "Task")
        and name.startswith("hss")
    }
    assert registered_task_names() == task_functions


def test_presets_are_hss_with_their_own_overridable_defaults(hss_repo: Path) -> None:
    image = tasks.hss_image(dataset=str(hss_repo))
    expected_images = sum(t.media_type == "image" for t in TASKS)
    assert len(image.dataset) == expected_images
    overridden = tasks.hss_image(dataset=str(hss_repo), media="video")
    assert len(overridden.dataset) == len(TASKS) - expected_images
    assert tasks.hss_blind(dataset=str(hss_repo)).metadata["hss_condition"] == "blind"
    assert tasks.hss_oracle(dataset=str(hss_repo)).metadata["hss_condition"] == "oracle"


def test_every_task_carries_the_version_written_in_eval_yaml(hss_repo: Path) -> None:
    written = yaml.safe_load((ROOT / "src/hss_inspect/eval.yaml").read_text(encoding="utf-8"))
    label = str(written["version"])  # the register's N-X
    for made in (
        tasks.hss_video(dataset=str(hss_repo)),
        tasks.hss_judge_audit(dataset=str(hss_repo), kinds="reference"),
    ):
        assert made.version == int(label.split("-")[0])
        assert made.metadata["hss_task_version"] == label


@pytest.mark.slow
def test_inspect_list_tasks_finds_every_task_in_the_source_tree() -> None:
    assert listed_tasks(ROOT / "src" / "hss_inspect") >= registered_task_names()


@pytest.mark.slow
def test_inspect_list_tasks_finds_every_task_in_a_built_wheel(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("hss_inspect-*.whl")
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    assert (unpacked / "hss_inspect" / "eval.yaml").is_file()
    assert listed_tasks(unpacked / "hss_inspect") >= registered_task_names()
