"""The build's pages, rendered on the server on the shared chrome of `web.pages`: the author's
home (their tasks, with the feedback of those returned, and the pool: what is free and what
is taken), the authoring form beside the three principles, and the reviewer's page (the
task, its media, its check flags, the verdict form, their progress). Everything a person
typed is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hss_inspect.construction.pool import PoolItem
from hss_inspect.construction.rules import OTHER_REASON, rules
from hss_inspect.construction.store import Flag, PoolPage, ReviewSlot, TaskView
from hss_inspect.core.taxonomy import DOMAINS
from hss_inspect.web.media import ShownFrames
from hss_inspect.web.pages import ONCE, escape, media_html, page

STYLE = """
.cols{display:grid;grid-template-columns:minmax(0,3fr) minmax(14rem,1fr);gap:1.5rem}
aside{background:#f6f6f2;padding:.5rem 1rem;border-radius:4px;font-size:.92rem}
label{display:block;margin:.6rem 0}select,input[type=text]{font:inherit;max-width:100%}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2rem .6rem;
text-align:left}.state{color:#555}.feedback,.flag{background:#fff4d6;padding:.5rem;
border-left:4px solid #e0a800}.flag.quiet{background:#eef4ee;border-color:#7a7}
button{font:inherit;margin-right:.5rem}
"""
# Longest feedback or reason a reviewer may write (kept in the form when refused).
FEEDBACK_MAX_CHARS = 4_000


def principles_aside() -> str:
    items = "".join(
        f"<li><b>{escape(p.label)}</b>: {escape(p.text)}</li>" for p in rules().principles
    )
    return f"<aside><h3>Every task meets three principles</h3><ol>{items}</ol></aside>"


def header(role: str, name: str, right: str) -> str:
    return (
        f"<header><span>HSS build: {escape(role)} {escape(name)}</span>"
        f"<span>{escape(right)}</span></header>"
    )


# ---- authors -----------------------------------------------------------------------------


def author_home(
    base: str,
    name: str,
    tasks: Sequence[TaskView],
    pool: PoolPage,
    shown: str,
    notes: Mapping[str, str] | None = None,
) -> str:
    returned = [t for t in tasks if t.state == "returned"]
    drafts = [t for t in tasks if t.state == "draft"]
    others = [t for t in tasks if t.state not in ("returned", "draft")]
    taken = pool.items - pool.free
    parts = [header("author", name, f"{taken} of {pool.items} pool items taken")]
    if returned:
        parts.append("<h2>Returned to you for revision</h2>" + task_list(base, returned))
    parts.append("<h2>Your drafts</h2>" + (task_list(base, drafts) if drafts else "<p>None.</p>"))
    if others:
        parts.append("<h2>Submitted</h2>" + task_list(base, others))
    parts.append(
        f"<h2>The media pool</h2><p>{pool.free} free of {pool.items}. {pool_choice(base, shown)}"
        f"</p>{pool_table(base, name, pool.rows, notes)}{pager(base, shown, pool)}"
    )
    return page(f"HSS build: {name}", "".join(parts), STYLE)


# Pool items an author's home lists a page (a pool of 10,000 on one page is megabytes).
POOL_ROWS = 200


def pool_choice(base: str, shown: str) -> str:
    """Links to list the free items, or all of them (free first)."""
    names = {"free": "the free items", "all": "all items, free first"}
    return "Listed: " + ", ".join(
        f"<b>{text}</b>" if key == shown else f'<a href="{base}?pool={key}">{text}</a>'
        for key, text in names.items()
    )


def pager(base: str, shown: str, pool: PoolPage) -> str:
    """Where the page's rows sit among those listed, and links to the pages around it."""
    if pool.listed <= POOL_ROWS:
        return ""
    last = pool.first + len(pool.rows)
    links = [
        f'<a href="{base}?pool={shown}&amp;from={start}">{text}</a>'
        for start, text in ((max(0, pool.first - POOL_ROWS), "previous"), (last, "next"))
        if start != pool.first and start < pool.listed
    ]
    return f"<p>{pool.first + 1}-{last} of {pool.listed}. {' '.join(links)}</p>"


def task_list(base: str, tasks: Sequence[TaskView]) -> str:
    rows = "".join(
        f'<tr><td><a href="{base}/task/{escape(t.task_id)}">{escape(t.task_id)}</a></td>'
        f"<td>{escape(t.item.media_type)}</td><td>{escape(t.draft.prompt[:90] or '(no question)')}"
        f"</td><td class=state>{escape(state_text(t))}</td></tr>"
        for t in tasks
    )
    return f"<table>{rows}</table>"


def state_text(task: TaskView) -> str:
    if task.state == "review":
        return f"in review (round {task.round} of {rules().rounds})"
    if task.state == "returned":
        return "returned: revise and submit" if task.submitted else "revision saved, not sent"
    return {"draft": "draft", "admitted": "admitted", "dropped": "dropped"}[task.state]


def pool_table(
    base: str,
    name: str,
    pool: Sequence[tuple[PoolItem, str | None, str | None]],
    notes: Mapping[str, str] | None = None,
) -> str:
    rows = []
    for item, task_id, author in pool:
        if task_id is None:
            status = "free"
        elif author == name:
            status = f"yours ({task_id})"
        else:
            status = "taken"
        link = f'<a href="{base}/item/{escape(item.item_id)}">{escape(item.item_id)}</a>'
        rows.append(
            f"<tr><td>{link}</td><td>{escape(item.path)}</td><td>{escape(item.media_type)}</td>"
            f"<td>{item.bytes / 1e6:.1f} MB</td><td class=state>{escape(status)}</td>"
            f"{duplicate_cell(notes, item.item_id)}</tr>"
        )
    return f"<table>{''.join(rows)}</table>"


def duplicate_cell(notes: Mapping[str, str] | None, item_id: str) -> str:
    """The near-duplicates of a pool item (`construction.duplicates`), if it has any."""
    note = (notes or {}).get(item_id, "")
    return f"<td class=duplicate>{escape(note)}</td>" if note else ""


def duplicate_note(note: str) -> str:
    return f"<p class=flag>{escape(note)}</p>" if note else ""


def subdomain_select(chosen: str) -> str:
    groups = []
    for domain in DOMAINS:
        options = "".join(
            f'<option value="{escape(s.name)}"{" selected" if s.name == chosen else ""}>'
            f"{escape(s.name)}</option>"
            for s in domain.subdomains
        )
        groups.append(f'<optgroup label="{escape(domain.name)}">{options}</optgroup>')
    empty = "" if chosen else " selected"
    return (
        "<label>Domain and subdomain<br><select name=subdomain>"
        f'<option value=""{empty}>choose one</option>{"".join(groups)}</select></label>'
    )


def authoring_page(
    base: str,
    name: str,
    item: PoolItem,
    task: TaskView | None,
    frames: ShownFrames | None,
    opened_at: float,
    problems: Sequence[str] = (),
    kept: dict[str, str] | None = None,
    note: str = "",
) -> str:
    """The form for one item: new, a draft, or a task returned with its feedback; `note`
    says what the item nearly repeats."""
    draft = task.draft if task else None
    values = kept or {
        "subdomain": draft.subdomain if draft else "",
        "prompt": draft.prompt if draft else "",
        "reference": draft.reference if draft else "",
        "criteria": "\n".join(draft.titles) if draft else "",
    }
    title = task.task_id if task else f"new task on {item.item_id}"
    feedback = ""
    if task and task.state == "returned" and task.feedback:
        notes = "".join(f"<p>{escape(text)}</p>" for text in task.feedback)
        feedback = f"<div class=feedback><b>Returned with this feedback:</b>{notes}</div>"
    errors = "".join(f"<p class=error>{escape(p)}</p>" for p in problems)
    give_up = (
        "<button type=submit name=action value=release formnovalidate>Give up this item</button>"
        if task and task.state == "draft" and not task.submitted
        else ""
    )
    form = (
        f'<form method=post action="{base}/task" {ONCE}>'
        f'<input type=hidden name=item_id value="{escape(item.item_id)}">'
        f'<input type=hidden name=task_id value="{escape(task.task_id if task else "")}">'
        f'<input type=hidden name=opened_at value="{opened_at:.3f}">'
        f"{subdomain_select(values['subdomain'])}"
        "<label>Question, as the model will be asked it<br>"
        f"<textarea name=prompt>{escape(values['prompt'])}</textarea></label>"
        "<label>Reference answer<br>"
        f"<textarea name=reference>{escape(values['reference'])}</textarea></label>"
        "<label>Rubric: one criterion a line, each checkable on its own against the "
        "reference answer; an answer passes only when it meets all of them<br>"
        f"<textarea name=criteria>{escape(values['criteria'])}</textarea></label>"
        "<p><button type=submit name=action value=save>Save draft</button>"
        "<button type=submit name=action value=submit>Submit for review</button>"
        f"{give_up}</p></form>"
    )
    main = (
        f'<p><a href="{base}">back to your tasks and the pool</a></p><h2>{escape(title)}</h2>'
        f"{media_html(base, item.item_id, item.media_type, frames)}{duplicate_note(note)}"
        f"{feedback}{errors}{form}"
    )
    body = header("author", name, item.item_id) + (
        f"<div class=cols><div>{main}</div>{principles_aside()}</div>"
    )
    return page(f"HSS build: {title}", body, STYLE)


def read_only_page(
    base: str,
    name: str,
    item: PoolItem,
    heading: str,
    frames: ShownFrames | None,
    text: str = "",
    note: str = "",
) -> str:
    """An item as an author sees it without a form: taken by another author, or their own
    task once submitted (`text`: the task, with where it stands in `heading`)."""
    body = (
        f"{header('author', name, item.item_id)}"
        f'<p><a href="{base}">back to your tasks and the pool</a></p><h2>{escape(heading)}</h2>'
        f"{media_html(base, item.item_id, item.media_type, frames)}{duplicate_note(note)}{text}"
    )
    return page(f"HSS build: {heading}", body, STYLE)


def task_text(task: TaskView) -> str:
    criteria = "".join(
        f"<li><code>{escape(c.id)}</code> {escape(c.title)}</li>" for c in task.draft.criteria
    )
    return (
        f"<h3>{escape(task.draft.domain)} / {escape(task.draft.subdomain)}</h3>"
        f"<h3>Question</h3><p>{escape(task.draft.prompt)}</p>"
        f"<h3>Reference answer</h3><p>{escape(task.draft.reference)}</p>"
        f"<h3>Rubric</h3><ol>{criteria}</ol>"
    )


# ---- reviewers ---------------------------------------------------------------------------


def review_page(
    base: str,
    name: str,
    slot: ReviewSlot,
    task: TaskView,
    flags: Sequence[Flag],
    frames: ShownFrames | None,
    decided: int,
    dealt: int,
    problem: str = "",
    kept: dict[str, str] | None = None,
    own: str = "",
) -> str:
    """One round of one task: the task as authored (after `own`, the reviewer's blind
    answer, in a build that asks for one), its checks, the verdict form."""
    progress = f"review {decided + 1} of {dealt} dealt to you"
    error = f"<p class=error>{escape(problem)}</p>" if problem else ""
    main = (
        f"<h2>{escape(task.task_id)}: round {slot.round} of {rules().rounds}</h2>"
        f"{media_html(base, task.item.item_id, task.item.media_type, frames)}{own}{task_text(task)}"
        f"{flags_html(flags)}{error}{verdict_form(base, slot, kept or {})}"
    )
    body = header("reviewer", name, progress) + (
        f"<div class=cols><div>{main}</div>{principles_aside()}</div>"
    )
    return page(f"HSS build: review {decided + 1} of {dealt}", body, STYLE)


def flags_html(flags: Sequence[Flag]) -> str:
    if not flags:
        return "<p class=state>No automatic check has been run on this revision.</p>"
    shown = sorted(flags, key=lambda f: not f.flagged)
    items = "".join(
        f'<p class="flag{"" if f.flagged else " quiet"}">{escape(f.detail)}</p>' for f in shown
    )
    return (
        "<h3>Automatic checks</h3><p class=state>Findings to weigh, not verdicts: the "
        f"verdict is yours.</p>{items}"
    )


def verdict_form(base: str, slot: ReviewSlot, kept: dict[str, str]) -> str:
    verdicts = "".join(
        f'<label><input type=radio name=verdict value="{key}" required'
        f"{' checked' if kept.get('verdict') == key else ''}> {escape(text)}</label>"
        for key, text in rules().verdicts.items()
    )
    reasons = "".join(
        f'<option value="{escape(r.key)}"{" selected" if kept.get("reason") == r.key else ""}>'
        f"{escape(r.label)}</option>"
        for r in rules().drop_reasons
    )
    return (
        f'<form method=post action="{base}/verdict" {ONCE}>'
        f'<input type=hidden name=task_id value="{escape(slot.task_id)}">'
        f'<input type=hidden name=revision value="{slot.revision}">'
        f'<input type=hidden name=round value="{slot.round}">'
        f"<h3>Your verdict</h3>{verdicts}"
        "<label>Feedback for the author (needed for Edit)<br>"
        f"<textarea name=feedback>{escape(kept.get('feedback', ''))}</textarea></label>"
        "<label>Reason to drop (needed for Drop)<br><select name=reason>"
        f'<option value="">choose one</option>{reasons}</select></label>'
        f"<label>Say what (for {escape(OTHER_REASON)})<br>"
        f'<input type=text name=other size=60 value="{escape(kept.get("other", ""))}"></label>'
        "<p><button type=submit>Record verdict (final)</button></p></form>"
    )


def no_review_page(name: str, decided: int, dealt: int) -> str:
    body = header("reviewer", name, f"{decided} of {dealt} decided") + (
        "<h2>No review waiting for you</h2><p>More may be dealt to you as tasks pass "
        "earlier rounds or come back revised: reload this page later.</p>"
    )
    return page("HSS build: nothing to review", body, STYLE)
