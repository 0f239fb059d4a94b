"""Building tasks (paper Sec. 2.3, 2.4, App. B.2, Fig. 8), the rules as pure functions and the
store: who reviews a round, the funnel's arithmetic against a build replayed step by step
and against the paper's own counts, the rubric's ids across revisions, and the release's
rows read back as written."""

from __future__ import annotations

import json
import random
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hss_inspect.construction import store
from hss_inspect.construction.authoring import Draft, rubric, submit_problems
from hss_inspect.construction.deal import check_enough_reviewers, eligible, pick_reviewer
from hss_inspect.construction.funnel import funnel
from hss_inspect.construction.funnel_report import render
from hss_inspect.construction.pool import PoolItem
from hss_inspect.construction.rules import rules
from hss_inspect.construction.store import ReviewSlot, RevisionTimes, TaskHistory, TaskView
from hss_inspect.core.errors import InputError
from hss_inspect.core.taxonomy import PAPER
from hss_inspect.data.rows import Criterion, parse_row, row_record
from hss_inspect.providers.paper_models import construction_funnel

ROUNDS = rules().rounds
REASONS = [r.key for r in rules().drop_reasons]


# ---- who reviews a round (pure) --------------------------------------------------------


@pytest.mark.parametrize("seed", range(20))
def test_a_round_goes_to_the_least_loaded_reviewer_who_is_neither_author_nor_earlier(
    seed: int,
) -> None:
    rng = random.Random(seed)
    reviewers = [f"r{n}" for n in range(rng.randint(3, 7))]
    author = rng.choice([*reviewers, "outsider"])
    others = [r for r in reviewers if r != author]
    earlier = set(rng.sample(others, rng.randint(0, min(2, len(others) - 1))))
    load = {name: rng.randint(0, 4) for name in reviewers}
    chosen = pick_reviewer(reviewers, author, earlier, load, seed, ("t-1", 1, 2))
    allowed = [r for r in reviewers if r != author and r not in earlier]
    assert chosen in allowed
    assert load[chosen] == min(load[r] for r in allowed)
    assert eligible(reviewers, author, earlier) == allowed
    assert pick_reviewer(reviewers, author, earlier, load, seed, ("t-1", 1, 2)) == chosen


def test_ties_are_broken_by_the_seed_and_too_few_reviewers_are_refused() -> None:
    reviewers = [f"r{n}" for n in range(6)]
    picks = {pick_reviewer(reviewers, "a", set(), {}, seed, ("t-1", 1, 1)) for seed in range(40)}
    assert len(picks) > 3  # not always the first name
    with pytest.raises(InputError, match="no reviewer left for round 3"):
        pick_reviewer(["a", "b", "c"], "a", {"b", "c"}, {}, 0, ("t-9", 2, 3))
    with pytest.raises(InputError, match=r"2 reviewer\(s\) besides the author b"):
        check_enough_reviewers(["a", "b", "c"], ["b"], 3)
    check_enough_reviewers(["a", "b", "c", "d"], ["b"], 3)


# ---- the rubric and the release's rows ---------------------------------------------------


def test_a_criterion_kept_across_revisions_keeps_its_id_and_weight() -> None:
    previous = (Criterion("q7", "Names the cause", 2.0), Criterion("c1", "Says when"))
    revised = rubric(("Says when", "A new point", "Names the cause", "Another"), previous)
    assert revised == (
        Criterion("c1", "Says when"),
        Criterion("c2", "A new point"),
        Criterion("q7", "Names the cause", 2.0),
        Criterion("c3", "Another"),
    )
    assert submit_problems(Draft("Retrodiction", "Q?", "A.", revised), PAPER) == []
    twice = Draft("Retrodiction", "Q?", "A.", rubric(("Same", "Same")))
    assert submit_problems(twice, PAPER) == ["Criterion written twice: 'Same'."]
    empty = submit_problems(Draft(), PAPER)
    assert empty == [
        "Give a subdomain.",
        "Give the question.",
        "Give the reference answer.",
        "Give at least one criterion (one a line).",
    ]


def test_a_row_written_for_the_release_reads_back_as_the_same_row() -> None:
    raw = {
        "task_id": "t-1",
        "domain": "Social Understanding",
        "subdomain": "Theory of Mind",
        "media_type": "video",
        "media_path": "media/clips/a b.mp4",
        "prompt": 'Why does she wave? "Quoted" text',
        "golden_response": "To greet him.",
        "rubric_criteria": [
            {"id": "x", "title": "Greeting", "weight": 2.5},
            {"id": "y", "title": "Him"},
        ],
    }
    row = parse_row(raw)
    written = row_record(row)
    assert parse_row(json.loads(json.dumps(written))) == row
    assert written["num_criteria"] == 2 and written["rubric_criteria"][1] == {
        "id": "y",
        "title": "Him",
    }


# ---- the funnel ------------------------------------------------------------------------


def history(task_id: str, outcome: str, at: int) -> TaskHistory:
    """A task of one revision that passed the rounds before `at` and then got `outcome`."""
    reviews = [
        ReviewSlot(task_id, 1, r, 0.0, f"r{r}", 0.0, "pass", None, None, 60.0) for r in range(1, at)
    ]
    verdict = None if outcome == "waiting" else outcome
    reason = "pure_perception" if outcome == "drop" else None
    reviews.append(ReviewSlot(task_id, 1, at, 0.0, f"r{at}", 0.0, verdict, reason, None, None))
    times = (RevisionTimes(1, 0.0, 600.0),)
    item = PoolItem(f"item-{task_id}", f"{task_id}.png", "image", 1)
    draft = Draft("Retrodiction", "Q?", "A.", (Criterion("c1", "C"),))
    view = TaskView(task_id, item, "a", None, "x", 1, draft, submitted=True)
    return TaskHistory(view, times, tuple(reviews))


def test_the_papers_own_funnel_comes_out_of_its_histories() -> None:
    """3,466 authored; 2,302 dropped at round 1, 605 at round 2, 37 at round 3: the paper's
    survivors (1,164, 559, 522) and yield (15.1%), Sec. 2.4 and Fig. 8."""
    authored, after = construction_funnel()
    drops = [authored - after[0], after[0] - after[1], after[1] - after[2]]
    tasks = []
    for r, count in enumerate(drops, start=1):
        tasks += [history(f"d{r}-{n}", "drop", r) for n in range(count)]
    tasks += [history(f"ok-{n}", "pass", ROUNDS) for n in range(after[-1])]
    found = funnel(tasks, ROUNDS)
    assert found.authored == 3466 and [r.survivors for r in found.rounds] == [1164, 559, 522]
    assert [r.dropped for r in found.rounds] == [2302, 605, 37]
    assert f"{100 * found.yield_share:.1f}" == "15.1"
    assert found.rounds[0].drop_reasons == {"pure_perception": 2302}
    assert "| after round 1 | 1,164 | 33.6% | 2,302 | 0 | 0 | 1,164 (33.6%) |" in render(
        found, "md", "t"
    )


@dataclass
class Replayed:
    """The test's own account of a build, kept as it acts: each task's state machine."""

    state: dict[str, str] = field(
        default_factory=dict
    )  # draft, waiting, revision, dropped, admitted
    at: dict[str, int] = field(default_factory=dict)  # the round awaited or where dropped
    passed: dict[str, int] = field(default_factory=dict)
    reason: dict[str, str] = field(default_factory=dict)
    edits: Counter[int] = field(default_factory=Counter)
    reentries: int = 0
    authoring: list[float] = field(default_factory=list)
    reviewing: list[float] = field(default_factory=list)


def act(
    path: Path, rng: random.Random, book: Replayed, clock: list[float], authors: list[str]
) -> None:
    """One step of a build: an author writes or revises, or a reviewer decides."""
    clock[0] += rng.uniform(30, 900)
    now = clock[0]
    if rng.random() < 0.45:
        author = rng.choice(authors)
        revising = [
            t for t, s in book.state.items() if s == "revision" and t.split(":")[0] == author
        ]
        free = [item for item, task, _ in store.pool_items(path) if task is None]
        if revising and rng.random() < 0.6:
            key = rng.choice(revising)
            task_id = key.split(":")[1]
            view = store.view_of(path, task_id)
            assert view is not None
            opened = now - rng.uniform(60, 1200)
            store.save_draft(
                path,
                author,
                view.item.item_id,
                task_id,
                Draft("Extrapolation", "Q2?", "A2.", rubric(("C",))),
                opened,
                now,
            )
            assert store.submit_task(path, author, task_id, now)
            book.state[key], book.at[key], book.passed[key] = "waiting", 1, 0
            book.reentries += 1
            book.authoring.append((now - opened) / 60)
        elif free:
            opened = now - rng.uniform(60, 1200)
            draft = Draft("Retrodiction", "Q?", "A.", rubric(("C",)))
            task_id = store.save_draft(path, author, free[0].item_id, None, draft, opened, now)
            key = f"{author}:{task_id}"
            book.state[key] = "draft"
            if rng.random() < 0.85:
                assert store.submit_task(path, author, task_id, now)
                assert not store.submit_task(path, author, task_id, now)  # sent twice: once
                book.state[key], book.at[key], book.passed[key] = "waiting", 1, 0
                book.authoring.append((now - opened) / 60)
        return
    reviewer = rng.choice(store.names_of(path, "reviewer"))
    shown_now = now - rng.uniform(10, 300)
    slot, view, _, _ = store.next_review(path, reviewer, shown_now)
    if slot is None or view is None:
        return
    key = f"{view.author}:{view.task_id}"
    shown = slot.shown_at if slot.shown_at is not None else shown_now
    verdict = rng.choices(["pass", "edit", "drop"], [0.55, 0.2, 0.25])[0]
    reason = rng.choice(REASONS) if verdict == "drop" else None
    assert store.decide(
        path,
        reviewer,
        (slot.task_id, slot.revision, slot.round),
        verdict,
        reason,
        "fix" if verdict == "edit" else None,
        ROUNDS,
        now,
    )
    assert not store.decide(
        path,
        reviewer,
        (slot.task_id, slot.revision, slot.round),
        "drop",
        "other",
        None,
        ROUNDS,
        now,
    )
    book.reviewing.append((now - shown) / 60)
    if verdict == "pass":
        book.passed[key] = slot.round
        if slot.round == ROUNDS:
            book.state[key] = "admitted"
        else:
            book.at[key] = slot.round + 1
    elif verdict == "edit":
        book.edits[slot.round] += 1
        book.state[key], book.at[key], book.passed[key] = "revision", 1, 0
    else:
        book.state[key], book.at[key], book.reason[key] = "dropped", slot.round, reason or ""


def new_store_build(
    tmp_path: Path, items: int, authors: list[str], reviewers: list[str], seed: int
) -> Path:
    path = tmp_path / "build.sqlite"
    settings = {"pool": str(tmp_path), "seed": seed, "view": "media", "media": {}, "prefix": "t",
                "rounds": ROUNDS, "created": "2026-12-03T00:00:00+00:00"}  # fmt: skip
    pool = [PoolItem(f"item-{n:04d}", f"f{n}.png", "image", 100) for n in range(1, items + 1)]
    store.create_build(path, settings, pool, authors, reviewers)
    return path


@pytest.mark.parametrize("seed", range(3))
def test_the_funnel_of_a_build_matches_the_build_replayed_step_by_step(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    authors = ["ann", "bo", "cy"]
    reviewers = ["ann", "dee", "eli", "fay", "gus"]  # ann both writes and reviews
    path = new_store_build(tmp_path, 60, authors, reviewers, seed)
    book, clock = Replayed(), [1_000_000.0]
    for _ in range(400):
        act(path, rng, book, clock, authors)
    found = funnel(*store.build_funnel_inputs(path))

    placed = {k: s for k, s in book.state.items() if s != "draft"}
    assert found.authored == len(placed) and found.drafts == len(book.state) - len(placed)
    entered = found.authored
    for r in found.rounds:
        assert r.entered == entered
        assert r.survivors == sum(book.passed[k] >= r.round for k in placed)
        dropped = [k for k, s in placed.items() if s == "dropped" and book.at[k] == r.round]
        assert r.dropped == len(dropped)
        assert r.drop_reasons == dict(Counter(book.reason[k] for k in dropped))
        assert r.waiting == sum(
            s in ("waiting", "revision") and book.at[k] == r.round for k, s in placed.items()
        )
        assert r.edits == book.edits[r.round]
        assert r.entered == r.survivors + r.dropped + r.waiting
        entered = r.survivors
    assert found.admitted == sum(s == "admitted" for s in placed.values())
    assert found.in_revision == sum(s == "revision" for s in placed.values())
    assert found.reentries == book.reentries
    assert found.authoring_minutes == pytest.approx(statistics.median(book.authoring))
    assert found.review_minutes == pytest.approx(statistics.median(book.reviewing))
    assert sum(a.counts["authored"] for a in found.authors) == found.authored
    assert sum(r.counts["decided"] for r in found.reviewers) == len(book.reviewing)
    assert found.admitted > 0 and sum(r.dropped for r in found.rounds) > 0 and book.reentries > 0

    # the dealing: never the author, never an earlier round's reviewer of the same revision,
    # each round to the least loaded of those who may take it
    load: Counter[str] = Counter()
    slots = sorted(
        (s for h in store.histories(path) for s in h.reviews), key=lambda s: (s.dealt_at, s.round)
    )
    authors_of = {h.view.task_id: h.view.author for h in store.histories(path)}
    for slot in slots:
        earlier = {
            s.reviewer
            for s in slots
            if (s.task_id, s.revision) == (slot.task_id, slot.revision) and s.round < slot.round
        }
        allowed = eligible(reviewers, authors_of[slot.task_id], earlier)
        assert slot.reviewer in allowed
        assert load[slot.reviewer] == min(load[r] for r in allowed)
        load[slot.reviewer] += 1


def test_a_draft_can_be_given_up_and_an_item_is_taken_once(tmp_path: Path) -> None:
    path = new_store_build(tmp_path, 2, ["ann", "bo"], ["r1", "r2", "r3"], 0)
    draft = Draft("Retrodiction", "Q?", "A.", rubric(("C",)))
    task_id = store.save_draft(path, "ann", "item-0001", None, draft, 0.0, 10.0)
    with pytest.raises(InputError, match="item item-0001 is taken by task t-0001"):
        store.save_draft(path, "bo", "item-0001", None, draft, 0.0, 11.0)
    assert not store.release_item(path, "bo", task_id)  # not bo's
    assert store.release_item(path, "ann", task_id)
    assert store.save_draft(path, "bo", "item-0001", None, draft, 0.0, 12.0) == "t-0002"
    assert store.submit_task(path, "bo", "t-0002", 13.0)
    assert not store.release_item(path, "bo", "t-0002")  # submitted: in the funnel for good
    with pytest.raises(InputError, match="t-0002 is review: only a draft"):
        store.save_draft(path, "bo", "item-0001", "t-0002", draft, 0.0, 14.0)
