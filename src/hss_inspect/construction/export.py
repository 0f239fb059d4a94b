"""A build's admitted tasks as a release folder (the hub release's own layout and field
names): `data/test.jsonl`, the media under `media/`, `checksums.sha256` and a dataset card
(`README.md`) with the YAML header the hub's dataset viewer and `datasets.load_dataset`
read; every file carries the build's canary GUID (`canary`). The rows are written by
`data.rows.row_record`, the inverse of the release's reader, so what is written here reads
back through the same code as the release."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hss_inspect.construction.authoring import SETTING as TAXONOMY
from hss_inspect.construction.authoring import build_taxonomy, draft_row
from hss_inspect.construction.canary import SETTING as CANARY
from hss_inspect.construction.canary import canary_text, mark_media
from hss_inspect.construction.funnel import Funnel
from hss_inspect.construction.funnel_report import STAGE_HEADER, stage_rows, summary_line
from hss_inspect.construction.pool import PoolItem, media_type_of
from hss_inspect.construction.rules import rules
from hss_inspect.construction.store import TaskView
from hss_inspect.construction.versions import (
    Changelog,
    Version,
    changelog,
    funnel_record,
    versions_lines,
)
from hss_inspect.core.errors import InputError
from hss_inspect.core.markdown import table
from hss_inspect.core.taxonomy import MEDIA_TYPES, Taxonomy
from hss_inspect.data.fingerprints import TaskPrint
from hss_inspect.data.release import ROWS_FILE, LocalRelease, fingerprints_of
from hss_inspect.data.rows import TaskRow, row_record
from hss_inspect.media.facts import remembered_sha256
from hss_inspect.web.media import remux_without_audio

CHECKSUMS_FILE = "checksums.sha256"
CARD_FILE = "README.md"


@dataclass(frozen=True)
class Written:
    rows: list[TaskRow]
    media_bytes: int
    prints: dict[str, TaskPrint] = field(default_factory=dict)  # of the files as released
    changes: Changelog | None = None
    funnel: dict[str, Any] = field(default_factory=dict)  # as the version keeps it


@dataclass(frozen=True)
class History:
    """What a versioned export needs of the build: its version, the versions before it, the
    retired tasks and the errata (`versions`)."""

    version: str
    earlier: list[Version]
    retired: dict[str, tuple[str, str]]
    errata: dict[str, str]


def release_rows(tasks: Sequence[tuple[TaskView, PoolItem]], taxonomy: Taxonomy) -> list[TaskRow]:
    """Each task at its latest revision as a row, its media at `media/<pool path>`."""
    return [
        draft_row(view.task_id, item.media_type, f"media/{item.path}", view.draft, taxonomy)
        for view, item in tasks
    ]


def write_release(
    tasks: Sequence[tuple[TaskView, PoolItem]],
    pool: Path,
    out: Path,
    place: Callable[[Path, Path], None],
    taxonomy: Taxonomy,
    canary: str | None = None,
) -> Written:
    """Rows and media (each placed by `place(source, target)`: copied, or linked for a
    check) in a new folder, in the build's `taxonomy`; each row with the `canary` field
    when one is given."""
    if out.exists() and any(out.iterdir()):
        raise InputError(f"--out {out}: the folder is not empty; give a new one")
    rows = release_rows(tasks, taxonomy)
    (out / "data").mkdir(parents=True, exist_ok=True)
    extra = {CANARY: canary} if canary else {}
    lines = [json.dumps(row_record(row) | extra, ensure_ascii=False) + "\n" for row in rows]
    (out / ROWS_FILE).write_text("".join(lines), encoding="utf-8")
    size = 0
    for (_, item), row in zip(tasks, rows, strict=True):
        target = out / row.media_path
        target.parent.mkdir(parents=True, exist_ok=True)
        place(pool / item.path, target)
        size += target.stat().st_size
    return Written(rows, size)


def copy_file(source: Path, target: Path) -> None:
    shutil.copy2(source, target)


def copy_as_reviewed(source: Path, target: Path) -> None:
    """A file of the release as its reviewers were shown it: an image as it is, a clip
    without its audio track (a remux of its video packets, not a re-encode): the pages
    serve clips silent, so a track nobody reviewed is never released."""
    if media_type_of(source) == "video":
        remux_without_audio(source, target)
    else:
        copy_file(source, target)


def link_file(source: Path, target: Path) -> None:
    """A link where the file system allows one, else a copy."""
    try:
        os.symlink(source.resolve(), target)
    except OSError:
        shutil.copy2(source, target)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(out: Path, rows: Sequence[TaskRow], canary: str) -> None:
    """`sha256sum -c` reads it: the rows file, then each media file (after a comment line
    with the canary, which it skips)."""
    files = [ROWS_FILE, *sorted({row.media_path for row in rows})]
    lines = [f"# {canary_text(canary)}\n"]
    lines += [f"{sha256_of(out / name)}  {name}\n" for name in files]
    (out / CHECKSUMS_FILE).write_text("".join(lines), encoding="utf-8")


def export_release(
    tasks: Sequence[tuple[TaskView, PoolItem]],
    pool: Path,
    out: Path,
    funnel: Funnel,
    settings: dict[str, Any],
    title: str,
    baseline: Sequence[str] = (),
    history: History | None = None,
) -> Written:
    """The release folder, its card with the split's own human baseline when the build
    measured one (`baseline`: `blind.baseline_lines`) and, for a version (`history`), its
    changelog against the version before, from the fingerprints of the files as written."""
    if not tasks:
        raise InputError(
            "no task is admitted yet: nothing to export (`hss-inspect build status` shows "
            "where the tasks stand)"
        )
    canary = str(settings[CANARY])
    written = write_release(tasks, pool, out, copy_as_reviewed, build_taxonomy(settings), canary)
    for media_path in sorted({row.media_path for row in written.rows}):
        mark_media(out / media_path, canary)
    write_checksums(out, written.rows, canary)
    prints = fingerprints_of(LocalRelease(out / ROWS_FILE, out), written.rows, remembered_sha256)
    kept = funnel_record(funnel, len(written.rows), len(history.retired) if history else 0)
    changes = None
    versioned: list[str] = []
    if history is not None:
        before = history.earlier[-1] if history.earlier else None
        changes = changelog(history.version, before, prints, history.retired, history.errata)
        versioned = versions_lines(history.earlier, changes, kept)
    card = dataset_card(written.rows, funnel, settings, title, baseline, versioned)
    (out / CARD_FILE).write_text(card, encoding="utf-8")
    return Written(written.rows, written.media_bytes, prints, changes, kept)


def card_header(title: str, tasks: int) -> str:
    """The YAML the hub reads: the test split in `data/test.jsonl`."""
    size = "n<1K" if tasks < 1000 else "1K<n<10K"
    return (
        "---\n"
        f"pretty_name: {json.dumps(title)}\n"
        "configs:\n"
        "- config_name: default\n"
        "  data_files:\n"
        "  - split: test\n"
        f"    path: {ROWS_FILE}\n"
        "task_categories:\n- visual-question-answering\n"
        "tags:\n- hss\n- hss-inspect\n- intuitive-visual-reasoning\n"
        f"size_categories:\n- {size}\n"
        "---\n"
    )


def taxonomy_rows(rows: Sequence[TaskRow], taxonomy: Taxonomy) -> list[list[str]]:
    counts = Counter((row.domain, row.subdomain, row.media_type) for row in rows)
    lines = []
    for domain in taxonomy.domains:
        for sub in domain.subdomains:
            per_media = [counts[(domain.name, sub.name, m)] for m in MEDIA_TYPES]
            lines.append([domain.label, sub.name, *map(str, per_media), str(sum(per_media))])
    return lines


def dataset_card(
    rows: Sequence[TaskRow],
    funnel: Funnel,
    settings: dict[str, Any],
    title: str,
    baseline: Sequence[str] = (),
    versioned: Sequence[str] = (),
) -> str:
    criteria = sum(len(row.criteria) for row in rows)
    single = sum(len(row.criteria) == 1 for row in rows)
    exported = datetime.now(tz=timezone.utc).isoformat(timespec="seconds")
    principles = "\n".join(
        f"{n}. **{p.label}**: {p.text}" for n, p in enumerate(rules().principles, start=1)
    )
    body = [
        f"# {title}",
        f"{len(rows)} tasks in the format of Humanity's Sixth Sense (HSS, arXiv 2610.08966): "
        "each an image or a video clip, a question, a reference answer and atomic rubric "
        f"criteria ({criteria} in all; {single} tasks carry exactly one). Built with "
        "`hss-inspect build`: authored from a media pool and admitted only after "
        f"{rules().rounds} independent review rounds, as the paper built its release "
        "(Sec. 2.3, 2.4).",
        "## Evaluate",
        "```bash\ninspect eval hss_inspect/hss -T dataset=<this folder or hub id> "
        "--model <model> --model-role grader=<judge>\n```",
        "## Principles every task meets (Sec. 2.3)",
        principles,
        "## The funnel (Fig. 8)",
        table(STAGE_HEADER, stage_rows(funnel)),
        summary_line(funnel),
        *(["## Versions", "\n".join(versioned)] if versioned else []),
        *baseline_section(baseline),
        "## Tasks by domain, subdomain and media",
        table(
            ["domain", "subdomain", *MEDIA_TYPES, "tasks"],
            taxonomy_rows(rows, build_taxonomy(settings)),
        ),
        "## How it was built",
        table(["setting", "value"], settings_rows(settings, funnel, exported)),
        *reviewed_view_lines(settings, rows),
        f"`{CHECKSUMS_FILE}` holds the SHA-256 of the rows file and of every media file "
        f"(`sha256sum -c {CHECKSUMS_FILE}`).",
        "## Canary",
        canary_section(str(settings[CANARY])),
    ]
    return card_header(title, len(rows)) + "\n" + "\n\n".join(body) + "\n"


def reviewed_view_lines(settings: dict[str, Any], rows: Sequence[TaskRow]) -> list[str]:
    """What reviewers were shown of the clips, where it is not the clip as released."""
    if not any(row.media_type == "video" for row in rows):
        return []
    lines = [
        "Each clip is released without its audio track, as the review pages played it: the "
        "track was never reviewed, and the tasks are about what is seen."
    ]
    if settings["view"] == "frames":
        media = settings["media"]
        lines.append(
            "Reviewers judged each clip by the frames a model is sent (`--view frames`: "
            f"fps {media['fps']}, max_frames {media['max_frames']}, frame_side "
            f"{media['frame_side']}), not by the clip played: what happens between those "
            "frames was not reviewed."
        )
    return lines


def canary_section(guid: str) -> str:
    return (
        f"Canary GUID `{guid}`. Every file of this release holds it: this card, each row of "
        f"`{ROWS_FILE}` (its `{CANARY}` field), `{CHECKSUMS_FILE}`, and each image and clip "
        "(as a comment or container metadata; no pixel or frame changed). It is there to "
        "keep the split out of training data: search a training corpus for the GUID to find "
        "whether the split leaked into it, and drop every document holding it before "
        f"training, as with BIG-bench's canary.\n\n> {canary_text(guid)}"
    )


def baseline_section(lines: Sequence[str]) -> list[str]:
    """The split's own human baseline (a build made with `--blind-answers`), else nothing."""
    if not lines:
        return []
    how = (
        "Each review round opened with the media and the question alone: the reviewer wrote "
        "their own answer, stored before the reference answer and the rubric were shown, and "
        "the judge graded it against the task's rubric as it grades a model's answer "
        "(`hss_human`). pass@1 is over the admitted tasks, each the mean of its answers; the "
        "interval resamples tasks: the measure of the paper's human baseline (Sec. 3.1)."
    )
    return ["## Human baseline (principle 3, measured blind)", how, *lines]


def settings_rows(settings: dict[str, Any], funnel: Funnel, exported: str) -> list[list[str]]:
    return [
        ["media pool", Path(str(settings["pool"])).name],
        ["authors", str(len(funnel.authors))],
        ["reviewers", str(len(funnel.reviewers))],
        ["review rounds", str(rules().rounds)],
        ["what reviewers saw", str(settings["view"])],
        ["blind answers in review", "yes" if settings.get("blind_answers") else "no"],
        ["taxonomy", "the lab's own" if TAXONOMY in settings else "the paper's (Sec. 2.4)"],
        ["seed (the dealing of reviews)", str(settings["seed"])],
        ["build made", str(settings["created"])],
        ["exported", exported],
    ]
