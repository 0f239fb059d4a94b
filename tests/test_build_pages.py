"""What the build's pages say to a reviewer and an author, read from the server's answers
(in process, no browser): a verdict confirmed as stored and listed read-only, an Edit's
marked criteria shown to its author, a drop's reason, a saved draft, giving up asked
first, the text limits, the rubric numbered once, items by id to reviewers."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from hss_inspect.construction import store
from hss_inspect.construction.app import BuildServer
from hss_inspect.construction.authoring import Draft, rubric
from hss_inspect.construction.create import new_build
from hss_inspect.core.settings import MediaSettings
from tests.support.fixture_repo import write_image
from tests.support.human_study import served, write_video_with_sound
from tests.test_human import BROWSER_ARGS, CHROMIUM

pytest.importorskip("starlette")
from starlette.testclient import TestClient

CRITERIA = ("Says the cup fell", "Names the colour of the cup")


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, dict[tuple[str, str], str]]:
    pool = tmp_path / "pool"
    write_image(pool / "rooms" / "kitchen.png", (96, 64), "PNG")
    write_image(pool / "street.png", (80, 64), "PNG")
    return made(tmp_path, pool)


def made(tmp_path: Path, pool: Path) -> tuple[Path, dict[tuple[str, str], str]]:
    path = tmp_path / "build.sqlite"
    tokens, _ = new_build(
        path, pool, ["ann"], ["r1", "r2", "r3"], 1, "media", MediaSettings(), "task"
    )
    return path, {(p.role, p.name): token for p, token in tokens.items()}


def submitted(path: Path, file: str = "rooms/kitchen.png") -> tuple[str, str]:
    """ann's task on `file`, submitted; its id and the reviewer dealt round 1."""
    items = {i.path: i.item_id for i, _, _ in store.pool_items(path)}
    draft = Draft("Retrodiction", "What happened?", "The cup fell.", rubric(CRITERIA))
    task_id = store.save_draft(path, "ann", items[file], None, draft, time.time())
    assert store.submit_task(path, "ann", task_id)
    (history,) = [h for h in store.histories(path) if h.view.task_id == task_id]
    return task_id, history.reviews[-1].reviewer


def client(path: Path) -> TestClient:
    return TestClient(BuildServer(path).app(), follow_redirects=False)


def verdict(task_id: str, verdict: str, **rest: str | list[str]) -> dict[str, str | list[str]]:
    return {"task_id": task_id, "revision": "1", "round": "1", "verdict": verdict, **rest}


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_an_edit_is_confirmed_listed_read_only_and_its_marks_reach_the_author(built) -> None:  # type: ignore[no-untyped-def]
    path, tokens = built
    task_id, reviewer = submitted(path)
    rev, ann = tokens[("reviewer", reviewer)], tokens[("author", "ann")]
    with client(path) as web:
        page = web.get(f"/b/{rev}").text
        assert re.findall(r'name=about value="(c\d)"', page) == ["c1", "c2"]
        refused = web.post(
            f"/b/{rev}/verdict", data=verdict(task_id, "pass", about=["c2"], feedback="x")
        )
        assert refused.status_code == 422 and "marked for an Edit only" in refused.text
        assert 'value="c2" checked' in refused.text  # the form kept as sent
        assert store.verdicts_given(path, reviewer) == []

        sent = web.post(
            f"/b/{rev}/verdict", data=verdict(task_id, "edit", about=["c2"], feedback="Which?")
        )
        assert sent.status_code == 303
        after = text(web.get(sent.headers["location"]).text)
        assert f"Your verdict on {task_id} (round 1): Edit — saved." in after
        assert "The verdicts you gave (1)" in after
        listed = web.get(f"/b/{rev}/verdicts").text
        assert "<form" not in listed and "<textarea" not in listed
        row = text(listed.split("</th></tr>")[1])
        assert row.split() == [task_id, "1", "1", "Edit", "c2", "Which?"]
        # another reviewer's link lists none of it
        other = tokens[("reviewer", next(n for n in ("r1", "r2", "r3") if n != reviewer))]
        assert task_id not in web.get(f"/b/{other}/verdicts").text
        assert web.get(f"/b/{ann}/verdicts").status_code == 404

        returned = text(web.get(f"/b/{ann}/task/{task_id}").text)
        assert "Which?" in returned and f"About these criteria: c2 {CRITERIA[1]}" in returned
        assert f"c1 {CRITERIA[0]}" not in returned.split("About these criteria")[1][:60]


def test_a_dropped_task_shows_its_reason_and_note_to_its_author(built) -> None:  # type: ignore[no-untyped-def]
    path, tokens = built
    task_id, reviewer = submitted(path)
    rev, ann = tokens[("reviewer", reviewer)], tokens[("author", "ann")]
    form = verdict(task_id, "drop", reason="other", other="the cup is off frame", feedback="Sorry")
    with client(path) as web:
        sent = web.post(f"/b/{rev}/verdict", data=form)
        assert "Drop — saved." in text(web.get(sent.headers["location"]).text)
        home = text(web.get(f"/b/{ann}").text)
        assert "dropped in round 1: Other: the cup is off frame" in home
        page = text(web.get(f"/b/{ann}/task/{task_id}").text)
        assert "Dropped in review round 1 of 3 (revision 1): Other: the cup is off frame" in page
        assert "Sorry" in page


def test_a_saved_draft_says_so_and_giving_up_asks_first(built) -> None:  # type: ignore[no-untyped-def]
    path, tokens = built
    ann = tokens[("author", "ann")]
    items = {i.path: i.item_id for i, _, _ in store.pool_items(path)}
    form = {"item_id": items["street.png"], "task_id": "", "opened_at": str(time.time()),
            "subdomain": "", "prompt": "Where did the cyclist come from?", "reference": "",
            "criteria": "", "action": "save"}  # fmt: skip
    with client(path) as web:
        assert "Draft saved." not in web.get(f"/b/{ann}/item/{items['street.png']}").text
        saved = web.post(f"/b/{ann}/task", data=form)
        (task,) = store.tasks_of_author(path, "ann")
        assert saved.headers["location"] == f"/b/{ann}/task/{task.task_id}?saved"
        assert "Draft saved." in web.get(saved.headers["location"]).text
        assert "Draft saved." not in web.get(f"/b/{ann}/task/{task.task_id}").text

        typed = {**form, "task_id": task.task_id, "prompt": "Typed, never saved"}
        asked = web.post(f"/b/{ann}/task", data={**typed, "action": "release"})
        assert asked.status_code == 200 and f"Give up {task.task_id}?" in asked.text
        assert store.view_of(path, task.task_id) is not None  # nothing deleted yet
        assert 'name=prompt value="Typed, never saved"' in asked.text
        kept = web.post(f"/b/{ann}/task", data={**typed, "action": "save"})  # "No, keep"
        assert kept.status_code == 303
        assert store.view_of(path, task.task_id).draft.prompt == "Typed, never saved"  # type: ignore[union-attr]
        gone = web.post(f"/b/{ann}/task", data={**typed, "action": "release", "confirm": "yes"})
        assert gone.status_code == 303 and store.view_of(path, task.task_id) is None


def test_limits_show_up_front_the_rubric_is_numbered_once_and_items_by_id(built) -> None:  # type: ignore[no-untyped-def]
    path, tokens = built
    task_id, reviewer = submitted(path)
    ann, rev = tokens[("author", "ann")], tokens[("reviewer", reviewer)]
    (task,) = store.tasks_of_author(path, "ann")
    with client(path) as web:
        street = next(i for i, _, _ in store.pool_items(path) if i.path == "street.png")
        author = web.get(f"/b/{ann}/item/{street.item_id}")
        shown = text(author.text)
        assert "Question, as the model will be asked it (up to 4,000 characters)" in shown
        assert "Reference answer (up to 8,000 characters)" in shown
        assert "up to 20 criteria of 1,000 characters each" in shown
        assert "0 of 4,000 characters" in shown
        # an author sees paths; the taken item among all items, not the free ones
        assert "rooms/kitchen.png" in web.get(f"/b/{ann}?pool=all").text
        assert "rooms/kitchen.png" not in web.get(f"/b/{ann}").text
        review = web.get(f"/b/{rev}").text
    rubric_html = review.split("<h3>Rubric</h3>")[1]
    assert rubric_html.startswith("<ul class=rubric><li><code>c1</code> Says the cup fell</li>")
    assert f"{task_id} on {task.item.item_id}: round 1 of 3" in text(review)
    assert "kitchen.png" not in review  # a reviewer sees the item's id, never its path
    assert "Feedback for the author (needed for Edit) (up to 4,000 characters)" in text(review)


def test_an_authors_home_pages_the_pool_free_items_first(tmp_path: Path) -> None:
    """450 items, 3 taken: 200 a page, the free ones by default, all of them free first."""
    pool = tmp_path / "pool"
    for n in range(450):
        write_image(pool / f"p{n:03d}.png", (8, 8), "PNG")
    path, tokens = made(tmp_path, pool)
    items = [i for i, _, _ in store.pool_items(path)]
    draft = Draft("Retrodiction", "What happened?", "The cup fell.", rubric(CRITERIA))
    for taken in (items[0], items[5], items[449]):
        store.save_draft(path, "ann", taken.item_id, None, draft, time.time())
    free = [i.path for i in items if i not in (items[0], items[5], items[449])]
    listed = re.compile(r"<td>(p\d+\.png)</td>")
    with client(path) as web:
        home = web.get(f"/b/{tokens[('author', 'ann')]}").text
        assert listed.findall(home) == free[:200]
        assert "447 free of 450" in home and "1-200 of 447" in text(home)
        last = web.get(f"/b/{tokens[('author', 'ann')]}?pool=free&from=400").text
        assert listed.findall(last) == free[400:] and "next" not in text(last)
        every = web.get(f"/b/{tokens[('author', 'ann')]}?pool=all&from=400").text
        # free first: the 447 free, then the 3 taken in the pool's order
        assert listed.findall(every) == [*free[400:], "p000.png", "p005.png", "p449.png"]
    assert len(home.encode()) < 80_000


# ---- a lab's own taxonomy, chosen at build new -------------------------------------------

LAB_TAXONOMY = """\
# the lab's own taxonomy: each domain with its subdomains
domains:
  - name: Street Life
    label: street
    subdomains: [Traffic, Markets]
  - name: Wildlife
    subdomains: [Migration]
"""


def test_a_labs_own_taxonomy_is_offered_imported_reviewed_and_exported(tmp_path: Path) -> None:
    """`build new --taxonomy FILE`: the authoring page offers the lab's subdomains, the
    import holds rows to them (a paper's subdomain is a bad row there), the review page
    and the release give each task its domain in that taxonomy, the card counts by it."""
    from hss_inspect.commands.cli import main
    from hss_inspect.construction.create import import_tasks, read_taxonomy
    from hss_inspect.data.rows import DatasetError
    from tests.support.build_pool import task_row, write_tasks

    pool = tmp_path / "pool"
    for name in ("crossing.png", "stall.png", "geese.png"):
        write_image(pool / name, (80, 64), "PNG")
    (tmp_path / "taxonomy.yaml").write_text(LAB_TAXONOMY)
    path = tmp_path / "build.sqlite"
    tokens, _ = new_build(path, pool, ["ann"], ["r1", "r2", "r3"], 1, "media", MediaSettings(),
                          "task", taxonomy=read_taxonomy(tmp_path / "taxonomy.yaml"))  # fmt: skip
    ann = next(t for p, t in tokens.items() if p.role == "author")
    items = {i.path: i.item_id for i, _, _ in store.pool_items(path)}

    form = {"item_id": items["crossing.png"], "task_id": "", "opened_at": str(time.time()),
            "prompt": "Who crossed first?", "reference": "The cyclist.",
            "criteria": "Names the cyclist", "action": "submit"}  # fmt: skip
    with client(path) as web:
        page = web.get(f"/b/{ann}/item/{items['crossing.png']}").text
        offered = re.findall(r'<optgroup label="([^"]+)">(.*?)</optgroup>', page)
        assert [(d, re.findall(r'value="([^"]+)"', o)) for d, o in offered] == [
            ("Street Life", ["Traffic", "Markets"]),
            ("Wildlife", ["Migration"]),
        ]
        refused = web.post(f"/b/{ann}/task", data={**form, "subdomain": "Retrodiction"})
        assert refused.status_code == 422
        assert "&#x27;Retrodiction&#x27; is not a subdomain of the taxonomy." in refused.text
        assert web.post(f"/b/{ann}/task", data={**form, "subdomain": "Traffic"}).status_code == 303

    street = {"domain": "Street Life"}
    paper_row = task_row("paper", "stall.png")  # Temporal & Causal Dynamics / Retrodiction
    typo_row = task_row("typo", "geese.png", domain="Wildlife", subdomain="Migraton")
    bad = write_tasks(tmp_path / "bad.jsonl", [paper_row, typo_row])
    with pytest.raises(DatasetError) as raised:
        import_tasks(path, bad, "ann", time.time())
    said = str(raised.value)
    assert "task paper: unknown domain 'Temporal & Causal Dynamics'" in said
    assert "unknown subdomain 'Retrodiction'" in said
    assert "task typo: unknown subdomain 'Migraton' (did you mean 'Migration'?)" in said
    good = [task_row("stall", "stall.png", subdomain="Markets", **street),
            task_row("geese", "geese.png", domain="Wildlife", subdomain="Migration")]  # fmt: skip
    imported = import_tasks(path, write_tasks(tmp_path / "good.jsonl", good), "ann", time.time())
    assert len(imported) == 2

    reviewed = []
    for view in store.tasks_of_author(path, "ann"):
        for _ in range(3):
            (slot,) = [s for h in store.histories(path) if h.view.task_id == view.task_id
                       for s in h.reviews if s.verdict is None]  # fmt: skip
            if view.draft.subdomain == "Traffic" and slot.round == 1:
                with client(path) as web:
                    review = web.get(f"/b/{tokens_of_reviewer(tokens, slot.reviewer)}").text
                reviewed.append("<h3>Street Life / Traffic</h3>" in review)
            key = (view.task_id, slot.revision, slot.round)
            assert store.decide(path, slot.reviewer, key, "pass", None, None, 3)
    assert reviewed == [True]  # the authored task's first round, as its reviewer sees it
    out = tmp_path / "release"
    assert main(["build", "export", str(path), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "data" / "test.jsonl").read_text().splitlines()]
    assert sorted((r["domain"], r["subdomain"]) for r in rows) == [
        ("Street Life", "Markets"), ("Street Life", "Traffic"), ("Wildlife", "Migration"),
    ]  # fmt: skip
    card = (out / "README.md").read_text()
    assert "| street | Traffic | 1 | 0 | 1 |" in card
    assert "| wildlife | Migration | 1 | 0 | 1 |" in card
    assert "Retrodiction" not in card and "| taxonomy | the lab's own |" in card


def tokens_of_reviewer(tokens: dict[store.Person, str], name: str) -> str:
    return next(t for p, t in tokens.items() if p.role == "reviewer" and p.name == name)


# ---- in Chromium -------------------------------------------------------------------------


def mute_buttons_shown(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The `display` of every mute button in the players' own controls (their shadow DOM,
    read through Chromium's DevTools protocol)."""
    session = page.context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    nodes, found = [session.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]], []
    while nodes:
        node = nodes.pop()
        nodes += node.get("children", []) + node.get("shadowRoots", [])
        attributes = node.get("attributes", [])
        if "-webkit-media-controls-mute-button" in attributes:
            style = session.send("CSS.getComputedStyleForNode", {"nodeId": node["nodeId"]})
            found += [p["value"] for p in style["computedStyle"] if p["name"] == "display"]
    return found


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_in_chromium_a_reviewer_and_an_author_are_told_what_was_stored(tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    pool = tmp_path / "pool"
    for n, name in enumerate(("a.png", "b.png", "c.png", "d.png", "rooms/kitchen.png")):
        write_image(pool / name, (320 + 16 * n, 200), "PNG")
    write_video_with_sound(pool / "clips" / "sound.mp4", seconds=2.0)
    path, tokens = made(tmp_path, pool)
    ann = tokens[("author", "ann")]
    # four tasks over three reviewers: the fourth goes to one who has one already
    dealt = [submitted(path, name) for name in ("a.png", "b.png", "c.png", "d.png")]
    reviewer = dealt[-1][1]
    first, second = [task for task, name in dealt if name == reviewer]
    shots = (
        Path(os.environ["HSS_TEST_SCREENSHOTS"]) if "HSS_TEST_SCREENSHOTS" in os.environ else None
    )
    clip = next(i for i, _, _ in store.pool_items(path) if i.media_type == "video").item_id
    with (
        served(path, dict(os.environ), command="build") as server,
        playwright.sync_playwright() as driver,
    ):
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        rev = f"{server.base}/b/{tokens[('reviewer', reviewer)]}"

        # an Edit about c2, confirmed on the next page (the reviewer's second task)
        page.goto(rev)
        assert f"{first} on " in page.inner_text("h2")
        page.check("input[name=verdict][value=edit]")
        page.fill("textarea[name=feedback]", "Say which cup.")
        assert page.inner_text("#count-feedback") == "14 of 4,000 characters"  # live
        page.check("input[name=about][value=c2]")
        with page.expect_navigation():
            page.click("text=Record verdict (final)")
        assert f"Your verdict on {first} (round 1): Edit — saved." in page.inner_text(".saved")
        assert f"{second} on " in page.inner_text("h2")
        if shots:
            page.screenshot(path=str(shots / "review-after-verdict.png"), full_page=True)
        page.check("input[name=verdict][value=drop]")
        page.select_option("select[name=reason]", "pure_perception")
        page.fill("textarea[name=feedback]", "A close look at the cup answers it.")
        with page.expect_navigation():
            page.click("text=Record verdict (final)")
        assert "Drop — saved." in page.inner_text(".saved")
        page.click("text=The verdicts you gave (2)")
        rows = [r.split("\t") for r in page.inner_text("table").splitlines()[1:]]
        assert [r[:5] for r in rows] == [
            [first, "1", "1", "Edit", ""], [second, "1", "1", "Drop", rows[1][4]],
        ]  # fmt: skip
        assert rows[0][5] == "c2" and page.locator("form").count() == 0

        # the author: the drop's reason, the Edit's marks
        page.goto(f"{server.base}/b/{ann}")
        assert "dropped in round 1: Pure perception" in page.inner_text("body")
        page.goto(f"{server.base}/b/{ann}/task/{second}")
        note = page.inner_text(".feedback")
        assert "Pure perception" in note and "A close look at the cup answers it." in note
        if shots:
            page.screenshot(path=str(shots / "author-dropped.png"), full_page=True)
        page.goto(f"{server.base}/b/{ann}/task/{first}")
        assert f"c2 {CRITERIA[1]}" in page.inner_text(".feedback")

        # a draft: counted as typed, saved, and given up only when confirmed
        page.goto(f"{server.base}/b/{ann}/item/{clip}")
        page.wait_for_function("document.querySelector('video').readyState >= 1")
        assert mute_buttons_shown(page) and set(mute_buttons_shown(page)) == {"none"}
        page.fill("textarea[name=prompt]", "Où va la balle ?")
        assert page.inner_text("#count-prompt") == "16 of 4,000 characters"
        page.fill("textarea[name=criteria]", "\n".join(f"line {n}" for n in range(21)))
        assert "21 of 20 criteria" in page.inner_text("#count-criteria")
        assert "over" in (page.get_attribute("#count-criteria", "class") or "")
        page.fill("textarea[name=criteria]", "Says where it goes")
        with page.expect_navigation():
            page.click("text=Save draft")
        assert page.inner_text(".saved") == "Draft saved."
        page.once("dialog", lambda dialog: dialog.dismiss())
        page.click("text=Give up this item")
        page.wait_for_timeout(300)
        (draft,) = [t for t in store.tasks_of_author(path, "ann") if t.state == "draft"]
        page.once("dialog", lambda dialog: dialog.accept())
        with page.expect_navigation():
            page.click("text=Give up this item")
        assert store.view_of(path, draft.task_id) is None
        browser.close()
