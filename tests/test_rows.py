"""Row validation: every bad row is named with its fault; good variants are accepted."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from hss_inspect.core.options import as_list
from hss_inspect.data.rows import DatasetError, parse_rows, select_rows


def row(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task_id": "t1",
        "domain": "Social Understanding",
        "subdomain": "Theory of Mind",
        "media_type": "image",
        "media_path": "media/a.png",
        "prompt": "Why?",
        "golden_response": "Because.",
        "rubric_criteria": [{"id": "c1", "title": "Says because"}],
        "num_criteria": 1,
    }
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def lines(*rows: dict[str, Any]) -> list[str]:
    return [json.dumps(r) for r in rows]


def test_rubric_may_arrive_as_a_json_string_with_weights() -> None:
    rubric = json.dumps([{"id": "a", "title": "x", "weight": 2}, {"id": "b", "title": "y"}])
    (parsed,) = parse_rows(lines(row(rubric_criteria=rubric, num_criteria=2)), "rows.jsonl")
    assert [(c.id, c.weight) for c in parsed.criteria] == [("a", 2.0), ("b", None)]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (row(prompt=None), "missing field(s) prompt"),
        (row(media_type="audio"), "unknown media_type 'audio'"),
        (row(media_path="../../etc/passwd"), "escapes the repository root"),
        (row(media_path="/etc/passwd"), "escapes the repository root"),
        (row(rubric_criteria="[not json"), "rubric_criteria is a string but not JSON"),
        (row(rubric_criteria=[]), "non-empty list"),
        (row(rubric_criteria=[{"id": "c1"}]), "needs a non-empty id and title"),
        (row(rubric_criteria=[{"id": "c1", "title": "x", "weight": -1}]), "weight -1"),
        (row(num_criteria=3), "num_criteria is 3 but rubric_criteria has 1"),
        (
            row(
                rubric_criteria=[{"id": "c", "title": "x"}, {"id": "c", "title": "y"}],
                num_criteria=2,
            ),
            "duplicate criterion id(s) c",
        ),
    ],
)
def test_bad_rows_are_named_with_file_line_and_task(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(DatasetError) as raised:
        parse_rows(lines(row(task_id="ok"), bad), "data/test.jsonl")
    text = str(raised.value)
    assert "data/test.jsonl line 2" in text
    assert "task 't1'" in text
    assert message in text


def test_duplicate_task_ids_and_bad_json_are_all_listed() -> None:
    text_lines = [*lines(row(), row()), "{oops"]
    with pytest.raises(DatasetError) as raised:
        parse_rows(text_lines, "rows.jsonl")
    text = str(raised.value)
    assert "2 invalid row(s)" in text
    assert "duplicate task_id 't1' (first on line 1)" in text
    assert "rows.jsonl line 3: not valid JSON" in text


def test_unknown_taxonomy_is_reported_not_dropped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        parsed = parse_rows(
            lines(row(subdomain="Telepathy"), row(task_id="t2", subdomain="Retrodiction")),
            "rows.jsonl",
        )
    assert len(parsed) == 2
    assert "task t1: unknown subdomain 'Telepathy'" in caplog.text
    assert "subdomain 'Retrodiction' is of the domain 'Temporal & Causal Dynamics'" in caplog.text


def test_selection_by_media_domain_label_and_subdomain() -> None:
    parsed = parse_rows(
        lines(
            row(task_id="a"),
            row(task_id="b", media_type="video", media_path="media/b.mp4"),
            row(
                task_id="c",
                domain="Physical & Spatial Logic",
                subdomain='Spatial "Alien Viewpoint"',
            ),
        ),
        "rows.jsonl",
    )
    assert [r.task_id for r in select_rows(parsed, "video")] == ["b"]
    assert [r.task_id for r in select_rows(parsed, "all", ["physical"])] == ["c"]
    assert [r.task_id for r in select_rows(parsed, "all", "Social Understanding")] == ["a", "b"]
    assert [r.task_id for r in select_rows(parsed, "image", None, "alien_viewpoint")] == ["c"]
    with pytest.raises(ValueError, match="unknown domain 'cosmic'"):
        select_rows(parsed, "all", "cosmic")


def test_list_options_accept_a_string_a_comma_string_or_a_list() -> None:
    assert as_list("social") == ["social"]
    assert as_list("social, physical") == ["social", "physical"]
    assert as_list(["social", "physical"]) == ["social", "physical"]
    assert as_list(None) == []


def test_a_subdomain_whose_name_holds_a_comma_is_found_whole_or_split() -> None:
    from hss_inspect.core.taxonomy import resolve_subdomains

    name = "Social Role, Norm & Power Dynamics"
    # Inspect hands `-T subdomains="Social Role, Norm & Power Dynamics"` over as a list
    assert resolve_subdomains(as_list(name)) == {name}
    assert resolve_subdomains(["Social Role", "Norm & Power Dynamics", "theory_of_mind"]) == {
        name,
        "Theory of Mind",
    }
    with pytest.raises(ValueError, match="unknown subdomain 'Social Role'"):
        resolve_subdomains(["Social Role"])
