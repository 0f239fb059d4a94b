"""A release and logs in the shape of a Table 1 run, for the report's benchmarks.

The release: 522 tasks over the eleven subdomains, 234 of them clips of 500 frames (251 s
at 2 fps, 720p, a smooth scene panning) and the rest photographs, the media shared among
the tasks (a few clips and images, each task naming one). The logs: what `inspect eval
hss_inspect/hss --no-log-images -T labeler=true` writes, through Inspect's log API: each
sample's metadata with its row and its real `sent_media` record (made by the package's
own user turn, which also fills the media cache), the user turn's text with the images
removed, the answer, the judge's verdicts with one-sentence justifications and its
reply, and the labeller's cause on each failed first attempt.

The first task of each subdomain (`t0000` ... `t0010`) is its systematic failure: every
run fails its first attempt for one cause; the others fail at random for random causes.
Each of those eleven has media of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score
from PIL import Image

from benchmarks.clips import X264
from hss_inspect.conditions import prompt
from hss_inspect.conditions.solver import frames_received
from hss_inspect.conditions.turn import user_turn_for
from hss_inspect.core.settings import FrameSettings, MediaSettings
from hss_inspect.core.taxonomy import DOMAINS
from hss_inspect.data.release import open_release
from hss_inspect.data.rows import Criterion, TaskRow, question_sha256, row_record
from hss_inspect.grading.causes import taxonomy
from hss_inspect.grading.labeler import label_value
from hss_inspect.grading.metrics import attempt_value

TASKS, CLIP_TASKS = 522, 234
CLIPS, IMAGES = 6, 5  # the eleven systematic failures' media, each its own
MODEL_OF_RUNS = "openai/gpt-test"  # limits as OpenAI's (1,500 images a request)
JUDGE = "anthropic/claude-judge"
SUBDOMAINS = [(d.name, s.name) for d in DOMAINS for s in d.subdomains]
_WORDS = [
    "the",
    "ball",
    "the",
    "shadow",
    "a",
    "door",
    "behind",
    "left",
    "right",
    "moves",
    "falls",
    "rolls",
    "waits",
    "looks",
]


def _text(seed: int | str, characters: int) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < characters:
        words.append(rng.choice(_WORDS))
    return " ".join(words).capitalize() + "."


def winner(index: int) -> bool:
    return index < len(SUBDOMAINS)


def task_rows(tasks: int = TASKS, clip_tasks: int = CLIP_TASKS) -> list[TaskRow]:
    """The release's rows: subdomains in turn; the systematic failures (the first of each
    subdomain) on media of their own, clips for every other subdomain; the other clips
    and images shared round the rest."""
    rows = []
    others_video = clip_tasks - (len(SUBDOMAINS) + 1) // 2
    for index in range(tasks):
        sub = index % len(SUBDOMAINS)
        domain, subdomain = SUBDOMAINS[sub]
        if winner(index):
            video, media = sub % 2 == 0, sub // 2
        else:
            video = index - len(SUBDOMAINS) < others_video
            media = index % (CLIPS if video else IMAGES)
        criteria = 1 if index % 10 < 7 else 2 + index % 3  # most tasks carry one criterion
        rows.append(
            TaskRow(
                task_id=f"t{index:04d}",
                domain=domain,
                subdomain=subdomain,
                media_type="video" if video else "image",
                media_path=f"media/clip_{media}.mp4" if video else f"media/image_{media}.jpg",
                prompt=_text(index, 320) + " What happens next, and why?",
                golden_response=_text(index + 10_000, 600),
                criteria=tuple(
                    Criterion(f"c{c + 1}", _text(index * 10 + c, 90)) for c in range(criteria)
                ),
            )
        )
    return rows


def write_release(folder: Path, rows: Sequence[TaskRow], clip_seconds: int = 251) -> Path:
    """The rows and their media under `folder` (the clips encoded once, then kept)."""
    media = folder / "media"
    media.mkdir(parents=True, exist_ok=True)
    for index in range(CLIPS):
        path = media / f"clip_{index}.mp4"
        if not path.exists():
            write_scene(path.with_suffix(".partial.mp4"), index, clip_seconds)
            path.with_suffix(".partial.mp4").rename(path)
    for index in range(IMAGES):
        path = media / f"image_{index}.jpg"
        if not path.exists():
            rng = np.random.default_rng(index)
            coarse = rng.integers(0, 255, (150, 200, 3), dtype=np.uint8)
            picture = Image.fromarray(coarse).resize((1600 + 32 * index, 1200), Image.BICUBIC)
            picture.save(path, quality=90)
    (folder / "data").mkdir(exist_ok=True)
    lines = [json.dumps(row_record(row)) for row in rows]
    (folder / "data" / "test.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def write_scene(path: Path, seed: int, seconds: int = 251, fps: int = 2) -> None:
    """A 720p clip of a smooth scene panning (frames of some 60 kB at 768 px, as a
    film's are, so 500 of them fit the frames' byte budget as they are)."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 255, (24, 64, 3), dtype=np.uint8)
    scene = np.asarray(Image.fromarray(coarse).resize((2560, 720), Image.BICUBIC))
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps, options=dict(X264))
        stream.width, stream.height, stream.pix_fmt = 1280, 720, "yuv420p"
        for index in range(seconds * fps):
            offset = (index * 5) % 1280
            pixels = np.ascontiguousarray(scene[:, offset : offset + 1280])
            container.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        container.mux(stream.encode())


def sent_records(
    release: Path, rows: Sequence[TaskRow], caps: Sequence[int]
) -> dict[tuple[str, int], dict[str, Any]]:
    """The `sent_media` record of each media file at each frame cap, made by the
    package's own user turn (which fills the media cache on the way)."""
    opened = open_release(str(release), "main")
    firsts = {row.media_path: row for row in rows}

    async def made() -> dict[tuple[str, int], dict[str, Any]]:
        found = {}
        for media_path, row in sorted(firsts.items()):
            for cap in caps if row.media_type == "video" else caps[:1]:
                media = MediaSettings(frames=FrameSettings(max_frames=cap))
                meta = row.sample_metadata()
                _, record = await user_turn_for(opened, media, MODEL_OF_RUNS, meta)
                found[(media_path, cap)] = record
        return found

    return asyncio.run(made())


@dataclass(frozen=True)
class RunShape:
    """One run: its model, frame cap, epochs, and the chance an attempt passes."""

    model: str
    max_frames: int = 500
    epochs: int = 3
    pass_rate: float = 0.35
    seed: int = 0


def write_run(
    path: Path,
    release: Path,
    rows: Sequence[TaskRow],
    records: dict[tuple[str, int], dict[str, Any]],
    shape: RunShape,
) -> str:
    causes = [c.id for c in taxonomy().causes]
    rng = random.Random(shape.seed)
    samples = []
    for index, row in enumerate(rows):
        for epoch in range(1, shape.epochs + 1):
            if winner(index) and epoch == 1:
                passed, cause = False, causes[index % len(causes)]
            else:
                passed, cause = rng.random() < shape.pass_rate, rng.choice(causes)
            cap = shape.max_frames if row.media_type == "video" else 500
            record = dict(records[(row.media_path, cap)])
            record["question_sha256"] = question_sha256(row.prompt, record["media_sha256"])
            samples.append(
                _sample(row, epoch, record, passed, cause if epoch == 1 else None, shape)
            )
    log = EvalLog(
        status="success",
        eval=EvalSpec(
            created="2026-11-29T20:00:00+00:00",
            task="hss_inspect/hss",
            task_id=path.stem,
            eval_id=path.stem,
            dataset=EvalDataset(
                name="HSS", samples=len(rows), sample_ids=[r.task_id for r in rows]
            ),
            model=shape.model,
            model_generate_config=GenerateConfig(reasoning_effort="high"),
            model_roles={"grader": ModelConfig(model=JUDGE), "labeler": ModelConfig(model=JUDGE)},
            config=EvalConfig(epochs=shape.epochs),
            metadata={
                "hss_condition": "standard",
                "hss_media_settings": {"frames": {"max_frames": shape.max_frames}},
                "hss_dataset_requested": {"dataset": str(release), "revision": "main"},
            },
        ),
        samples=samples,
    )
    write_eval_log(log, str(path))
    return str(path)


def _sample(
    row: TaskRow,
    epoch: int,
    record: dict[str, Any],
    passed: bool,
    cause: str | None,
    shape: RunShape,
) -> EvalSample:
    answer = _text(f"{row.task_id}-{epoch}-{shape.seed}", 1_500)
    verdicts = [
        {"id": c.id, "met": passed, "justification": _text(i + len(answer), 140)}
        for i, c in enumerate(row.criteria)
    ]
    scores = {
        "rubric_judge": Score(
            value=attempt_value(passed=float(passed), rubric=float(passed)),
            answer=answer,
            explanation="| id | criterion | verdict | justification |",
            metadata={
                "judge_model": JUDGE,
                "judge_config": {},
                "judge_prompt_sha256": "0" * 64,
                "judge_attempts": 1,
                "judge_replies": [json.dumps({"criteria": verdicts, "overall_comment": "ok"})],
                "judge_problems": [],
                "rubric_sha256": row.rubric_sha256,
                "verdicts": verdicts,
                "missing_verdicts": [],
                "unexpected_verdicts": [],
                "overall_comment": _text(epoch, 120),
                "answer_usage": {"output_tokens": 900, "reasoning_tokens": 600},
            },
        )
    }
    if cause is not None and not passed:
        causes = taxonomy()
        scores["failure_cause"] = Score(
            value=label_value(causes, cause),
            answer=answer,
            explanation=f"{causes.name_of(cause)} ({causes.family_of(cause)}): " + _text(3, 200),
            metadata={
                "cause": cause,
                "family": causes.family_of(cause),
                "labeler_attempts": 1,
                "labeler_replies": [json.dumps({"cause": cause, "explanation": "x"})],
                "labeler_problems": [],
                "labeler_prompt_sha256": "0" * 64,
                "taxonomy_version": causes.version,
                "labeler_model": JUDGE,
            },
        )
    metadata = {
        **row.sample_metadata(),
        "sent_media": record,
        "frames_received": frames_received(record),
        "cache_plan": {"strategy": "off"},
    }
    return EvalSample(
        id=row.task_id,
        epoch=epoch,
        input=row.prompt,
        target=row.golden_response,
        uuid=f"{shape.seed}-{row.task_id}-{epoch}",
        metadata=metadata,
        messages=[
            ChatMessageUser(content=_turn(record, row)),
            ChatMessageAssistant(content=answer),
        ],
        output=ModelOutput.from_content(shape.model, answer),
        scores=scores,
        model_usage={shape.model: ModelUsage(input_tokens=200_000, output_tokens=900)},
    )


def _turn(record: dict[str, Any], row: TaskRow) -> list[Content]:
    """The user turn as a log without images keeps it: the notes and labels, the images
    replaced by Inspect's marker."""
    removed = "<base64-data-removed>"
    if record["kind"] == "image":
        parts: list[Content] = [ContentText(text=prompt.IMAGE_NOTE), ContentImage(image=removed)]
    else:
        parts = [ContentText(text="frames")]
        for time in record["timestamps"]:
            parts += [ContentText(text=prompt.frame_label(time)), ContentImage(image=removed)]
    return [*parts, ContentText(text=prompt.question_text(row.prompt))]


def shape_logs(
    folder: Path,
    shapes: Sequence[RunShape],
    tasks: int = TASKS,
    clip_tasks: int = CLIP_TASKS,
    clip_seconds: int = 251,
) -> tuple[Path, list[str]]:
    """The release and one log per run shape under `folder` (kept between runs: the clips
    and logs are made once)."""
    rows = task_rows(tasks, clip_tasks)
    release = write_release(folder / "release", rows, clip_seconds)
    caps = sorted({s.max_frames for s in shapes}, reverse=True)
    shape = [tasks, clip_tasks, caps, clip_seconds]
    digest = hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:8]
    logs, records = [], None
    for shape in shapes:
        name = f"{shape.model.replace('/', '_')}-{shape.max_frames}-{shape.epochs}-{digest}.eval"
        path = folder / "logs" / name
        if not path.exists():
            records = records or sent_records(release, rows, caps)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_run(path, release, rows, records, shape)
        logs.append(str(path))
    if records is None:  # the logs were kept: the media cache is filled all the same
        sent_records(release, rows, caps)
    return release, logs
