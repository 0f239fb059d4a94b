"""Decoding a clip into the frames of its sampling plan, with PyAV.

The clip's packets are read first, without decoding: their presentation times say
which source frame each slot of the plan needs (the reference rule) and where the
keyframes are. The decoder then seeks to the keyframe before each needed frame when
that skips work, decodes reference frames on the way, skips the non-reference frames
it does not need, and converts, scales (in the decoder's pixel pipeline) and encodes
only the frames the plan keeps. Memory stays at a few frames whatever the clip length.

If anything about the clip defeats that (packets without timestamps, a decoder that
labels frames differently from their packets), every frame is decoded in order and the
same rule is applied to the decoded frames: slower, never different.
"""

from __future__ import annotations

import bisect
import io
import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

import av
from PIL import Image

from hss_inspect.media.errors import MediaError
from hss_inspect.media.plan import FramePlan, last_before, plan_frames, select_per_boundary
from hss_inspect.settings import FrameSettings

# Display-matrix rotation (degrees counter-clockwise, as PyAV reports it) to the
# transpose that the ffmpeg command line's autorotation applies.
_ROTATIONS = {
    90: Image.Transpose.ROTATE_90,
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_270,
}
# Decoders that read `skip_frame` per packet, so unneeded non-reference frames can be
# skipped while the wanted ones are decoded (libdav1d, for one, fixes it at start-up).
_SKIPS_PER_PACKET = {"h264", "hevc", "vp9"}


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


@dataclass(frozen=True)
class PacketIndex:
    """Presentation times of a clip's decodable packets, read without decoding."""

    time_base: Fraction
    pts: tuple[int, ...]
    keyframes: tuple[int, ...]
    end: int  # the latest packet's end: presentation time plus duration

    @property
    def span(self) -> float:
        """Seconds from the first frame to the end of the last."""
        return self.seconds(self.end)

    def seconds(self, pts: int) -> float:
        return float((pts - self.pts[0]) * self.time_base)

    def keyframe_at_or_before(self, pts: int) -> int:
        return self.keyframes[max(0, bisect.bisect_right(self.keyframes, pts) - 1)]


def _video_stream(container: av.container.InputContainer, path: Path) -> av.VideoStream:
    if not container.streams.video:
        raise MediaError(f"{path}: no video stream in this file")
    return container.streams.video[0]


def probe_duration(path: Path) -> float:
    """Clip duration in seconds: the container's, else the stream's, else from its packets."""
    with av.open(str(path)) as container:
        declared = _declared_duration(container, _video_stream(container, path))
    if declared is not None:
        return declared
    index = read_packet_index(path)
    return index.span if index is not None else 0.0


def _declared_duration(
    container: av.container.InputContainer, stream: av.VideoStream
) -> float | None:
    if container.duration is not None and container.duration > 0:
        return container.duration / av.time_base
    if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
        return float(stream.duration * stream.time_base)
    return None


def read_packet_index(path: Path) -> PacketIndex | None:
    """The clip's packet times and keyframes, or None when some packet has no timestamp."""
    times: list[int] = []
    keys: list[int] = []
    end = 0
    with av.open(str(path)) as container:
        stream = _video_stream(container, path)
        for packet in container.demux(stream):
            if packet.size == 0:
                continue  # the demuxer's end-of-stream marker
            if packet.pts is None or stream.time_base is None:
                return None
            if packet.is_discard:
                continue
            times.append(packet.pts)
            end = max(end, packet.pts + (packet.duration or 0))
            if packet.is_keyframe:
                keys.append(packet.pts)
        if not times or not keys or stream.time_base is None:
            return None
        return PacketIndex(stream.time_base, tuple(sorted(times)), tuple(sorted(keys)), end)


def sample_video(path: Path, settings: FrameSettings) -> SampledVideo:
    """Probe, plan and decode `path` into the frames `settings` asks for."""
    try:
        with av.open(str(path)) as container:
            declared = _declared_duration(container, _video_stream(container, path))
        # Reading the index costs a demux pass (a few percent of a decode); it pays for
        # itself on every plan by the non-reference frames it lets the decoder skip.
        index = read_packet_index(path)
        duration = declared if declared is not None else (index.span if index else 0.0)
        return _decode_plan(path, plan_frames(duration, settings), settings, index)
    except av.FFmpegError as exc:
        raise MediaError(f"{path}: cannot decode video ({exc})") from exc


def decode_plan(path: Path, plan: FramePlan, settings: FrameSettings) -> SampledVideo:
    """Decode the frames of a plan made elsewhere (a window of the clip, one frame)."""
    try:
        return _decode_plan(path, plan, settings, read_packet_index(path))
    except av.FFmpegError as exc:
        raise MediaError(f"{path}: cannot decode video ({exc})") from exc


def _decode_plan(
    path: Path, plan: FramePlan, settings: FrameSettings, index: PacketIndex | None
) -> SampledVideo:
    if index is not None:
        sampled = _decode_indexed(path, plan, settings, index)
        if sampled is not None:
            return sampled
    return _decode_streaming(path, plan, settings)


class _FrameEncoder:
    """Converts, scales, rotates and encodes kept frames in a worker thread.

    The decoder goes on decoding while a kept frame is converted (both release the GIL);
    at most a few decoded frames wait in between, so memory stays bounded.
    """

    MAX_WAITING = 4

    def __init__(self, settings: FrameSettings) -> None:
        self.settings = settings
        self.size = (0, 0)
        self.rotation = 0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hss-frames")
        self._waiting: deque[Future[bytes]] = deque()

    def __enter__(self) -> _FrameEncoder:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def submit(self, frame: av.VideoFrame) -> Future[bytes]:
        future = self._pool.submit(self._encode, frame)
        self._waiting.append(future)
        while len(self._waiting) > self.MAX_WAITING:
            self._waiting.popleft().result()
        return future

    def _encode(self, frame: av.VideoFrame) -> bytes:
        self.rotation = round(frame.rotation) % 360
        image = _scaled_image(frame, self.settings.frame_side, self.rotation)
        self.size = image.size
        return _jpeg(image, self.settings.jpeg_quality)


def _result(
    plan: FramePlan, encoder: _FrameEncoder, jpegs: list[bytes], source_times: list[float]
) -> SampledVideo:
    return SampledVideo(
        duration=plan.duration,
        effective_fps=plan.effective_fps,
        planned_frames=plan.planned_frames,
        timestamps=plan.timestamps,
        source_times=tuple(source_times),
        jpegs=tuple(jpegs),
        width=encoder.size[0],
        height=encoder.size[1],
        rotation=encoder.rotation,
    )


def _decode_indexed(
    path: Path, plan: FramePlan, settings: FrameSettings, index: PacketIndex
) -> SampledVideo | None:
    """Decode only what the plan's frames need; None if the decoder did not deliver them.

    The wanted frames are split at keyframes into one run per core, each decoded by its
    own single-threaded decoder: the runs share no decoding work, and this keeps every
    core busy where frame threading stalls on chains of reference frames.
    """
    times = [index.seconds(p) for p in index.pts]
    wanted = [index.pts[i] for i in last_before(times, plan.boundaries)]
    unique = sorted(set(wanted))
    runs = split_at_keyframes(unique, index, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=len(runs), thread_name_prefix="hss-decode") as pool:
        parts = list(pool.map(lambda run: _decode_run(path, index, run, settings, len(runs)), runs))
    encoded = {pts: jpeg for part in parts for pts, jpeg in part.jpegs.items()}
    if len(encoded) != len(unique):
        return None
    return _result(
        plan, parts[0].encoder, [encoded[p] for p in wanted], [index.seconds(p) for p in wanted]
    )


def split_at_keyframes(wanted: Sequence[int], index: PacketIndex, parts: int) -> list[list[int]]:
    """Wanted timestamps in at most `parts` contiguous runs of about equal decoding cost.

    Frames after the same keyframe stay in one run (splitting them would decode that
    keyframe's chain twice); a group's cost is the number of packets from its keyframe
    to its last wanted frame.
    """
    groups: dict[int, list[int]] = {}
    for pts in wanted:
        groups.setdefault(index.keyframe_at_or_before(pts), []).append(pts)
    costs = [
        bisect.bisect_right(index.pts, members[-1]) - bisect.bisect_left(index.pts, keyframe)
        for keyframe, members in groups.items()
    ]
    share = sum(costs) / max(1, parts)
    runs: list[list[int]] = [[]]
    spent = 0.0
    for cost, members in zip(costs, groups.values(), strict=True):
        if runs[-1] and spent >= share * len(runs) and len(runs) < parts:
            runs.append([])
        runs[-1].extend(members)
        spent += cost
    return runs


@dataclass
class _RunResult:
    jpegs: dict[int, bytes]
    encoder: _FrameEncoder


def _decode_run(
    path: Path, index: PacketIndex, run: list[int], settings: FrameSettings, runs: int
) -> _RunResult:
    with _FrameEncoder(settings) as encoder, av.open(str(path)) as container:
        stream = _video_stream(container, path)
        if runs > 1:
            stream.codec_context.thread_count = 1
        else:
            stream.thread_type = "AUTO"
        pending = {
            pts: encoder.submit(frame)
            for pts, frame in _wanted_frames(container, stream, index, run)
        }
        return _RunResult({pts: future.result() for pts, future in pending.items()}, encoder)


def _wanted_frames(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    index: PacketIndex,
    wanted: Sequence[int],
) -> Iterator[tuple[int, av.VideoFrame]]:
    """Decoded frames whose timestamps are in `wanted` (sorted), in order.

    Each pass seeks to the keyframe before the next wanted frame and decodes forward;
    a pass ends as soon as the next wanted frame lies past a later keyframe. Every
    pass starts at a later keyframe than the one before, so the loop ends.
    """
    wanted_set = set(wanted)
    context = stream.codec_context
    skip_unwanted: Literal["NONREF", "DEFAULT"] = (
        "NONREF" if context.name in _SKIPS_PER_PACKET else "DEFAULT"
    )
    next_wanted = 0
    while next_wanted < len(wanted):
        start = index.keyframe_at_or_before(wanted[next_wanted])
        container.seek(start, stream=stream, backward=True, any_frame=False)
        current_keyframe = start
        jumped = False
        for packet in container.demux(stream):
            is_flush = packet.size == 0
            if not is_flush:
                if packet.pts is None or packet.pts < start:
                    # Landed before the keyframe asked for, or a leading picture of an
                    # open GOP: nothing earlier than the keyframe is wanted.
                    continue
                if packet.is_keyframe:
                    current_keyframe = packet.pts
            wanted_here = is_flush or packet.pts in wanted_set
            context.skip_frame = "DEFAULT" if wanted_here else skip_unwanted
            for frame in packet.decode():
                if frame.pts in wanted_set:
                    yield frame.pts, frame
                    while next_wanted < len(wanted) and wanted[next_wanted] <= frame.pts:
                        next_wanted += 1
            if next_wanted >= len(wanted):
                return
            if index.keyframe_at_or_before(wanted[next_wanted]) > current_keyframe:
                jumped = True
                break
        if not jumped:
            return  # end of stream: what was not delivered makes the caller fall back


def _decode_streaming(path: Path, plan: FramePlan, settings: FrameSettings) -> SampledVideo:
    """Decode every frame in order and keep the last one before each slot's boundary."""
    pending: list[Future[bytes]] = []
    source_times: list[float] = []
    last: tuple[float, Future[bytes]] | None = None
    with _FrameEncoder(settings) as encoder, av.open(str(path)) as container:
        stream = _video_stream(container, path)
        stream.thread_type = "AUTO"
        for _, time, frame in select_per_boundary(
            _timed_frames(container, stream), plan.boundaries
        ):
            if last is None or last[0] != time:
                last = (time, encoder.submit(frame))
            pending.append(last[1])
            source_times.append(time)
        jpegs = [future.result() for future in pending]
    if not jpegs:
        raise MediaError(f"{path}: no decodable video frames")
    return _result(plan, encoder, jpegs, source_times)


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
