"""What the model is sent under each condition (paper App. C.2 and C.5).

`hss_input` writes the messages and records in the sample's metadata what was sent
(frame times, hashes, thinning), so a log without images still says what the model saw.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import sys
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
from PIL import Image

from hss_inspect import prompt
from hss_inspect.labeler import require_labeler
from hss_inspect.limits import (
    PART_OVERHEAD_BYTES,
    REQUEST_OVERHEAD_BYTES,
    AppliedLimits,
    applied_limits,
    limits_for,
)
from hss_inspect.media import service
from hss_inspect.media.errors import MediaError
from hss_inspect.media.video import SampledVideo, probe_duration
from hss_inspect.release import Release
from hss_inspect.rows import question_sha256
from hss_inspect.scorer import require_grader
from hss_inspect.settings import DEFAULT_MEDIA, FrameSettings, MediaSettings

NATIVE_VIDEO_FORMATS = {".mp4": "mp4", ".mov": "mov", ".mpeg": "mpeg", ".mpg": "mpeg"}
ORACLE_MODEL_NAME = "hss/oracle"


def require_roles(labeler: bool) -> None:
    """Refuse to start a sample, before any model is called, without the models its
    scorers need: the judge, and the labeller when -T labeler=true."""
    require_grader()
    if labeler:
        require_labeler()


@solver
def hss_input(
    release: Release, media: MediaSettings, condition: str = "standard", labeler: bool = False
) -> Solver:
    """Replace the sample's messages with the HSS user turn for `condition`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_roles(labeler)
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
def oracle_answer(labeler: bool = False) -> Solver:
    """Submit the reference answer as the answer: grades the judge, calls no model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        require_roles(labeler)
        reference = state.metadata["golden_response"]
        state.messages = [ChatMessageUser(content=prompt.question_text(state.metadata["prompt"]))]
        state.output = ModelOutput.from_content(model=ORACLE_MODEL_NAME, content=reference)
        state.messages.append(ChatMessageAssistant(content=reference, model=ORACLE_MODEL_NAME))
        return state

    return solve


async def media_turn(
    release: Release, media: MediaSettings, state: TaskState
) -> tuple[list[Content], dict[str, Any]]:
    return await user_turn_for(release, media, str(state.model), state.metadata)


async def user_turn_for(
    release: Release, media: MediaSettings, model_name: str, meta: dict[str, Any]
) -> tuple[list[Content], dict[str, Any]]:
    """The user turn a sample sends to `model_name`: media prepared under its limits, and
    the record of what was sent (`hss-inspect estimate` builds the same turn)."""
    task_id, media_path = meta["task_id"], meta["media_path"]
    limits = applied_limits(media, model_name)
    path = await service.fetch(
        lambda: release.media_file(media_path, task_id), f"{release.description}/{media_path}"
    )
    try:
        digest = await service.media_sha256(path)
        record: dict[str, Any] = {
            "media_sha256": digest,
            "question_sha256": question_sha256(meta["prompt"], digest),
        }
        native, why_not = native_video_choice(media, limits, model_name, path)
        if meta["media_type"] == "image":
            content, details = await image_content(path, limits, media.media_timeout)
        elif native:
            content, details = await native_video_content(path)
        else:
            frames = frame_settings_for(media, limits)
            budget = frames_budget(limits, frames, meta["prompt"])
            content, details = await frames_content(
                path, frames, budget, media.media_timeout, limits.image_max_raw_bytes
            )
            if why_not:
                details["native_video_declined"] = why_not
    except MediaError as exc:
        raise type(exc)(f"task {task_id}: {exc}; {exc.remedy} ({media_path})") from exc
    content.append(ContentText(text=prompt.question_text(meta["prompt"])))
    payload = payload_size(content)
    return content, {**record, **details, "payload": payload, "limits": limits_record(limits)}


async def local_media(release: Release, state: TaskState) -> Path:
    """The sample's media file on this machine, downloaded once if needed."""
    task_id, media_path = state.metadata["task_id"], state.metadata["media_path"]
    return await service.fetch(
        lambda: release.media_file(media_path, task_id), f"{release.description}/{media_path}"
    )


def frame_settings_for(media: MediaSettings, limits: AppliedLimits) -> FrameSettings:
    """The task's frame settings under the model's image cap and side limits."""
    frames = media.frames
    cap = limits.max_images
    count = min(frames.max_frames, cap) if cap is not None else frames.max_frames
    side = limits.frame_side_for(count, frames.frame_side)
    if cap == frames.max_images and side == frames.frame_side:
        return frames
    return FrameSettings(**{**frames.as_dict(), "max_images": cap, "frame_side": side})


def frames_budget(limits: AppliedLimits, frames: FrameSettings, question: str) -> int:
    """Raw bytes the frames of one request may total: the task's budget, or less when the
    provider's request limit (counted on the encoded payload, text included) is stricter."""
    count = min(frames.max_frames, frames.max_images or frames.max_frames)
    # the note, the labels and the question, counted generously
    text_bytes = 2_000 + count * 40 + len(question.encode())
    return limits.media_raw_budget(count, text_bytes)


def native_video_choice(
    media: MediaSettings, limits: AppliedLimits, model_name: str, path: Path
) -> tuple[bool, str | None]:
    """Whether the clip goes whole, and why not when native video was asked for."""
    wanted = media.native_video == "true" or (
        media.native_video == "auto" and limits.native_video and limits_for(model_name).native_video
    )
    if not wanted:
        return False, None
    if path.suffix.lower() not in NATIVE_VIDEO_FORMATS:
        return False, f"{path.suffix or 'no extension'} is not a format Inspect sends as video"
    if not limits.native_video:
        return False, f"{limits.provider} takes no video through Inspect"
    size = path.stat().st_size
    if size > limits.video_max_bytes:
        return False, (
            f"the clip's {size} bytes exceed the video limit of {limits.video_max_bytes} bytes"
        )
    return True, None


def use_native_video(media: MediaSettings, model_name: str, path: Path) -> bool:
    return native_video_choice(media, applied_limits(media, model_name), model_name, path)[0]


def limits_record(limits: AppliedLimits) -> dict[str, Any]:
    return {
        "provider": limits.provider,
        "model": limits.model,
        "request_max_bytes": limits.request_max_bytes,
        "request_margin": limits.request_margin,
        "max_images": limits.max_images,
        "image_max_raw_bytes": limits.image_max_raw_bytes,
        "image_max_side": limits.image_max_side,
        "image_max_pixels": limits.image_max_pixels,
        "clamped": [asdict(c) for c in limits.clamps],
    }


def payload_size(content: list[Content]) -> dict[str, int]:
    """What the request carries: images, and the bytes of media and text once encoded."""
    media_parts = [c for c in content if isinstance(c, ContentImage | ContentVideo)]
    encoded = sum(len(_uri_of(c)) for c in media_parts)
    text = sum(len(c.text.encode()) for c in content if isinstance(c, ContentText))
    return {
        "images": sum(isinstance(c, ContentImage) for c in content),
        "media_encoded_bytes": encoded,
        "text_bytes": text,
        "estimated_request_bytes": encoded
        + text
        + REQUEST_OVERHEAD_BYTES
        + len(content) * PART_OVERHEAD_BYTES,
    }


def _uri_of(part: ContentImage | ContentVideo) -> str:
    uri = part.image if isinstance(part, ContentImage) else part.video
    return uri.split(",", 1)[1] if uri.startswith("data:") else uri


async def image_content(
    path: Path, limits: AppliedLimits, time_limit: float = DEFAULT_MEDIA.media_timeout
) -> tuple[list[Content], dict[str, Any]]:
    image = await service.image_bytes(
        path,
        limits.image_max_side,
        limits.image_max_raw_bytes,
        time_limit,
        limits.image_max_pixels,
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
        "sha256": hashlib.sha256(image.data).hexdigest(),
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
    max_each: int | None = None,
) -> tuple[list[Content], dict[str, Any]]:
    sampled = await service.video_frames(path, settings, sys.maxsize, time_limit)
    video = await service.video_frames(path, settings, byte_budget, time_limit, max_each)
    content: list[Content] = [ContentText(text=frames_note(video))]
    for timestamp, jpeg in zip(video.timestamps, video.jpegs, strict=True):
        content.append(ContentText(text=prompt.frame_label(timestamp)))
        content.append(ContentImage(image=data_uri(jpeg, "image/jpeg")))
    record = frames_record(video, settings)
    sent_size = jpeg_size(video.jpegs[0]) if video.jpegs else [video.width, video.height]
    record["byte_budget"] = byte_budget
    record["bytes_before_budget"] = sum(len(j) for j in sampled.jpegs)
    record["frame_size_sent"] = sent_size
    record["shrunk_to_budget"] = sent_size != [video.width, video.height]
    return content, record


def jpeg_size(jpeg: bytes) -> list[int]:
    with Image.open(io.BytesIO(jpeg)) as image:
        return [image.width, image.height]


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
        # what `hss-inspect rebuild-frames` checks a rebuild against, frame by frame
        "frame_sha256": [hashlib.sha256(j).hexdigest() for j in video.jpegs],
        "frame_settings": settings.as_dict(),
    }


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
