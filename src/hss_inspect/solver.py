"""What the model is sent under each condition (HSS_PROTOCOL.md sections 2 and 3).

`hss_input` writes the messages and records in the sample's metadata what was sent
(frame times, hashes, thinning), so a log without images still says what the model saw.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import asdict
from pathlib import Path
from typing import Any

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    ContentVideo,
    ModelOutput,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from hss_inspect import prompt
from hss_inspect.config import limits_for
from hss_inspect.media import service
from hss_inspect.media.errors import MediaError
from hss_inspect.media.video import SampledVideo, probe_duration
from hss_inspect.release import Release
from hss_inspect.rows import question_sha256
from hss_inspect.scorer import require_grader
from hss_inspect.settings import DEFAULT_MEDIA, FrameSettings, MediaSettings

NATIVE_VIDEO_FORMATS = {".mp4": "mp4", ".mov": "mov", ".mpeg": "mpeg", ".mpg": "mpeg"}
ORACLE_MODEL_NAME = "hss/oracle"


@solver
def hss_input(release: Release, media: MediaSettings, condition: str = "standard") -> Solver:
    """Replace the sample's messages with the HSS user turn for `condition`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_grader()
        if condition == "blind":
            state.messages = [
                ChatMessageSystem(content=prompt.BLIND_SYSTEM_MESSAGE),
                ChatMessageUser(content=prompt.question_text(state.metadata["prompt"])),
            ]
            state.metadata["sent_media"] = {"kind": "none"}
            return state
        content, record = await media_turn(release, media, state)
        state.messages = [ChatMessageUser(content=content)]
        state.metadata["sent_media"] = record
        return state

    return solve


@solver
def oracle_answer() -> Solver:
    """Submit the reference answer as the answer: grades the judge, calls no model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_grader()
        reference = state.metadata["golden_response"]
        state.messages = [ChatMessageUser(content=prompt.question_text(state.metadata["prompt"]))]
        state.output = ModelOutput.from_content(model=ORACLE_MODEL_NAME, content=reference)
        state.messages.append(ChatMessageAssistant(content=reference, model=ORACLE_MODEL_NAME))
        return state

    return solve


async def media_turn(
    release: Release, media: MediaSettings, state: TaskState
) -> tuple[list[Content], dict[str, Any]]:
    meta = state.metadata
    task_id, media_path = meta["task_id"], meta["media_path"]
    path = await local_media(release, state)
    try:
        digest = await service.media_sha256(path)
        record: dict[str, Any] = {
            "media_sha256": digest,
            "question_sha256": question_sha256(meta["prompt"], digest),
        }
        if meta["media_type"] == "image":
            content, details = await image_content(path, media)
        elif use_native_video(media, str(state.model), path):
            content, details = await native_video_content(path)
        else:
            frames = frame_settings_for(media, str(state.model))
            content, details = await frames_content(
                path, frames, media.frame_bytes_budget, media.media_timeout
            )
    except MediaError as exc:
        raise type(exc)(f"task {task_id}: {exc}; {exc.remedy} ({media_path})") from exc
    content.append(ContentText(text=prompt.question_text(meta["prompt"])))
    return content, {**record, **details}


async def local_media(release: Release, state: TaskState) -> Path:
    """The sample's media file on this machine, downloaded once if needed."""
    task_id, media_path = state.metadata["task_id"], state.metadata["media_path"]
    return await service.fetch(
        lambda: release.media_file(media_path, task_id), f"{release.description}/{media_path}"
    )


def frame_settings_for(media: MediaSettings, model_name: str) -> FrameSettings:
    """The task's frame settings, with the model's image cap when none was given."""
    if media.frames.max_images is not None:
        return media.frames
    cap = limits_for(model_name).max_images
    if cap is None:
        return media.frames
    return FrameSettings(**{**media.frames.as_dict(), "max_images": cap})


def use_native_video(media: MediaSettings, model_name: str, path: Path) -> bool:
    if media.native_video == "false" or path.suffix.lower() not in NATIVE_VIDEO_FORMATS:
        return False
    if path.stat().st_size > media.native_video_max_bytes:
        return False
    return media.native_video == "true" or limits_for(model_name).native_video


async def image_content(path: Path, media: MediaSettings) -> tuple[list[Content], dict[str, Any]]:
    image = await service.image_bytes(
        path, media.image_max_side, media.image_max_bytes, media.media_timeout
    )
    content: list[Content] = [
        ContentText(text=prompt.IMAGE_NOTE),
        ContentImage(image=data_uri(image.data, image.mime)),
    ]
    details = {
        "kind": "image",
        "width": image.width,
        "height": image.height,
        "bytes": len(image.data),
        "original_bytes": image.original_bytes,
        "reencoded": image.reencoded,
    }
    return content, details


async def native_video_content(path: Path) -> tuple[list[Content], dict[str, Any]]:
    duration = await asyncio.to_thread(probe_duration, path)
    data = await asyncio.to_thread(path.read_bytes)
    video_format = NATIVE_VIDEO_FORMATS[path.suffix.lower()]
    content: list[Content] = [
        ContentText(text=prompt.native_video_note(duration)),
        ContentVideo(video=data_uri(data, f"video/{video_format}"), format=video_format),  # type: ignore[arg-type]
    ]
    return content, {"kind": "native_video", "duration": duration, "bytes": len(data)}


async def frames_content(
    path: Path,
    settings: FrameSettings,
    byte_budget: int,
    time_limit: float = DEFAULT_MEDIA.media_timeout,
) -> tuple[list[Content], dict[str, Any]]:
    video = await service.video_frames(path, settings, byte_budget, time_limit)
    content: list[Content] = [ContentText(text=frames_note(video))]
    for timestamp, jpeg in zip(video.timestamps, video.jpegs, strict=True):
        content.append(ContentText(text=prompt.frame_label(timestamp)))
        content.append(ContentImage(image=data_uri(jpeg, "image/jpeg")))
    return content, frames_record(video, settings)


def frames_note(video: SampledVideo) -> str:
    return prompt.frames_note(
        frame_count=len(video.jpegs),
        effective_fps=video.effective_fps,
        duration=video.duration,
        timestamps=video.timestamps,
        thinned_from=video.planned_frames if video.thinned else None,
    )


def frames_record(video: SampledVideo, settings: FrameSettings) -> dict[str, Any]:
    return {
        "kind": "frames",
        "frame_count": len(video.jpegs),
        "planned_frames": video.planned_frames,
        "thinned": video.thinned,
        "effective_fps": video.effective_fps,
        "duration": video.duration,
        "timestamps": list(video.timestamps),
        "source_times": list(video.source_times),
        "frame_size": [video.width, video.height],
        "rotation": video.rotation,
        # Declared duration, decodable span and slots lost when the clip's data ends early.
        "truncation": asdict(video.truncation) if video.truncation else None,
        "bytes": sum(len(j) for j in video.jpegs),
        "frame_settings": settings.as_dict(),
    }


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
