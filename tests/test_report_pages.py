"""The task pages and failure examples without a browser: the rule that chooses the
examples, on records whose counts are set here; the media sets told apart; and
`hss-inspect report --pages` on logs written with Inspect's log API (no media recorded),
the pages read back against the logs. Chromium reads real runs' pages in
tests/test_report_pages_e2e.py."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path

import pytest

from hss_inspect.commands.cli import main
from hss_inspect.core.errors import InputError
from hss_inspect.report.examples import choose_examples, named_examples
from hss_inspect.report.page_render import answer_html, view_link
from hss_inspect.report.records import AttemptRecord
from hss_inspect.report.render import Board, html_report
from hss_inspect.report.served_media import differing_settings, served_key, summary_of
from hss_inspect.report.tables import Difficulty, runs_of
from hss_inspect.report.task_view import Attempt
from tests.support.logs import Item, Try, write_log

MIND, FIT = "Theory of Mind", "Affordance & Feasibility"


def attempt(
    log: str,
    task: str,
    subdomain: str,
    passed: bool | None,
    cause: str | None = None,
    epoch: int = 1,
) -> AttemptRecord:
    return AttemptRecord(
        log=log, model=log, condition="standard", reasoning_effort=None, max_frames=500,
        judge="j", scorer="rubric_judge", task_id=task, epoch=epoch, attempt_id=f"{log}{epoch}",
        media_type="image", domain="d", subdomain=subdomain,
        pass_=None if passed is None else float(passed), rubric=None if passed is None else 0.0,
        grading_failure=passed is None, cause=cause,
    )  # fmt: skip


def outcomes(task: str, subdomain: str, *firsts: str) -> list[AttemptRecord]:
    """One first attempt per run `r0`, `r1`, ...: `pass`, `fail` (not labelled), a cause
    (failed with it), or `ungraded` (a grading failure)."""
    found = []
    for index, first in enumerate(firsts):
        passed = {"pass": True, "ungraded": None}.get(first, False)
        cause = None if first in ("pass", "fail", "ungraded") else first
        found.append(attempt(f"r{index}", task, subdomain, passed, cause))
    return found


def test_each_subdomain_shows_the_task_most_runs_fail_for_one_cause() -> None:
    records = [
        # three runs fail each for one cause; the ties go to the most runs failing
        *outcomes("a-3of4", FIT, "missed_cue", "missed_cue", "missed_cue", "motive", "pass"),
        *outcomes("a-3of5", FIT, "size_fit", "size_fit", "size_fit", "motive", "motive"),
        *outcomes("a-2of5", FIT, "motive", "motive", "size_fit", "orientation", "fail"),
        # the same counts: the most runs holding the task wins, then the id
        *outcomes("m-b", MIND, "motive", "motive", "pass"),
        *outcomes("m-a", MIND, "motive", "motive", "pass"),
        *outcomes("m-fewer", MIND, "motive", "motive"),
        *outcomes("m-none", MIND, "pass", "pass", "pass", "pass", "pass"),
    ]
    runs = runs_of(records)
    chosen = choose_examples(runs, per_subdomain=2)
    # the paper's order: the affordance subdomain comes before theory of mind
    assert [e.task_id for e in chosen] == ["a-3of5", "a-3of4", "m-a", "m-b"]
    assert chosen[0].how_chosen == "5 of 5 runs fail; 3 of them for size_fit"
    assert chosen[1].how_chosen == "4 of 5 runs fail; 3 of them for missed_cue"
    assert [e.task_id for e in choose_examples(runs)] == ["a-3of5", "m-a"]


def test_only_first_graded_attempts_count_and_the_best_run_is_shown() -> None:
    records = [
        # r0 passes everything else: the best run; r2 passes its other task
        *outcomes("x", MIND, "motive", "motive", "missed_cue", "fail", "ungraded"),
        *outcomes("y", MIND, "pass", "fail", "pass", "fail", "fail"),
        attempt("r0", "x", MIND, False, "missed_cue", epoch=2),  # a later attempt: not counted
    ]
    (example,) = choose_examples(runs_of(records))
    # r4's grading failure leaves it out; r3 fails without a label
    assert example.how_chosen == "4 of 4 runs fail; 2 of them for motive"
    assert example.shown is not None and example.shown.log == "r0" and example.shown.epoch == 1
    unlabelled = choose_examples(runs_of(outcomes("z", FIT, "fail", "pass")))
    assert (
        unlabelled[0].how_chosen
        == "1 of 2 runs fail; none of the failures is labelled with a cause"
    )


def test_named_examples_keep_their_order_and_refuse_an_unknown_id() -> None:
    runs = runs_of([*outcomes("t-one", MIND, "pass", "pass"), *outcomes("t-two", FIT, "motive")])
    named = named_examples(runs, ["t-two", "t-one"])
    assert [e.task_id for e in named] == ["t-two", "t-one"]
    assert named[1].how_chosen == "named on the command line; 0 of 2 runs fail"
    assert named[1].shown is not None  # a task no run fails still shows an answer
    with pytest.raises(InputError, match="t-tow is not a task of these logs: did you mean t-two"):
        named_examples(runs, ["t-tow"])


FRAMES = {
    "kind": "frames", "media_sha256": "c" * 64, "frame_count": 3, "planned_frames": 3,
    "thinned": False, "effective_fps": 2.0, "duration": 1.5, "timestamps": [0.0, 0.5, 1.0],
    "frame_size": [640, 360], "frame_size_sent": [640, 360], "frame_sha256": ["a", "b", "c"],
    "frame_settings": {"fps": 2.0, "max_frames": 500, "frame_side": 768, "max_images": None,
                       "jpeg_quality": 85},
    "byte_budget": 32_000_000, "limits": {"provider": "openai"},
}  # fmt: skip


def test_media_sets_are_told_apart_by_what_was_sent() -> None:
    # another run, another provider, the same frames: one set
    same = {**FRAMES, "limits": {"provider": "anthropic"}, "token_fit": {"window": 200_000}}
    fewer = {
        **FRAMES,
        "frame_count": 2,
        "frame_sha256": ["a", "c"],
        "frame_settings": {**FRAMES["frame_settings"], "max_frames": 2},
    }
    assert served_key(same) == served_key(FRAMES) != served_key(fewer)
    assert served_key({"kind": "none"}) is None
    assert differing_settings([FRAMES, fewer]) == ["frame cap"]
    assert summary_of(FRAMES) == "3 frames of 640×360 px, 2.00 per second over 1.5 s"
    fitted = {**fewer, "token_fit": {"thinned_to_fit": True, "frames_planned": 3}}
    assert summary_of(fitted).endswith("; thinned from 3 to fit the context window")


def test_long_answers_fold_and_everything_is_escaped() -> None:
    short = answer_html("<b>bold</b> & done")
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; done" in short and "<details" not in short
    long = answer_html("word " * 400)
    assert long.startswith("<details class=long>") and "show all 2,000 characters" in long


def test_the_view_link_follows_inspects_own_route() -> None:
    found = Attempt(
        log="/logs/run one.eval", sample_id="t/1", epoch=2, answer="", gradings=(),
        label=None, error=None, sample=None,  # type: ignore[arg-type]
    )  # fmt: skip
    assert view_link(found) == (
        "http://127.0.0.1:7575/#/logs/run%20one.eval/samples/sample/t%2F1/2/"
    )


def test_the_difficulty_lists_link_only_to_pages_written() -> None:
    difficulty = Difficulty(2, ("t<1>",), ("t2",), ())
    board = Board("a release", [], [], difficulty)
    linked = replace(board, task_pages={"t<1>": "tasks/t_1_-ab.html"})
    page = html_report([linked], [])
    assert '<a href="tasks/t_1_-ab.html">t&lt;1&gt;</a>' in page
    assert "solved by every run in every attempt: 1: t2</li>" in page
    plain = html_report([board], [])
    assert "<a href" not in plain and "Tasks across the runs" not in plain


def test_report_pages_show_every_attempt_as_the_log_has_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [
        Item("t1", "theory_of_mind", "image",
             (Try(True, justification="names <the> cue"), Try(False, verdicts=(True, False)))),
        Item("t2", "extrapolation", "video",
             (Try(None), Try(False, model_error=True, error_message="overloaded"))),
    ]  # fmt: skip
    log = write_log(tmp_path / "logs" / "run.eval", items, model="openai/gpt-a")
    out = tmp_path / "out"
    assert main(["report", log, "--out", str(out), "--pages", "t1", "--format", "html"]) == 0
    assert "wrote 1 task page(s) in tasks/" in capsys.readouterr().err
    page = (out / "tasks" / "t1.html").read_text()
    verdicts = re.findall(r"data-criterion='(c\d)' data-met='(true|false)'", page)
    assert verdicts == [("c1", "true"), ("c1", "true"), ("c2", "false")]
    assert html.escape("names <the> cue", quote=False) in page
    assert re.findall(r'data-outcome="([^"]+)"', page) == ["pass", "fail"]
    assert "the log records no media sent" in page
    report = (out / "report.html").read_text()
    assert '<a href="tasks/t1.html">t1</a>' in report
    assert not (out / "tasks" / "t2.html").exists()

    assert main(["report", log, "--out", str(out), "--pages"]) == 0
    second = (out / "tasks" / "t2.html").read_text()
    assert re.findall(r'data-outcome="([^"]+)"', second) == ["grading failure", "provider error"]


def test_pages_need_an_out_folder_and_known_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path / "run.eval", [Item("t1", "retrodiction", "image", (Try(True),))])
    assert main(["report", log, "--examples"]) == 1
    assert "write pages beside report.html: give --out DIR" in capsys.readouterr().err
    assert main(["report", log, "--out", str(tmp_path / "o"), "--pages", "t9"]) == 1
    assert "t9 is not a task of these logs" in capsys.readouterr().err
