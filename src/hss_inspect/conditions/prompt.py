"""The words the model under evaluation reads (paper App. C.2 and C.5)."""

from __future__ import annotations

from collections.abc import Sequence

from hss_inspect.media.plan import format_seconds

# Beyond this many frames the note lists the first and last few timestamps only.
_TIMESTAMPS_LISTED_IN_FULL = 12
_TIMESTAMPS_AT_EACH_END = 4

BLIND_SYSTEM_MESSAGE = (
    "Each question refers to an image or a video that is not available to you. "
    "Answer from the question alone as best you can. If the question cannot be "
    "answered without seeing the media, you may say that you cannot tell."
)

# Notes end with a line break so providers that join text parts keep them apart.
IMAGE_NOTE = "Here is an image. Study it, then answer the question that follows it.\n"


def question_text(prompt: str) -> str:
    return f"Question: {prompt}"


def frame_label(timestamp: float) -> str:
    return f"Frame at {format_seconds(timestamp)} s:"


def frames_note(
    frame_count: int,
    effective_fps: float,
    duration: float,
    timestamps: Sequence[float],
    thinned_from: int | None,
) -> str:
    """The note before a clip shown as frames: count, rate, duration and times."""
    frames = "1 frame" if frame_count == 1 else f"{frame_count} frames"
    rate = (
        f"taken at {effective_fps:.2f} frames per second"
        if thinned_from is None
        else f"spread evenly over it (thinned from {thinned_from} frames sampled at "
        f"{effective_fps:.2f} frames per second to fit this model's input limits)"
    )
    return (
        f"The following {frames} come from one video clip lasting "
        f"{format_seconds(duration)} seconds, {rate}. Their times in seconds are "
        f"{listed_times(timestamps)}. Each frame comes after a label giving its time. "
        "Take the frames together as a single continuous video, then answer the "
        "question that follows them.\n"
    )


def native_video_note(duration: float) -> str:
    return (
        f"Here is a video clip lasting {format_seconds(duration)} seconds. Watch it, "
        "then answer the question that follows it.\n"
    )


def listed_times(timestamps: Sequence[float]) -> str:
    texts = [format_seconds(t) for t in timestamps]
    if len(texts) <= _TIMESTAMPS_LISTED_IN_FULL:
        return ", ".join(texts)
    head = texts[:_TIMESTAMPS_AT_EACH_END]
    tail = texts[-_TIMESTAMPS_AT_EACH_END:]
    return f"{', '.join(head)}, ... , {', '.join(tail)}"


def agent_system_message(media_type: str) -> str:
    """The agentic condition's one addition to the standard turn: what the tools are for."""
    looking = (
        "crop and zoom into any region of the image"
        if media_type == "image"
        else "crop and zoom into any frame you have been shown, fetch more frames of any "
        "time window of the video at a higher frame rate, and put two frames side by side"
    )
    return (
        f"You may inspect the media with tools before you answer: {looking}. Look as "
        "closely as you need to. When you are ready, call submit with your complete final "
        "answer; only the submitted answer is graded."
    )
