"""Decoding a clip into the frames of its sampling plan, with PyAV.

Frames stream through the decoder; only the frames the plan keeps are converted,
scaled (in the decoder's pixel pipeline, Lanczos) and encoded as JPEG.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
from PIL import Image

from hss_inspect.media.errors import MediaError
from hss_inspect.media.plan import FramePlan, plan_frames, select_per_boundary
from hss_inspect.settings import FrameSettings

# Display-matrix rotation (degrees counter-clockwise, as PyAV reports it) to the
# transpose that the ffmpeg command line's autorotation applies.
_ROTATIONS = {
    90: Image.Transpose.ROTATE_90,
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_270,
}


@dataclass(frozen=True)
class SampledVideo:
    """The frames a model receives for one clip, and how they were chosen."""

    duration: float
    effective_fps: float
    planned_frames: int
    timestamps: tuple[float, ...]
    source_times: tuple[float, ...]
    jpegs: tuple[bytes, ...]
    width: int
    height: int
    rotation: int

    @property
    def thinned(self) -> bool:
        return len(self.timestamps) < self.planned_frames


def probe_duration(path: Path) -> float:
    """Clip duration in seconds: the container's, else the stream's, else from its packets."""
    with av.open(str(path)) as container:
        if container.duration is not None and container.duration > 0:
            return container.duration / av.time_base
        stream = _video_stream(container, path)
        if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
            return float(stream.duration * stream.time_base)
        return _duration_from_packets(container, stream)


def _duration_from_packets(container: av.container.InputContainer, stream: av.VideoStream) -> float:
    first: int | None = None
    end = 0
    for packet in container.demux(stream):
        if packet.pts is None:
            continue
        first = packet.pts if first is None else min(first, packet.pts)
        end = max(end, packet.pts + (packet.duration or 0))
    if first is None or stream.time_base is None:
        return 0.0
    return float((end - first) * stream.time_base)


def _video_stream(container: av.container.InputContainer, path: Path) -> av.VideoStream:
    if not container.streams.video:
        raise MediaError(f"{path}: no video stream in this file")
    return container.streams.video[0]


def sample_video(path: Path, settings: FrameSettings) -> SampledVideo:
    """Probe, plan and decode `path` into the frames `settings` asks for."""
    try:
        plan = plan_frames(probe_duration(path), settings)
        return _decode_plan(path, plan, settings)
    except av.FFmpegError as exc:
        raise MediaError(f"{path}: cannot decode video ({exc})") from exc


def _decode_plan(path: Path, plan: FramePlan, settings: FrameSettings) -> SampledVideo:
    jpegs: list[bytes] = []
    source_times: list[float] = []
    size = (0, 0)
    rotation = 0
    last: tuple[float, bytes] | None = None
    with av.open(str(path)) as container:
        stream = _video_stream(container, path)
        stream.thread_type = "AUTO"
        for _, time, frame in select_per_boundary(
            _timed_frames(container, stream), plan.boundaries
        ):
            if last is None or last[0] != time:
                rotation = _rotation_of(frame)
                image = _scaled_image(frame, settings.frame_side, rotation)
                size = image.size
                last = (time, _jpeg(image, settings.jpeg_quality))
            jpegs.append(last[1])
            source_times.append(time)
    if not jpegs:
        raise MediaError(f"{path}: no decodable video frames")
    return SampledVideo(
        duration=plan.duration,
        effective_fps=plan.effective_fps,
        planned_frames=plan.planned_frames,
        timestamps=plan.timestamps,
        source_times=tuple(source_times),
        jpegs=tuple(jpegs),
        width=size[0],
        height=size[1],
        rotation=rotation,
    )


def _timed_frames(
    container: av.container.InputContainer, stream: av.VideoStream
) -> Iterator[tuple[float, av.VideoFrame]]:
    """Decoded frames with their presentation time counted from the first frame."""
    time_base = stream.time_base or Fraction(1, 1)
    first: int | None = None
    fallback_step = 1 / float(stream.guessed_rate or stream.average_rate or 25)
    previous = 0.0
    for frame in container.decode(stream):
        if frame.pts is None:
            previous += fallback_step
            yield previous, frame
            continue
        if first is None:
            first = frame.pts
        previous = float((frame.pts - first) * time_base)
        yield previous, frame


def _rotation_of(frame: av.VideoFrame) -> int:
    return round(frame.rotation) % 360


def _scaled_image(frame: av.VideoFrame, side: int, rotation: int) -> Image.Image:
    width, height = scaled_size(frame.width, frame.height, side)
    rgb = frame.reformat(width=width, height=height, format="rgb24", interpolation="LANCZOS")
    image: Image.Image = rgb.to_image()  # type: ignore[no-untyped-call]
    transpose = _ROTATIONS.get(rotation)
    return image.transpose(transpose) if transpose is not None else image


def scaled_size(width: int, height: int, side: int) -> tuple[int, int]:
    """Fit the longest side within `side`, keeping the aspect ratio, never upscaling."""
    longest = max(width, height)
    if longest <= side:
        return width, height
    scale = side / longest
    return max(1, round(width * scale)), max(1, round(height * scale))


def _jpeg(image: Image.Image, quality: int) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()
