"""The build's pages, rendered on the server on the shared chrome of `web.pages`: the author's
home (their tasks, with the feedback of those returned, and the pool: what is free and what
is taken), the authoring form beside the three principles, and the reviewer's page (the
task, its media, its check flags, the verdict form, their progress). Everything a person
typed is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hss_inspect.construction.authoring import (
    MAX_CRITERIA,
    MAX_CRITERION_CHARS,
    MAX_QUESTION_CHARS,
    MAX_REFERENCE_CHARS,
)
from hss_inspect.construction.pool import PoolItem
from hss_inspect.construction.rules import OTHER_REASON, rules
from hss_inspect.construction.store import Flag, PoolPage, ReviewSlot, TaskView
from hss_inspect.core.taxonomy import Taxonomy
from hss_inspect.web.media import ShownFrames
from hss_inspect.web.pages import ONCE, escape, media_html, page

STYLE = """
.cols{display:grid;grid-template-columns:minmax(0,3fr) minmax(14rem,1fr);gap:1.5rem}
aside{background:#f6f6f2;padding:.5rem 1rem;border-radius:4px;font-size:.92rem}
label{display:block;margin:.6rem 0}select,input[type=text]{font:inherit;max-width:100%}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.2rem .6rem;
text-align:left}.state{color:#555}.feedback,.flag{background:#fff4d6;padding:.5rem;
border-left:4px solid #e0a800}.flag.quiet{background:#eef4ee;border-color:#7a7}
button{font:inherit;margin-right:.5rem}.count{display:block;color:#555;font-size:.85rem}
.count.over{color:#a00;font-weight:600}.saved{background:#eef4ee;padding:.5rem;
border-left:4px solid #7a7}ul.rubric{list-style:none;padding-left:0}
label.mark{display:inline-block;margin:.2rem 1rem .2rem 0}
"""
# Counts what a limited field holds as it is typed (the server counts the same: code
# points, a line break sent as two characters); the limits are also in the labels, for a
# page without script.
COUNT_SCRIPT = r"""<script>
function hssCount(t){const o=document.getElementById('count-'+t.name);
const n=s=>[...s.replace(/\r?\n/g,'\r\n')].length,f=x=>x.toLocaleString('en-US');
if(t.dataset.lines){const l=t.value.split('\n').filter(x=>x.trim());
const m=Math.max(0,...l.map(x=>[...x.trim()].length)),L=+t.dataset.lines,C=+t.dataset.limit;
o.textContent=f(l.length)+' of '+L+' criteria; longest '+f(m)+' of '+f(C)+' characters';
o.classList.toggle('over',l.length>L||m>C)}else{const c=n(t.value),L=+t.dataset.limit;
o.textContent=f(c)+' of '+f(L)+' characters';o.classList.toggle('over',c>L)}}
document.querySelectorAll('textarea[data-limit]').forEach(t=>{
t.addEventListener('input',()=>hssCount(t));hssCount(t)});
</script>"""
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
    if task.state == "dropped" and task.drop is not None:
        return f"dropped in round {task.drop.round}: {reason_text(task.drop.reason)}"
    return {"draft": "draft", "admitted": "admitted", "dropped": "dropped"}[task.state]


def reason_text(reason: str | None) -> str:
    """A stored reason to drop in the rules' words (`other: ...` with the reviewer's own)."""
    if reason is None:
        return "no reason stored"
    key, _, words = reason.partition(": ")
    known = rules().reason(key)
    if known is None:
        return reason
    return f"{known.label.split(' (')[0]}: {words}" if key == OTHER_REASON else known.label


def verdict_name(verdict: str) -> str:
    """ "Pass", "Edit", "Drop": the verdict's text up to its colon, in the rules' words."""
    return rules().verdicts[verdict].split(":")[0]


def drop_note(task: TaskView) -> str:
    """Why a dropped task was dropped, for its author: the reason and the reviewer's note."""
    drop = task.drop
    if drop is None:
        return ""
    note = f"<p>{escape(drop.feedback)}</p>" if drop.feedback else ""
    return (
        f"<div class=feedback><b>Dropped in review round {drop.round} of {rules().rounds} "
        f"(revision {drop.revision}):</b><p>{escape(reason_text(drop.reason))}</p>{note}</div>"
    )


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


def subdomain_select(chosen: str, taxonomy: Taxonomy) -> str:
    """The build's taxonomy to choose from: its subdomains, grouped by domain."""
    groups = []
    for domain in taxonomy.domains:
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
    notice: str = "",
    *,
    taxonomy: Taxonomy,
) -> str:
    """The form for one item: new, a draft, or a task returned with its feedback (and the
    criteria it is about); `note` says what the item nearly repeats, `notice` what was
    just stored; the subdomains offered are the build's `taxonomy`."""
    draft = task.draft if task else None
    values = kept or {
        "subdomain": draft.subdomain if draft else "",
        "prompt": draft.prompt if draft else "",
        "reference": draft.reference if draft else "",
        "criteria": "\n".join(draft.titles) if draft else "",
    }
    title = task.task_id if task else f"new task on {item.item_id}"
    feedback = returned_note(task) if task else ""
    errors = "".join(f"<p class=error>{escape(p)}</p>" for p in problems)
    errors += f"<p class=saved role=status>{escape(notice)}</p>" if notice else ""
    give_up = give_up_button() if task and task.state == "draft" and not task.submitted else ""
    form = (
        f'<form method=post action="{base}/task" {ONCE}>'
        f'<input type=hidden name=item_id value="{escape(item.item_id)}">'
        f'<input type=hidden name=task_id value="{escape(task.task_id if task else "")}">'
        f'<input type=hidden name=opened_at value="{opened_at:.3f}">'
        f"{subdomain_select(values['subdomain'], taxonomy)}"
        + limited_text(
            "Question, as the model will be asked it", "prompt", values, MAX_QUESTION_CHARS
        )
        + limited_text("Reference answer", "reference", values, MAX_REFERENCE_CHARS)
        + "<label>Rubric: one criterion a line, each checkable on its own against the "
        "reference answer; an answer passes only when it meets all of them (up to "
        f"{MAX_CRITERIA} criteria of {MAX_CRITERION_CHARS:,} characters each)<br>"
        f'<textarea name=criteria data-limit="{MAX_CRITERION_CHARS}" '
        f'data-lines="{MAX_CRITERIA}">{escape(values["criteria"])}</textarea>'
        f"<small class=count id=count-criteria aria-live=polite></small></label>"
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
    return page(f"HSS build: {title}", body + COUNT_SCRIPT, STYLE)


def limited_text(label: str, name: str, values: dict[str, str], limit: int) -> str:
    """A text field with its limit in its label and a count of what it holds, kept as typed
    (a text over the limit is refused on saving, never cut)."""
    text = values.get(name, "")
    count = f"{len(text):,} of {limit:,} characters"
    return (
        f"<label>{escape(label)} (up to {limit:,} characters)<br>"
        f'<textarea name={name} data-limit="{limit}">{escape(text)}</textarea>'
        f"<small class=count id=count-{name} aria-live=polite>{count}</small></label>"
    )


def returned_note(task: TaskView) -> str:
    """A returned task's feedback, with the criteria the Edit marked."""
    if task.state != "returned" or not task.feedback:
        return ""
    notes = "".join(f"<p>{escape(text)}</p>" for text in task.feedback)
    titles = {c.id: c.title for c in task.draft.criteria}
    marked = "".join(
        f"<li><code>{escape(c)}</code> {escape(titles.get(c, '(no longer in the rubric)'))}</li>"
        for c in task.about
    )
    about = f"<p>About these criteria:</p><ul class=rubric>{marked}</ul>" if marked else ""
    return f"<div class=feedback><b>Returned with this feedback:</b>{notes}{about}</div>"


def give_up_button() -> str:
    """Give up asks first: with script, a dialog (its yes sent as `confirm`); without, the
    server answers with `give_up_page`."""
    ask = "Give up this item? Your draft is deleted and the item is free for others."
    return (
        "<input type=hidden name=confirm value=''>"
        "<button type=submit name=action value=release formnovalidate "
        f"onclick=\"if(!confirm('{ask}'))return false;this.form.confirm.value='yes'\">"
        "Give up this item</button>"
    )


def give_up_page(base: str, name: str, task: TaskView, kept: dict[str, str]) -> str:
    """Asks before a draft is deleted; "keep" saves what the form held, so nothing typed
    is lost either way."""
    hidden = "".join(
        f'<input type=hidden name={key} value="{escape(value)}">'
        for key, value in {
            "item_id": task.item.item_id, "task_id": task.task_id, **kept,
        }.items()
    )  # fmt: skip
    body = header("author", name, task.item.item_id) + (
        f"<h2>Give up {escape(task.task_id)}?</h2><p>The draft on {escape(task.item.item_id)} "
        "is deleted and the item is free for other authors. This cannot be undone.</p>"
        f'<form method=post action="{base}/task" {ONCE}>{hidden}'
        "<input type=hidden name=confirm value=yes>"
        "<button type=submit name=action value=release>Yes, give up this item</button>"
        "<button type=submit name=action value=save>No, keep the draft</button></form>"
    )
    return page(f"HSS build: give up {task.task_id}?", body, STYLE)


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


def task_text(task: TaskView, taxonomy: Taxonomy) -> str:
    criteria = "".join(
        f"<li><code>{escape(c.id)}</code> {escape(c.title)}</li>" for c in task.draft.criteria
    )  # the ids alone number the criteria: a list without numbers of its own
    return (
        f"<h3>{escape(taxonomy.domain_of(task.draft.subdomain))} / "
        f"{escape(task.draft.subdomain)}</h3>"
        f"<h3>Question</h3><p>{escape(task.draft.prompt)}</p>"
        f"<h3>Reference answer</h3><p>{escape(task.draft.reference)}</p>"
        f"<h3>Rubric</h3><ul class=rubric>{criteria}</ul>"
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
    confirmed: str = "",
    *,
    taxonomy: Taxonomy,
) -> str:
    """One round of one task: the task as authored (its item named by id; after `own`, the
    reviewer's blind answer, in a build that asks for one), its checks, the verdict form;
    `confirmed` says which verdict was just stored."""
    error = f"<p class=error>{escape(problem)}</p>" if problem else ""
    content = (
        f"{media_html(base, task.item.item_id, task.item.media_type, frames)}{own}"
        f"{task_text(task, taxonomy)}{flags_html(flags)}{error}"
        f"{verdict_form(base, slot, task, kept or {})}"
    )
    return round_page(base, name, slot, task.item.item_id, (decided, dealt), confirmed, content)


def round_page(
    base: str,
    name: str,
    slot: ReviewSlot,
    item_id: str,
    counts: tuple[int, int],
    confirmed: str,
    content: str,
    style: str = STYLE,
) -> str:
    """A page of a round dealt to a reviewer: the verdict just stored (`confirmed`), the
    round's task and item by id, `content`, the principles beside it, the reviewer's
    progress (`counts`: decided, dealt) and a link to the verdicts they gave."""
    decided, dealt = counts
    main = (
        f"{confirmed}<h2>{escape(slot.task_id)} on {escape(item_id)}: round {slot.round} of "
        f"{rules().rounds}</h2>{content}"
    )
    body = (
        header("reviewer", name, f"review {decided + 1} of {dealt} dealt to you")
        + verdicts_link(base, decided)
        + f"<div class=cols><div>{main}</div>{principles_aside()}</div>"
    )
    return page(f"HSS build: review {decided + 1} of {dealt}", body + COUNT_SCRIPT, style)


def verdicts_link(base: str, decided: int) -> str:
    return f'<p><a href="{base}/verdicts">The verdicts you gave ({decided})</a></p>'


def confirmation(slot: ReviewSlot) -> str:
    """The verdict just stored, as the store holds it."""
    return (
        f"<p class=saved role=status>Your verdict on {escape(slot.task_id)} (round "
        f"{slot.round}): {escape(verdict_name(slot.verdict or ''))} — saved.</p>"
    )


def verdicts_page(base: str, name: str, given: Sequence[tuple[ReviewSlot, tuple[str, ...]]]) -> str:
    """The verdicts a reviewer gave, to read: a verdict is final (Sec. 2.4)."""
    rows = "".join(
        f"<tr><td>{escape(slot.task_id)}</td><td>{slot.revision}</td><td>{slot.round}</td>"
        f"<td>{escape(verdict_name(slot.verdict or ''))}</td>"
        f"<td>{escape(reason_text(slot.reason) if slot.verdict == 'drop' else '')}</td>"
        f"<td>{escape(', '.join(about))}</td><td>{escape(slot.feedback or '')}</td></tr>"
        for slot, about in given
    )
    head = (
        "<tr><th>task</th><th>revision</th><th>round</th><th>verdict</th><th>reason</th>"
        "<th>criteria marked</th><th>feedback</th></tr>"
    )
    table = f"<table>{head}{rows}</table>" if given else "<p>None yet.</p>"
    body = header("reviewer", name, f"{len(given)} verdict(s) given") + (
        f'<p><a href="{base}">back to your reviews</a></p><h2>The verdicts you gave</h2>'
        "<p class=state>To read only: a verdict is final once given.</p>" + table
    )
    return page("HSS build: your verdicts", body, STYLE)


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


def verdict_form(base: str, slot: ReviewSlot, task: TaskView, kept: dict[str, str]) -> str:
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
        + limited_text(
            "Feedback for the author (needed for Edit)", "feedback", kept, FEEDBACK_MAX_CHARS
        )
        + criteria_marks(task, kept.get("about", ""))
        + "<label>Reason to drop (needed for Drop)<br><select name=reason>"
        f'<option value="">choose one</option>{reasons}</select></label>'
        f"<label>Say what (for {escape(OTHER_REASON)})<br>"
        f'<input type=text name=other size=60 value="{escape(kept.get("other", ""))}"></label>'
        "<p><button type=submit>Record verdict (final)</button></p></form>"
    )


def criteria_marks(task: TaskView, kept: str) -> str:
    """A box a criterion, for an Edit to say which criteria it is about (`kept`: the ids
    ticked when the form was refused, space-separated)."""
    ticked = set(kept.split())
    boxes = "".join(
        f'<label class=mark><input type=checkbox name=about value="{escape(c.id)}"'
        f"{' checked' if c.id in ticked else ''}> <code>{escape(c.id)}</code></label>"
        for c in task.draft.criteria
    )
    return f"<p>An Edit is about these criteria (optional; the author sees them):<br>{boxes}</p>"


def no_review_page(base: str, name: str, decided: int, dealt: int, confirmed: str = "") -> str:
    body = header("reviewer", name, f"{decided} of {dealt} decided") + (
        f"{verdicts_link(base, decided)}{confirmed}"
        "<h2>No review waiting for you</h2><p>More may be dealt to you as tasks pass "
        "earlier rounds or come back revised: reload this page later.</p>"
    )
    return page("HSS build: nothing to review", body, STYLE)
