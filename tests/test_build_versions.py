"""Versions of a built split (issue 48): an admitted task reopened for an erratum goes back to
its author with the note and through the review rounds again; a retired task leaves later
exports with its reason; new tasks join a later version; each export is a version whose card
carries the changelog against the one before and each version's funnel, and `release diff`
between two exports classes every change as the changelog does."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from hss_inspect.construction import store, versions
from hss_inspect.construction.rules import rules
from tests.support.build_pool import admitted_build, build, task_row, write_tasks
from tests.support.human_study import HSS_INSPECT

pytestmark = pytest.mark.slow


def task_of(path: Path, name: str) -> str:
    """The build's id of the task imported from the row named `name` (its reference names it)."""
    (found,) = [
        h.view.task_id for h in store.histories(path) if h.view.draft.reference.endswith(f"{name}.")
    ]
    return found


def admit(path: Path, task_id: str) -> None:
    """Pass the task's latest revision through every round (the store's own calls)."""
    for _ in range(rules().rounds):
        (slot,) = [
            s
            for h in store.histories(path)
            if h.view.task_id == task_id
            for s in h.reviews
            if s.verdict is None
        ]
        decided = (task_id, slot.revision, slot.round)
        assert store.decide(path, slot.reviewer, decided, "pass", None, None, rules().rounds)


def mend(path: Path, task_id: str, reference: str) -> None:
    """The author's erratum: the task's reference rewritten, then submitted to round 1."""
    view = store.view_of(path, task_id)
    assert view is not None
    draft = replace(view.draft, reference=reference)
    store.save_draft(path, view.author, view.item.item_id, task_id, draft, opened_at=0.0)
    assert store.submit_task(path, view.author, task_id)


def test_a_split_lives_through_versions(tmp_path: Path) -> None:
    b, first = admitted_build(tmp_path)
    card = (first / "README.md").read_text()
    assert "Version 1: the first, 4 task(s)." in card
    assert "- Version 1: 4 -> 4 -> 4 -> 4 (4 admitted, 0 retired: 4 released)" in card
    # a clip as released carries no muxer's version: the same bytes under any PyAV
    for clip in (first / "media").rglob("*.mp4"):
        assert re.search(rb"Lavf\d", clip.read_bytes()) is None, clip

    kitchen, sound, ball, street = (
        task_of(b.path, n) for n in ("s-kitchen", "s-sound", "s-ball", "s-street")
    )
    note = "The reference names the wrong room: it is a kitchen, not a hall."
    build("reopen", str(b.path), kitchen, "--note", note)
    view = store.view_of(b.path, kitchen)
    assert view is not None and view.state == "returned"
    assert view.feedback == (f"Erratum: {note}",)  # what its author's page shows
    pending = build("export", str(b.path), "--out", str(tmp_path / "too-soon"), ok=False)
    assert pending.stderr.strip() == (
        f"hss-inspect build: task(s) {kitchen} reopened for an erratum are not through review "
        "yet; finish their rounds (`hss-inspect build status`) or retire them, then export"
    )
    mend(b.path, kitchen, "The reference answer of the kitchen, mended.")
    admit(b.path, kitchen)
    build("retire", str(b.path), sound, "--reason", "exposure", "--note", "posted online")
    added = write_tasks(tmp_path / "more.jsonl", [task_row("s-park", "park.png")])
    build("import", str(b.path), str(added), "--author", "bob")
    park = task_of(b.path, "s-park")
    admit(b.path, park)

    second = tmp_path / "release-2"
    said = build("export", str(b.path), "--out", str(second)).stdout
    assert "wrote version 2:" in said
    assert "Version 2, against 1: 1 task(s) added, 1 retired, 1 changed." in said
    card = (second / "README.md").read_text()
    assert f"- retired: {sound} (exposure: posted online)" in card
    assert f"- added: {park}" in card
    assert (
        f"- changed: {kitchen} (reference or rubric changed: the stored answers are graded again; "
        f"erratum: {note})"
    ) in card
    assert "- Version 1: 4 -> 4 -> 4 -> 4 (4 admitted, 0 retired: 4 released)" in card
    assert "- Version 2: 5 -> 5 -> 5 -> 5 (5 admitted, 1 retired: 4 released)" in card
    rows = [json.loads(line) for line in (second / "data" / "test.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == sorted([ball, kitchen, park, street])

    # release diff between the two exports classes each change as the changelog does
    done = subprocess.run(
        [HSS_INSPECT, "release", "diff", str(first), str(second), "--format", "json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    diff = json.loads(done.stdout)
    (recorded,) = [v for v in versions.versions(b.path) if v.version == "2"]
    logged = versions.changelog(
        "2", versions.versions(b.path)[0], recorded.prints, {}, {}
    ).as_dict()
    assert {c["task_id"]: c["change"] for c in diff["changed"]} == logged["changed"]
    assert logged["changed"] == {kitchen: "grade again"}
    assert (diff["added"], diff["removed"]) == (logged["added"], list(logged["retired"]))

    # a version exported again with nothing changed: every file the same bytes, no change
    third = tmp_path / "release-3"
    said = build("export", str(b.path), "--out", str(third)).stdout
    assert "Version 3, against 2: 0 task(s) added, 0 retired, 0 changed." in said
    # an erratum is told in the version that mends it, not again in later ones
    assert note not in (third / "README.md").read_text().split("## Versions")[1]


def test_versions_refuse_what_would_make_them_lie(tmp_path: Path) -> None:
    b, _ = admitted_build(tmp_path)
    again = build("export", str(b.path), "--out", str(tmp_path / "again"), "--version", "1",
                  ok=False)  # fmt: skip
    assert again.returncode == 1
    assert again.stderr.strip() == (
        "hss-inspect build: --version 1: exported already; give the next version another name"
    )
    ball = task_of(b.path, "s-ball")
    build("retire", str(b.path), ball, "--reason", "erratum")
    reopened = build("reopen", str(b.path), ball, "--note", "wrong", ok=False)
    assert reopened.stderr.strip() == (
        f"hss-inspect build: task {ball}: retired already (erratum); a retired task stays out "
        "of every later version"
    )
    missing = build("retire", str(b.path), "s-none", "--reason", "other", ok=False)
    assert "task s-none: no such task in the build" in missing.stderr
