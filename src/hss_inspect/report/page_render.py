"""The task pages and the failure-example figures as self-contained HTML: the style and a
few lines of script inline, the media as files in the pages' `media/` folder (loaded
lazily), nothing fetched from anywhere else. Everything from a log is escaped here.

A task page: the media as each run was served it (a clip as its strip of frames with
their time labels, each opened large with a click), the question, the reference and the
rubric, then every run's every attempt: its answer (folded when long), each scorer's
verdicts with the judge's justifications, the failure cause, the errors, and a link
that opens the sample in `inspect view`. An example figure follows the paper's layout
(App. E): the media, the question, a failing answer, the reference and the cause, with
how the figure was chosen.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from hss_inspect.grading.causes import taxonomy
from hss_inspect.report.examples import Example
from hss_inspect.report.logs import is_remote
from hss_inspect.report.served_media import Served, differing_settings, settings_of
from hss_inspect.report.task_view import (
    FAIL,
    GRADING_FAILURE,
    PASS,
    Attempt,
    Grading,
    RunAttempts,
    TaskView,
)

# `inspect view`'s own address (its default port) and its route to one sample
VIEW_ADDRESS = "http://127.0.0.1:7575"
# Answers longer than this are folded, their first characters shown
FOLD_CHARACTERS = 1_200
FOLD_LINES = 20
PREVIEW_CHARACTERS = 400
# an attempt's key (log, sample, epoch) -> the media it was served
MediaOf = Mapping[tuple[str, str, int], Served]

_STYLE = """
body{font:15px/1.5 system-ui,sans-serif;color:#222;max-width:80rem;margin:1rem auto;padding:0 1rem}
nav.top{display:flex;gap:1rem;color:#555}h1{font-size:1.4rem;margin:.5rem 0}
h2{font-size:1.15rem;border-bottom:1px solid #ddd;margin-top:2rem}
h3{font-size:1rem;margin:1.5rem 0 .3rem}
.meta{color:#555}.text{white-space:pre-wrap;overflow-wrap:anywhere}
.strip{display:flex;gap:4px;overflow-x:auto;padding-bottom:4px}
.strip a{flex:none;text-decoration:none;color:#444;font-size:.75rem;text-align:center}
.strip img{height:96px;width:auto;display:block;border:1px solid #ccc;background:#eee}
.still img{max-width:100%;height:auto;border:1px solid #ccc;cursor:zoom-in}
video{max-width:100%;max-height:70vh}
.set{margin:.5rem 0 1rem}.note{color:#444;font-size:.9rem}
.warn{background:#fff4e0;border-left:4px solid #e8a33c;padding:.4rem .8rem}
.problem{color:#a00}
table{border-collapse:collapse;font-size:.9rem;margin:.3rem 0}caption{text-align:left;color:#555}
th,td{border-bottom:1px solid #e4e4e4;padding:.2rem .5rem;text-align:left;vertical-align:top}
.attempt{border:1px solid #ddd;border-radius:6px;padding:.5rem .8rem;margin:.6rem 0}
.outcome{font-weight:600;padding:0 .4rem;border-radius:4px}
.pass{color:#145c2c;background:#e3f4e8}.fail{color:#8a1c1c;background:#fbe6e6}
.left-out{color:#6b4a00;background:#fff1cc}.zero{color:#555;background:#eee}
details.long summary{cursor:pointer}details.long[open] .preview{display:none}
details.long summary em{color:#1a5fb4}
figure.example{border:1px solid #ccc;border-radius:6px;padding:.8rem;margin:1.5rem 0}
.columns{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}
figcaption{margin-top:.6rem;color:#333}
dialog{max-width:95vw;max-height:95vh;padding:.5rem}
dialog img{max-width:92vw;max-height:82vh;display:block}
dialog nav{display:flex;gap:.5rem;justify-content:space-between;align-items:center}
"""
# A click on a frame opens it large (arrows step through its strip); without the script
# the link opens the frame's file.
_SCRIPT = """
const v=document.getElementById('viewer');let items=[],at=0;
function show(i){at=(i+items.length)%items.length;const a=items[at];
v.querySelector('img').src=a.getAttribute('href');v.querySelector('span').textContent=a.dataset.label;}
document.addEventListener('click',e=>{const a=e.target.closest('a.open');if(!a)return;
e.preventDefault();items=[...a.closest('.set').querySelectorAll('a.open')];show(items.indexOf(a));v.showModal();});
v.addEventListener('click',e=>{const b=e.target.closest('button');
if(b&&b.dataset.step){show(at+Number(b.dataset.step));}else if(b||e.target===v){v.close();}});
document.addEventListener('keydown',e=>{if(!v.open)return;
if(e.key==='ArrowRight')show(at+1);if(e.key==='ArrowLeft')show(at-1);});
"""
_VIEWER = (
    "<dialog id=viewer><img alt='the frame, large'><nav><button data-step=-1>&larr;</button>"
    "<span></span><button data-step=1>&rarr;</button><button>close</button></nav></dialog>"
)


@dataclass(frozen=True)
class Links:
    """Where a page links to, relative to it: the pages' root (`media/` is under it), the
    report, the examples (None: not written) and each task's page."""

    root: str
    report: str | None
    examples: str | None
    tasks: Mapping[str, str]


def page(title: str, body: str, links: Links) -> str:
    nav = [f'<a href="{_attr(links.report)}">report</a>'] if links.report else []
    if links.examples:
        nav.append(f'<a href="{_attr(links.examples)}">failure examples</a>')
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{_e(title)}</title>"
        '<meta name=viewport content="width=device-width">'
        f"<style>{_STYLE}</style></head><body><nav class=top>{''.join(nav)}</nav>"
        f"{body}{_VIEWER}<script>{_SCRIPT}</script></body></html>\n"
    )


# ---- the task page --------------------------------------------------------------------


def task_page(view: TaskView, media: MediaOf, links: Links) -> str:
    heading = (
        f"<h1>Task {_e(view.task_id)}</h1><p class=meta>{_e(view.subdomain)} · "
        f"{_e(view.domain)} · {_e(view.task.media_type)} · {len(view.runs)} run(s)</p>"
    )
    body = (
        heading
        + "<h2>Media, as the models were served them</h2>"
        + served_sets_html(view, media, links.root)
        + task_text_html(view)
        + "<h2>Answers</h2>"
        + overview_html(view)
        + "".join(run_html(run, index, media) for index, run in enumerate(view.runs))
    )
    return page(f"HSS task {view.task_id}", body, links)


def task_text_html(view: TaskView) -> str:
    criteria = "".join(
        f"<tr><td>{_e(c.id)}</td><td>{_e(c.title)}</td>"
        f"<td>{'' if c.weight is None else f'{c.weight:g}'}</td></tr>"
        for c in view.task.criteria
    )
    differs = (
        f"<p class=warn>Asked otherwise (another question, reference or rubric): "
        f"{_e(', '.join(view.asked_otherwise))}.</p>"
        if view.asked_otherwise
        else ""
    )
    return (
        f"<h2>Question</h2><p class=text>{_e(view.task.question)}</p>"
        f"<h2>Reference answer</h2><p class=text>{_e(view.task.reference)}</p>"
        "<h2>Rubric</h2><table class=rubric><thead><tr><th>id</th><th>criterion</th>"
        f"<th>weight</th></tr></thead><tbody>{criteria}</tbody></table>{differs}"
    )


def served_sets_html(view: TaskView, media: MediaOf, root: str) -> str:
    """Each distinct set of media the task's attempts were served, and to whom; a note
    where the runs were served different ones, naming the settings that differ."""
    groups: dict[str | None, list[tuple[RunAttempts, Attempt]]] = {}
    served: dict[str | None, Served] = {}
    for run in view.runs:
        for attempt in run.attempts:
            found = media[attempt.key]
            groups.setdefault(found.key, []).append((run, attempt))
            served.setdefault(found.key, found)
    differing = differing_settings([a.sent for a in _firsts(groups)])
    warning = ""
    if len(groups) > 1:
        named = f": they differ in {', '.join(differing)}" if differing else ""
        warning = f"<p class=warn>The runs were not all served the same media{named}.</p>"
    sets = [
        _set_html(served[key], members, differing, root, len(groups) > 1)
        for key, members in groups.items()
    ]
    return warning + "".join(sets)


def _firsts(groups: Mapping[str | None, list[tuple[RunAttempts, Attempt]]]) -> list[Attempt]:
    return [members[0][1] for members in groups.values()]


def _set_html(
    served: Served,
    members: Sequence[tuple[RunAttempts, Attempt]],
    differing: Sequence[str],
    root: str,
    several: bool,
) -> str:
    epochs: dict[str, list[int]] = {}
    for run, attempt in members:
        epochs.setdefault(run.name, []).append(attempt.epoch)
    whom = "; ".join(f"{label} ({_attempts(e)})" for label, e in epochs.items())
    values = settings_of(members[0][1].sent)
    shown = ", ".join(f"{name} {values.get(name)}" for name in differing)
    lead = f"Served to {whom}" if several else "Served to every attempt"
    return (
        f"<div class=set data-key='{_attr(served.key or '')}'>"
        f"<p class=meta>{_e(lead)}: {_e(served.summary)}"
        f"{' (' + _e(shown) + ')' if shown else ''}.</p>{media_html(served, root)}</div>"
    )


def _attempts(epochs: Sequence[int]) -> str:
    listed = ", ".join(str(e) for e in sorted(epochs))
    return f"attempt {listed}" if len(epochs) == 1 else f"attempts {listed}"


def media_html(served: Served, root: str) -> str:
    """The media of one set: the note the model read, then the strip of frames (each with
    its label), the image, or the clip; why not, when the files could not be made."""
    note = f"<p class=note>{_e(served.note)}</p>" if served.note else ""
    if served.problem:
        return f"{note}<p class=problem>The media cannot be shown: {_e(served.problem)}</p>"
    width, height = served.size or (0, 0)
    size = f" width={width} height={height}" if served.size else ""
    if served.kind == "frames":
        frames = "".join(
            f'<a class=open href="{_attr(root + path)}" data-label="{_attr(label)}">'
            f'<img loading=lazy decoding=async src="{_attr(root + path)}"{size} '
            f'alt="{_attr(label)}"><span>{_e(label)}</span></a>'
            for path, label in zip(served.files, served.labels, strict=True)
        )
        return f"{note}<div class=strip>{frames}</div>"
    if served.kind == "image" and served.files:
        path = _attr(root + served.files[0])
        return (
            f'{note}<div class=still><a class=open href="{path}" data-label="the image as sent">'
            f'<img loading=lazy src="{path}"{size} alt="the image as sent"></a></div>'
        )
    if served.kind == "native_video" and served.files:
        return (
            f'{note}<video controls preload=metadata src="{_attr(root + served.files[0])}"></video>'
        )
    return f"<p class=note>{_e(served.summary)}</p>"


def overview_html(view: TaskView) -> str:
    """One line per run: each attempt's outcome under its first scorer, and the cause."""
    rows = []
    for index, run in enumerate(view.runs):
        marks = " ".join(_outcome_html(a.gradings[0]) for a in run.attempts if a.gradings)
        causes = ", ".join(dict.fromkeys(a.label.cause for a in run.attempts if a.label))
        judge = run.attempts[0].gradings[0].record.judge if run.attempts[0].gradings else ""
        rows.append(
            f'<tr><td><a href="#run-{index}">{_e(run.name)}</a></td><td>{_e(judge)}</td>'
            f"<td>{marks}</td><td>{_e(causes)}</td></tr>"
        )
    return (
        "<table class=overview><thead><tr><th>run</th><th>judge</th><th>attempts</th>"
        f"<th>failure cause</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def run_html(run: RunAttempts, index: int, media: MediaOf) -> str:
    folder, _ = log_location(run.info.log)
    return (
        f"<section class=run id=run-{index}><h3>{_e(run.name)}</h3>"
        f"<p class=meta>log {_e(run.info.log)} · to open its attempts in inspect view, run "
        f"<code>inspect view --log-dir {_e(folder)}</code> and follow the links</p>"
        + "".join(attempt_html(a, media[a.key]) for a in run.attempts)
        + "</section>"
    )


def attempt_html(attempt: Attempt, served: Served) -> str:
    first = attempt.gradings[0] if attempt.gradings else None
    outcome = first.outcome if first else "not graded"
    rubric = (
        f" · rubric {first.record.rubric:.2f}" if first and first.record.rubric is not None else ""
    )
    cause = _cause_line(attempt)
    error = f"<p class=problem>Error: {_e(attempt.error)}</p>" if attempt.error else ""
    return (
        f'<article class=attempt data-log="{_attr(attempt.log)}" data-epoch={attempt.epoch} '
        f'data-outcome="{_attr(outcome)}" data-media="{_attr(served.key or "")}">'
        f"<p><b>Attempt {attempt.epoch}</b> "
        f"{_outcome_html(first) if first else ''}{_e(rubric)}"
        f'{" · " + cause if cause else ""} · <a class=view href="{_attr(view_link(attempt))}">'
        f"open in inspect view</a></p>"
        f"{answer_html(attempt.answer)}{error}"
        + "".join(grading_html(g) for g in attempt.gradings)
        + _label_html(attempt)
        + "</article>"
    )


def _outcome_html(grading: Grading) -> str:
    outcome = grading.outcome
    css = {PASS: "pass", FAIL: "fail"}.get(outcome, "zero" if grading.record.graded else "left-out")
    return f"<span class='outcome {css}'>{_e(outcome)}</span>"


def _cause_line(attempt: Attempt) -> str:
    if attempt.label is None:
        return ""
    family = f" ({attempt.label.family})" if attempt.label.family else ""
    return f"cause: <b>{_e(attempt.label.cause)}</b>{_e(family)}"


def _label_html(attempt: Attempt) -> str:
    if attempt.label is None or not attempt.label.explanation:
        return ""
    return f"<p class=meta>The labeller: {_e(attempt.label.explanation)}</p>"


def answer_html(text: str) -> str:
    """The answer as written (escaped, its line breaks kept); folded when long."""
    if not text.strip():
        return "<p class=meta>(no answer text)</p>"
    if len(text) <= FOLD_CHARACTERS and text.count("\n") < FOLD_LINES:
        return f"<div class='answer text'>{_e(text)}</div>"
    preview = text[:PREVIEW_CHARACTERS].rstrip()
    return (
        f"<details class=long><summary><span class='preview text'>{_e(preview)}…</span> "
        f"<em>show all {len(text):,} characters</em></summary>"
        f"<div class='answer text'>{_e(text)}</div></details>"
    )


def grading_html(grading: Grading) -> str:
    """One scorer's verdicts with the judge's justifications; for an attempt the judge
    did not grade, the scorer's explanation (a grading failure, a provider error, no
    answer) as it is."""
    record = grading.record
    if not grading.verdicts:
        return f"<p class=meta>{_e(record.scorer)}: {_e(grading.explanation)}</p>" + _replies_html(
            grading
        )
    caption = f"{record.scorer}: judged by {record.judge} · {grading.outcome}"
    rows = "".join(
        f"<tr class=verdict data-scorer='{_attr(record.scorer)}' data-criterion='{_attr(v.id)}' "
        f"data-met='{str(v.met).lower()}'><td>{_e(v.id)}</td>"
        f"<td class={'pass' if v.met else 'fail'}>{'met' if v.met else 'not met'}</td>"
        f"<td>{_e(v.justification)}</td></tr>"
        for v in grading.verdicts
    )
    comment = f"<p class=meta>The judge: {_e(grading.comment)}</p>" if grading.comment else ""
    return (
        f"<table class=verdicts><caption>{_e(caption)}</caption><thead><tr><th>criterion</th>"
        f"<th>verdict</th><th>the judge's justification</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>{comment}"
    )


def _replies_html(grading: Grading) -> str:
    """The judge's replies to an attempt it left ungraded, as it wrote them."""
    if grading.outcome != GRADING_FAILURE or not grading.replies:
        return ""
    replies = "".join(f"<li class=text>{_e(reply)}</li>" for reply in grading.replies)
    summary = f"The judge's replies ({len(grading.replies)})"
    return f"<details><summary>{summary}</summary><ol>{replies}</ol></details>"


def log_location(log: str) -> tuple[str, str]:
    """A log's folder (what `inspect view --log-dir` takes) and its name within it."""
    if is_remote(log):
        folder, _, name = log.rpartition("/")
        return folder, name
    path = PurePosixPath(log.replace("\\", "/"))
    return str(path.parent), path.name


def view_link(attempt: Attempt) -> str:
    """The sample in `inspect view --log-dir <its log's folder>`, at Inspect's own route."""
    _, name = log_location(attempt.log)
    sample = quote(attempt.sample_id, safe="")
    return f"{VIEW_ADDRESS}/#/logs/{quote(name)}/samples/sample/{sample}/{attempt.epoch}/"


# ---- the failure examples -------------------------------------------------------------


def examples_page(
    examples: Sequence[Example], views: Mapping[str, TaskView], media: MediaOf, links: Links
) -> str:
    figures = "".join(
        example_figure(number, example, views[example.task_id], media, links)
        for number, example in enumerate(examples, start=1)
        if example.task_id in views
    )
    body = (
        "<h1>Failure examples</h1><p class=meta>As the paper's App. E shows them: the media "
        "the model was served, the question, a failing answer, the reference and the "
        "cause. Each subdomain's examples are the tasks the most runs failed for the same "
        "cause (the first attempt of each run); the caption says how many.</p>" + figures
    )
    return page("HSS failure examples", body, links)


def example_figure(
    number: int, example: Example, view: TaskView, media: MediaOf, links: Links
) -> str:
    shown = _shown_attempt(example, view)
    served = media.get(shown[1].key) if shown else None
    answer = ""
    if shown:
        run, attempt = shown
        outcome = attempt.gradings[0].outcome if attempt.gradings else "not graded"
        answer = (
            f"<p><b>The answer of {_e(run.name)}</b> (attempt {attempt.epoch}, {_e(outcome)})"
            f"</p>{answer_html(attempt.answer)}"
        )
    page_link = links.tasks.get(example.task_id)
    every = f' <a href="{_attr(page_link)}">Every run\'s answers</a>.' if page_link else ""
    return (
        f"<figure class=example id='example-{_attr(example.task_id)}' "
        f"data-task='{_attr(example.task_id)}'><div class=columns>"
        f"<div class=set>{media_html(served, links.root) if served else ''}</div><div>"
        f"<p><b>Question</b></p><p class=text>{_e(view.task.question)}</p>{answer}"
        f"<p><b>Reference answer</b></p><p class=text>{_e(view.task.reference)}</p>"
        f"{_cause_html(example)}</div></div>"
        f"<figcaption>Figure {number}: failure example, {_e(view.subdomain)} "
        f"(task {_e(example.task_id)}). <span class=how>{_e(example.how_chosen)}</span>."
        f"{every}</figcaption></figure>"
    )


def _shown_attempt(example: Example, view: TaskView) -> tuple[RunAttempts, Attempt] | None:
    record = example.shown
    for run in view.runs:
        for attempt in run.attempts:
            if record and attempt.log == record.log and attempt.epoch == record.epoch:
                return run, attempt
    return None


def _cause_html(example: Example) -> str:
    if example.cause is None:
        return ""
    causes = taxonomy()
    if example.cause in causes.ids:
        named = f"{causes.name_of(example.cause)} ({causes.family_of(example.cause)})"
    else:
        named = example.cause
    return f"<p><b>Cause</b></p><p>{_e(example.cause)}: {_e(named)}</p>"


def _e(text: str) -> str:
    return html.escape(text, quote=False)


def _attr(text: str) -> str:
    return html.escape(text, quote=True)
