"""The user turn of a sample (paper App. C.2): its media prepared under the model's limits,
frames fitted to its token budget, the notes and labels around them, the question, and
the record of what was sent.

The standard and agentic conditions send this turn; `hss-inspect estimate` builds the same
turn to size a run before anything is sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
from dataclasses import asdict
from pathlib import Path
from typing import Any

from inspect_ai.model import Content, ContentImage, ContentText, ContentVideo
from inspect_ai.solver import TaskState
from PIL import Image

from hss_inspect.conditions import prompt
from hss_inspect.core.command_line import prepare_command
from hss_inspect.core.options import option_values
from hss_inspect.core.settings import DEFAULT_MEDIA, FrameSettings, MediaSettings
from hss_inspect.data.release import Release
from hss_inspect.data.rows import question_sha256
from hss_inspect.media import service
from hss_inspect.media.errors import MediaError, MediaTimeout
from hss_inspect.media.plan import plan_frames
from hss_inspect.media.uri import data_uri, frame_uris
from hss_inspect.media.video import SampledVideo, scaled_size
from hss_inspect.providers.fit import (
    NO_BUDGET,
    DoesNotFit,
    FrameFit,
    TokenBudget,
    available_tokens,
    fit_frames,
    floor_needs,
)
from hss_inspect.providers.limits import (
    PART_OVERHEAD_BYTES,
    REQUEST_OVERHEAD_BYTES,
    AppliedLimits,
    TokenRule,
    applied_limits,
    frame_settings_for,
    limits_for,
    token_rule_for,
)
from hss_inspect.providers.tokens import has_formula, image_tokens

NATIVE_VIDEO_FORMATS = {".mp4": "mp4", ".mov": "mov", ".mpeg": "mpeg", ".mpg": "mpeg"}


async def user_turn_for(
    release: Release,
    media: MediaSettings,
    model_name: str,
    meta: dict[str, Any],
    budget: TokenBudget = NO_BUDGET,
) -> tuple[list[Content], dict[str, Any]]:
    """The user turn a sample sends to `model_name`: media prepared under its limits, frames
    fitted to its token `budget`, and the record of what was sent (`hss-inspect estimate`
    builds the same turn)."""
    task_id, media_path = meta["task_id"], meta["media_path"]
    limits = applied_limits(media, model_name)
    rule = limits.token_rule or token_rule_for(model_name, budget.served_root, media.token_rules)
    path = await fetch_media(release, task_id, media_path)
    try:
        digest = await service.media_sha256(path)
        record: dict[str, Any] = {
            "media_sha256": digest,
            "question_sha256": question_sha256(meta["prompt"], digest),
        }
        native, why_not = native_video_choice(media, limits, model_name, path)
        fit: FrameFit | None = None
        if meta["media_type"] == "image":
            content, details = await image_content(path, limits, media.media_timeout)
        elif native:
            content, details = await native_video_content(path)
        else:
            frames = frame_settings_for(media, limits)
            frames, fit = await fitted_frames(path, frames, limits, rule, budget, meta["prompt"])
            byte_budget = frames_budget(limits, frames, meta["prompt"])
            content, details = await frames_content(
                path, frames, byte_budget, media.media_timeout, limits.image_max_raw_bytes
            )
            if why_not:
                details["native_video_declined"] = why_not
    except MediaTimeout as exc:
        # The remedy: the cache filled ahead, for this model and these settings, without the
        # run's time limit (preparing ahead is not on the clock).
        options = {**option_values(media), "media_timeout": DEFAULT_MEDIA.media_timeout}
        source = {"dataset": release.dataset, "revision": release.revision}
        prepare = prepare_command({**source, **options}, [("--model", model_name)])
        remedy = exc.remedy_with(prepare)
        raise MediaTimeout(f"task {task_id}: {exc}; {remedy} ({media_path})") from exc
    except MediaError as exc:
        raise type(exc)(f"task {task_id}: {exc}; {exc.remedy} ({media_path})") from exc
    content.append(ContentText(text=prompt.question_text(meta["prompt"])))
    payload = payload_size(content)
    tokens = token_fit_record(budget, rule, fit, details, payload, limits)
    return content, {
        **record,
        **details,
        "payload": payload,
        "token_fit": tokens,
        "limits": limits_record(limits),
    }


async def fitted_frames(
    path: Path,
    frames: FrameSettings,
    limits: AppliedLimits,
    rule: TokenRule | None,
    budget: TokenBudget,
    question: str,
) -> tuple[FrameSettings, FrameFit | None]:
    """The frame settings under which the clip's request fits the token budget: the most
    frames at the usual side, thinned uniformly, else the floor's frames shrunk to fit
    (providers/fit.py). Unchanged without a window or an image-token rule."""
    input_tokens = budget.input_tokens
    if rule is None or input_tokens is None or not has_formula(rule):
        return frames, None
    duration, width, height = await service.video_geometry(path)
    plan = plan_frames(duration, frames)
    planned = len(plan.slots)
    # the longer note (the thinned one) and the label of the latest time bound the text
    note = prompt.frames_note(planned, plan.effective_fps, duration, plan.timestamps, planned)
    fixed_text = len(note.encode()) + len(prompt.question_text(question).encode())
    label = len(prompt.frame_label(duration).encode()) + limits.fit.label_extra_tokens
    available = available_tokens(input_tokens, fixed_text, limits.fit)

    def size_at(side: int) -> tuple[int, int]:
        return scaled_size(width, height, side)

    def cost(w: int, h: int) -> int:
        return image_tokens(rule, w, h) or 0

    fit = fit_frames(planned, frames.frame_side, size_at, cost, label, available, limits.fit)
    if fit is None:
        needs = floor_needs(planned, size_at, cost, label, limits.fit)
        floor = min(planned, limits.fit.floor_frames)
        raise DoesNotFit(
            f"{limits.model}: even {floor} frames at {limits.fit.floor_side} px need "
            f"{needs:,} tokens ({rule.name} rule), and {budget.describe()} leaves "
            f"{max(0, available):,} for frames once the text ({fixed_text:,}), the chat "
            f"template and the margin are kept"
        )
    if not fit.thinned and fit.side == frames.frame_side:
        return frames, fit
    cap = fit.frames if fit.thinned else frames.max_images
    return FrameSettings(**{**frames.as_dict(), "max_images": cap, "frame_side": fit.side}), fit


def token_fit_record(
    budget: TokenBudget,
    rule: TokenRule | None,
    fit: FrameFit | None,
    details: dict[str, Any],
    payload: dict[str, int],
    limits: AppliedLimits,
) -> dict[str, Any]:
    """What the request was fitted to and what it is estimated to cost, in tokens: the
    window and its source, the output kept free, the rule, the frames and their side, and
    whether the fit thinned or shrank them."""
    sizes = sent_image_sizes(details)
    costs = [image_tokens(rule, w, h) for w, h in sizes]
    image = None if None in costs else sum(c or 0 for c in costs)
    text = payload["text_bytes"] + limits.fit.template_tokens
    record: dict[str, Any] = {
        "window": budget.window,
        "window_source": budget.source,
        "window_detail": budget.detail,
        "input_limit": budget.input_limit,
        "output_reserve": budget.output_reserve,
        "output_reserve_source": budget.reserve_source,
        "input_tokens": budget.input_tokens,
        "rule": rule.as_dict() if rule else None,
        "estimated_image_tokens": image,
        "estimated_text_tokens": text,
        "estimated_tokens": None if image is None else image + text,
        "fitted": fit is not None,
    }
    if details.get("kind") == "frames":
        record.update(
            frames_planned=details["planned_frames"],
            frames_sent=details["frame_count"],
            frame_side=max(details["frame_size_sent"]),
            frame_side_limit=fit.side if fit else details["frame_settings"]["frame_side"],
            frame_size_sent=details["frame_size_sent"],
            thinned_to_fit=bool(fit and fit.thinned),
            shrunk_to_fit=bool(fit and fit.shrunk),
            constants=asdict(limits.fit),
        )
    return record


def sent_image_sizes(details: dict[str, Any]) -> list[tuple[int, int]]:
    """The size of each image a request carries, from its record."""
    if details.get("kind") == "image":
        return [(details["width"], details["height"])]
    if details.get("kind") == "frames":
        width, height = details["frame_size_sent"]
        return [(width, height)] * details["frame_count"]
    return []


async def local_media(release: Release, state: TaskState) -> Path:
    """The sample's media file on this machine, downloaded once if needed."""
    return await fetch_media(release, state.metadata["task_id"], state.metadata["media_path"])


async def fetch_media(release: Release, task_id: str, media_path: str) -> Path:
    return await service.fetch(
        lambda: release.media_file(media_path, task_id), f"{release.description}/{media_path}"
    )


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
    encoded = sum(_encoded_length(c) for c in media_parts)
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


def _encoded_length(part: ContentImage | ContentVideo) -> int:
    """Characters of the part's media once encoded: a data URI's payload, else the URL
    (counted without copying the payload out of the URI)."""
    uri = part.image if isinstance(part, ContentImage) else part.video
    return len(uri) - uri.index(",") - 1 if uri.startswith("data:") else len(uri)


async def image_content(
    path: Path, limits: AppliedLimits, time_limit: float = DEFAULT_MEDIA.media_timeout
) -> tuple[list[Content], dict[str, Any]]:
    image = await service.image_bytes(
        path,
        limits.image_max_side,
        limits.image_max_raw_bytes,
        limits.image_max_pixels,
        time_limit,
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
    duration, _, _ = await service.video_geometry(path)  # a prepared clip is not opened
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
    sampled = await service.sampled_frames(path, settings, time_limit)
    video = await service.fitted_frames(path, sampled, settings, byte_budget, max_each)
    content: list[Content] = [ContentText(text=frames_note(video))]
    # a cache entry holds the frames as their data URIs: none is encoded here
    for timestamp, uri in zip(video.timestamps, frame_uris(video.jpegs), strict=True):
        content.append(ContentText(text=prompt.frame_label(timestamp)))
        content.append(ContentImage(image=uri))
    record = frames_record(video, settings)
    sent_size = jpeg_size(video.jpegs[0]) if video.jpegs else [video.width, video.height]
    record["byte_budget"] = byte_budget
    record["bytes_before_budget"] = sum(sampled.frame_sizes)
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
        "bytes": sum(video.frame_sizes),
        # what `hss-inspect rebuild-frames` checks a rebuild against, frame by frame
        "frame_sha256": list(video.frame_sha256),
        "frame_settings": settings.as_dict(),
    }
