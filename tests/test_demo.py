"""The shipped demo set: its layout, its size, its taxonomy, and answers its scenes support."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from hss_inspect.core.taxonomy import DOMAINS
from hss_inspect.data.demo_maker import scenes
from hss_inspect.data.demo_maker import tasks as demo_tasks
from hss_inspect.data.release import LocalRelease, open_release
from hss_inspect.data.rows import report_unknown_taxonomy
from hss_inspect.media.probe import probe_duration

SHIPPED = Path(scenes.__file__).parents[1] / "demo_data"
ROOT = Path(__file__).resolve().parents[1]


def test_dataset_demo_opens_the_shipped_copy() -> None:
    release = open_release("demo", "main")
    assert isinstance(release, LocalRelease)
    assert release.root == SHIPPED.resolve()
    rows = release.read_rows()
    assert [r.task_id for r in rows] == [t.task_id for t in demo_tasks.TASKS]
    for row in rows:
        assert release.media_file(row.media_path, row.task_id).is_file()


def test_a_local_folder_named_demo_is_reached_with_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo_tasks.write_demo(tmp_path / "demo", demo_tasks.TASKS[:1])
    monkeypatch.chdir(tmp_path)
    release = open_release("./demo", "main")
    assert [r.task_id for r in release.read_rows()] == [demo_tasks.TASKS[0].task_id]


def test_shipped_rows_are_what_the_generator_writes() -> None:
    assert (SHIPPED / "data" / "test.jsonl").read_text(encoding="utf-8") == demo_tasks.rows_text()


def test_every_domain_twice_half_images_half_clips_under_2_mb() -> None:
    rows = [json.loads(line) for line in (SHIPPED / "data" / "test.jsonl").open()]
    assert len(rows) == 8
    assert Counter(r["domain"] for r in rows) == {d.name: 2 for d in DOMAINS}
    assert Counter(r["media_type"] for r in rows) == {"image": 4, "video": 4}
    assert len({r["subdomain"] for r in rows}) >= 6
    assert report_unknown_taxonomy(open_release("demo", "main").read_rows(), "demo") == []
    total = sum(f.stat().st_size for f in SHIPPED.rglob("*") if f.is_file())
    assert total < 2_000_000


def test_clips_last_a_few_seconds() -> None:
    for task in demo_tasks.TASKS:
        if task.media_type == "video":
            duration = probe_duration(SHIPPED / "media" / task.media_file)
            assert duration == pytest.approx(task.seconds, abs=0.2)
            assert 2 <= duration <= 10


def test_regenerated_media_match_the_shipped_media(tmp_path: Path) -> None:
    """Pixels, not bytes: font rendering may differ slightly between Pillow builds."""
    demo_tasks.write_demo(tmp_path)
    for task in demo_tasks.TASKS:
        fresh, shipped = tmp_path / "media" / task.media_file, SHIPPED / "media" / task.media_file
        if task.media_type == "image":
            difference = _pixels(fresh) - _pixels(shipped)
            assert np.abs(difference).mean() < 1.0, task.task_id
        else:
            assert probe_duration(fresh) == pytest.approx(probe_duration(shipped))


def _pixels(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), dtype=float)


# ---- Each reference answer follows from the scene as drawn --------------------------


def test_dominoes_fell_from_the_left_and_three_stand() -> None:
    fallen = [tilt > 0 for tilt in scenes.DOMINO_TILTS]
    assert fallen == sorted(fallen, reverse=True)  # every fallen one left of every standing one
    assert all(tilt > 0 for tilt in scenes.DOMINO_TILTS if tilt)  # tipped rightward
    assert fallen.count(False) == 3


def test_rolling_ball_runs_into_the_green_box() -> None:
    reached = None
    for step in range(1, 2000):
        point = scenes.rolling_ball_at(step / 100)
        reached = next((b for b in scenes.TARGET_BOXES if b.contains(point)), None)
        if reached or point[0] > scenes.SIZE[0]:
            break
    assert reached is not None and reached.colour == scenes.GREEN
    end = scenes.rolling_ball_at(scenes.ROLLING_SECONDS)
    assert not any(b.contains(end) for b in scenes.TARGET_BOXES)  # the clip stops before it


def test_cup_is_on_anas_right() -> None:
    # Ana faces down the picture, so her right hand points to the picture's left.
    assert scenes.CUP_CENTRE[0] < scenes.ANA_SEAT[0]
    assert scenes.ANA_SEAT[1] < scenes.TABLE.top


def test_the_ball_is_wider_than_the_opening_it_heads_for() -> None:
    top, bottom = scenes.GAP_OPENING
    assert 1.5 * (bottom - top) < 2 * scenes.GAP_BALL_RADIUS
    assert top < scenes.GAP_BALL_Y < bottom
    end_x = scenes.gap_ball_x(scenes.GAP_SECONDS)
    assert end_x + scenes.GAP_BALL_RADIUS < scenes.GAP_WALL_X[0]  # still rolling when it ends


def test_red_person_stands_between_the_counter_and_the_waiting_line() -> None:
    assert scenes.COUNTER.right < scenes.CUTTER_X < min(scenes.QUEUE_XS)
    spacing = {b - a for a, b in itertools.pairwise(scenes.QUEUE_XS)}
    assert len(spacing) == 1  # the others stand in one evenly spaced line


def test_ana_is_away_while_the_ball_moves_and_back_at_the_end() -> None:
    start, end = scenes.BELIEF_PHASES["ben_moves_ball"]
    left_at = scenes.BELIEF_PHASES["ana_leaves"][1]
    assert scenes.BLUE_BIN.contains(scenes.belief_ball_at(left_at))
    for step in range(int(start * 10), int(end * 10) + 1):
        assert scenes.belief_people_at(step / 10)["Ana"] is None
    assert scenes.GREEN_BIN.contains(scenes.belief_ball_at(scenes.BELIEF_SECONDS))
    assert scenes.belief_people_at(scenes.BELIEF_SECONDS)["Ana"] is not None


def test_the_pattern_asks_for_five_dots_on_red() -> None:
    colours = scenes.TILE_COLOURS
    assert [len(scenes._dot_layout(n)) for n in range(1, len(colours) + 1)] == [1, 2, 3, 4]
    assert colours[::2] == (scenes.RED,) * 2 and colours[1::2] == (scenes.BLUE,) * 2


def test_the_candle_shortens_steadily() -> None:
    heights = [scenes.candle_height(t / 10) for t in range(int(scenes.CANDLE_SECONDS * 10) + 1)]
    steps = {round(a - b, 6) for a, b in itertools.pairwise(heights)}
    assert len(steps) == 1 and steps.pop() > 0
    assert math.isclose(heights[-1], scenes.CANDLE_HEIGHTS[1])


def test_readme_taxonomy_table_is_taxonomy_py() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("**The taxonomy**", 1)[1].split("\n\n")[1]
    rows = [[cell.strip(" `") for cell in line.strip("|").split("|")] for line in table.split("\n")]
    expected = [
        [d.name, d.label, ", ".join(f"`{s.name}` (`{s.label}`)" for s in d.subdomains).strip("`")]
        for d in DOMAINS
    ]
    assert rows[2:] == expected


def test_the_docs_list_every_demo_task_with_its_media_and_subdomain() -> None:
    readme = (Path(__file__).parents[1] / "docs" / "dataset.md").read_text(encoding="utf-8")
    lines = {
        line.split("|")[1].strip(" `"): line for line in readme.splitlines() if "`demo-" in line
    }
    for task in demo_tasks.TASKS:
        row = task.row()
        assert f"| {row['media_type']}" in lines[task.task_id]
        assert f"| {row['subdomain']} |" in lines[task.task_id]


@pytest.mark.slow  # runs the Quick start's `inspect eval`
def test_the_quick_start_prints_the_figures_the_readme_quotes(tmp_path: Path) -> None:
    """Each `name value` the Quick start quotes is a line of what its command prints, as
    Inspect prints it (every metric to three decimals)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Quick start")
    command = re.search(r"pip install \. && (inspect eval hss_inspect/hss_demo [^\n]*)", readme)
    assert command is not None and command.start() > start
    after = readme.index("```\n\n", command.end()) + len("```\n\n")
    paragraph = readme[after : readme.index("\n\n", after)]
    quoted = re.findall(r"`([a-z_0-9]+) ([0-9.]+)`", paragraph)
    assert {name for name, _ in quoted} >= {"tasks", "pass_at_1", "grading_failure_rate"}
    words = shlex.split(command.group(1))
    words[0] = str(Path(sys.executable).with_name("inspect"))
    done = subprocess.run(
        [*words, "--log-dir", str(tmp_path), "--display", "plain"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for name, value in quoted:
        assert re.search(rf"^\s*{name}\s+{re.escape(value)}\s*$", done.stdout, re.M), name
