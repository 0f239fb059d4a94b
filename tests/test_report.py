"""The report's numbers from logs with known per-attempt scores (written with Inspect's
log API), each checked against values computed here by hand."""

from __future__ import annotations

import csv
import io
import json
from math import comb
from pathlib import Path

import pytest

from hss_inspect.commands.cli import main
from hss_inspect.grading.metrics import bootstrap_halfwidth
from hss_inspect.report.logs import LogError
from hss_inspect.report.records import read_logs
from hss_inspect.report.tables import leaderboard_row, runs_of
from tests.support.logs import Item, Try, write_log

P, F = Try(True), Try(False)


def _tokens(passed: bool | None, output: int, reasoning: int | None) -> Try:
    return Try(passed, output_tokens=output, reasoning_tokens=reasoning)


ITEMS = [
    Item(
        "t1",
        "retrodiction",
        "image",
        (_tokens(True, 150, 50), _tokens(True, 160, 60), _tokens(False, 190, 70)),
    ),
    Item("t2", "hidden_invisible", "image", (F, Try(None), F)),
    Item(
        "t3",
        "theory_of_mind",
        "video",
        (_tokens(True, 30, None), _tokens(False, 20, None), Try(False, no_answer=True)),
    ),
    Item("t4", "patterns_pareidolia", "video", (Try(None), Try(None), Try(None))),
    Item("t5", "extrapolation", "video", (P, Try(None, model_error=True), P)),
]
# Per task: the mean over graded attempts (grading failures and model errors left out).
TASK_PASS = {"t1": 2 / 3, "t2": 0.0, "t3": 1 / 3, "t5": 1.0}
GRADED = {"t1": (3, 2), "t2": (2, 0), "t3": (3, 1), "t5": (2, 2)}


@pytest.fixture
def known_log(tmp_path: Path) -> str:
    return write_log(tmp_path / "known.eval", ITEMS, model="openai/gpt-a", effort="high")


def _row(path: str) -> dict:
    _, records = read_logs([path])
    (run,) = runs_of(records)
    return leaderboard_row(run)


def _chen(n: int, c: int, k: int) -> float:
    return 1.0 if n - c < k else 1 - comb(n - c, k) / comb(n, k)


def test_pass_at_1_groups_and_interval(known_log: str) -> None:
    row = _row(known_log)
    assert row["pass_at_1"] == pytest.approx(sum(TASK_PASS.values()) / 4)
    assert row["ci95"] == bootstrap_halfwidth(list(TASK_PASS.values()))
    assert row["image"] == pytest.approx((2 / 3 + 0) / 2)
    assert row["video"] == pytest.approx((1 / 3 + 1) / 2)
    assert row["temporal"] == pytest.approx((2 / 3 + 1) / 2)
    assert row["physical"] == 0.0
    assert row["social"] == pytest.approx(1 / 3)
    assert row["abstract"] is None  # its only task was never graded
    assert row["subdomains"] == pytest.approx(
        {
            "retrodiction": 2 / 3,
            "extrapolation": 1.0,
            "hidden_invisible": 0.0,
            "theory_of_mind": 1 / 3,
        }
    )
    assert (row["n_tasks"], row["attempts"], row["ungraded_tasks"]) == (5, 15, 1)
    assert (row["model"], row["reasoning_effort"], row["condition"]) == (
        "openai/gpt-a",
        "high",
        "standard",
    )
    assert row["max_frames"] == 500 and row["judge"] == "anthropic/claude-opus-5"


def test_a_subdomain_outside_the_taxonomy_is_reported_under_its_own_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the loader promises a release's own subdomain is reported under its own name
    items = [
        Item("k1", "extrapolation", "image", (P, P, Try(False))),
        Item("n1", "Telepathy", "video", (P, Try(False), Try(False))),
        Item("n2", "Telepathy", "image", (P, P, P)),
    ]
    log = write_log(tmp_path / "own.eval", items, model="openai/gpt-a")
    row = _row(log)
    assert list(row["subdomains"]) == ["extrapolation", "Telepathy"]
    assert row["subdomains"]["Telepathy"] == pytest.approx((1 / 3 + 1) / 2)
    assert main(["report", log]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[lines.index("## By subdomain (pass@1, %)") :]
    assert "| Telepathy | 66.7 |" in table
    assert table.index("| extrapolation | 66.7 |") < table.index("| Telepathy | 66.7 |")


def test_pass_at_k_with_unequal_attempts(known_log: str) -> None:
    row = _row(known_log)
    assert list(row["pass_at_k"]) == ["1", "2"]  # the fewest graded attempts of a task is 2
    for k in (1, 2):
        expected = sum(_chen(n, c, k) for n, c in GRADED.values()) / len(GRADED)
        assert row["pass_at_k"][str(k)] == pytest.approx(expected)
    assert row["pass_at_k"]["1"] == pytest.approx(row["pass_at_1"])
    assert row["pass_at_k"]["2"] == pytest.approx((1 + 0 + 2 / 3 + 1) / 4)


def test_bookkeeping_counts(known_log: str) -> None:
    row = _row(known_log)
    assert row["no_answer"] == 1
    assert row["grading_failures"] == 1 + 3
    assert row["model_errors"] == 1


def test_token_means_of_the_model_under_test(known_log: str) -> None:
    row = _row(known_log)
    assert row["think_tokens"] == pytest.approx((50 + 60 + 70) / 3)  # only reported counts
    # answer = output - reasoning; every attempt with a usage counts (15 here)
    outputs = [150 - 50, 160 - 60, 190 - 70, 30, 20] + [100] * 10
    assert row["answer_tokens"] == pytest.approx(sum(outputs) / len(outputs))


def test_no_reported_reasoning_is_null_not_zero(tmp_path: Path) -> None:
    path = write_log(tmp_path / "b.eval", [Item("t1", "retrodiction", "image", (P, F))])
    row = _row(path)
    assert row["think_tokens"] is None
    assert row["answer_tokens"] == 100


def test_logs_written_before_the_five_key_score_read_the_same(tmp_path: Path) -> None:
    legacy = write_log(tmp_path / "old.eval", ITEMS[:2], legacy=True)
    current = write_log(tmp_path / "new.eval", ITEMS[:2])
    old_row, new_row = _row(legacy), _row(current)
    for key in ("pass_at_1", "ci95", "pass_at_k", "grading_failures", "think_tokens"):
        assert old_row[key] == new_row[key]
    assert old_row["grading_failures"] == 1


def test_an_old_log_counts_an_errored_empty_answer_as_its_metric_did(tmp_path: Path) -> None:
    # Before the five-key value, a provider error left no text and was scored 0 (no answer)
    # with the message in metadata; the log's own pass@1 counted that zero.
    errored = Try(False, no_answer=True, error_message="request timed out")
    path = write_log(
        tmp_path / "old.eval", [Item("t1", "retrodiction", "image", (P, errored))], legacy=True
    )
    row = _row(path)
    assert row["pass_at_1"] == pytest.approx(0.5)
    assert (row["no_answer"], row["model_errors"], row["grading_failures"]) == (1, 0, 0)


def test_a_log_superseded_by_a_retry_is_left_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    item = lambda tries: [Item("t1", "retrodiction", "image", tries)]  # noqa: E731
    first = write_log(
        tmp_path / "first.eval",
        item((F,)),
        task_id="T",
        eval_id="E1",
        status="error",
        created="2026-11-29T20:00:00+00:00",
    )
    retried = write_log(
        tmp_path / "retried.eval",
        item((P,)),
        task_id="T",
        eval_id="E2",
        created="2026-11-29T21:00:00+00:00",
    )
    copy = write_log(
        tmp_path / "rescored-copy.eval",
        item((P,)),
        task_id="T",
        eval_id="E2",
        created="2026-11-29T21:00:00+00:00",
    )
    infos, _ = read_logs([tmp_path])
    assert sorted(i.log for i in infos) == sorted([retried, copy])
    assert first in caplog.text


def test_json_logs_read_like_eval_logs(tmp_path: Path) -> None:
    as_json = write_log(tmp_path / "known.json", ITEMS)
    as_eval = write_log(tmp_path / "known.eval", ITEMS)
    json_row, eval_row = _row(as_json), _row(as_eval)
    assert {k: v for k, v in json_row.items() if k != "log"} == {
        k: v for k, v in eval_row.items() if k != "log"
    }


def test_verdicts_too_long_for_inspects_summaries_are_read_in_full(tmp_path: Path) -> None:
    # Inspect's sample summaries drop metadata values over 1 kB; the reader then reads
    # that sample whole, so long justifications never lose the verdicts.
    long = Try(True, verdicts=(True, False), justification="x" * 2000)
    path = write_log(tmp_path / "long.eval", [Item("t1", "retrodiction", "image", (long, P))])
    _, records = read_logs([path])
    first = next(r for r in records if r.epoch == 1)
    assert [(v.id, v.met) for v in first.verdicts] == [("c1", True), ("c2", False)]
    assert first.output_tokens == 100


def test_json_report_of_a_folder(known_log: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(Path(known_log).parent), "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["pass_at_1"] == pytest.approx(0.5)
    assert row["log"] == known_log


def test_markdown_marks_best_and_second(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    item = lambda *tries: Item("t1", "retrodiction", "image", tries)  # noqa: E731
    write_log(tmp_path / "a.eval", [item(P, P)], model="m/strong")
    write_log(tmp_path / "b.eval", [item(P, F)], model="m/middle")
    write_log(tmp_path / "c.eval", [item(F, F)], model="m/weak")
    assert main(["report", str(tmp_path)]) == 0
    lines = {
        line.split("|")[1].strip(): line
        for line in capsys.readouterr().out.splitlines()
        if "m/" in line
    }
    assert "**100.0**" in lines["m/strong (high)"]
    assert "<u>50.0</u>" in lines["m/middle (high)"]
    assert "**" not in lines["m/weak (high)"] and "<u>" not in lines["m/weak (high)"]


def test_csv_has_the_table1_layout_in_percent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    item = lambda *tries: Item("t1", "retrodiction", "image", tries)  # noqa: E731
    write_log(tmp_path / "a.eval", [item(P, P, P)], model="m/strong")
    write_log(tmp_path / "b.eval", [item(P, F, F)], model="m/middle", effort=None)
    assert main(["report", str(tmp_path), "--format", "csv", "--out", str(tmp_path / "o")]) == 0
    rows = {r["model (effort)"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    strong, middle = rows["m/strong (high)"], rows["m/middle"]
    assert (strong["pass@1"], strong["image"], strong["abstract"]) == ("100.00", "100.00", "")
    assert middle["pass@1"] == "33.33" and middle["temporal"] == "33.33"
    assert strong["best"] == "pass_at_1 image temporal" and middle["second"] == strong["best"]
    subdomains = list(csv.reader((tmp_path / "o" / "subdomains.csv").open()))
    assert subdomains == [
        ["subdomain", "m/strong (high)", "m/middle"],
        ["retrodiction", "100.0", "33.3"],
    ]


def test_missing_log_is_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path / "nope.eval")]) == 1
    assert "nope.eval: no such file" in capsys.readouterr().err
    with pytest.raises(LogError, match="no Inspect logs found"):
        read_logs([tmp_path])


def test_policy_refusals_are_counted_apart_and_as_no_answers(tmp_path: Path) -> None:
    refused = Try(False, no_answer=True, refusal=True)
    path = write_log(
        tmp_path / "r.eval", [Item("t1", "retrodiction", "image", (refused, Try(True)))]
    )
    _, records = read_logs([path])
    (row,) = [leaderboard_row(run) for run in runs_of(records)]
    assert (row["refusals"], row["no_answer"]) == (1, 1)
    assert row["pass_at_1"] == pytest.approx(0.5)
