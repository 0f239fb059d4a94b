"""Decoding a clip into the frames of its sampling plan, with PyAV.

The clip's packets are read first, without decoding (`probe.read_packet_index`): their
presentation times say which source frame each slot of the plan needs (the reference
rule) and where the keyframes are. The decoder then seeks to the keyframe before each
needed frame when that skips work, decodes reference frames on the way, skips the
non-reference frames it does not need, and converts, scales (in the decoder's pixel
pipeline) and encodes only the frames the plan keeps. Memory stays at a few frames
whatever the clip length.

If anything about the clip defeats that (packets without timestamps, a decoder that
labels frames differently from their packets, damaged packets), every frame is decoded
in order and the same rule is applied to the decoded frames: slower, never different.

Damaged data is handled as the `ffmpeg` program handles it: a packet that does not
decode is skipped, a read error ends the input, and a clip whose data ends early is
sampled only over the frames that decode (see `plan.slots_emitted`).
"""

from __future__ import annotations

import bisect
import hashlib
import io
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Literal

import av
from av.video.reformatter import VideoReformatter
from PIL import Image

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.errors import NO_DEADLINE, Deadline, MediaError
from hss_inspect.media.plan import (
    FramePlan,
    last_before,
    plan_frames,
    select_per_boundary,
    thin_uniformly,
)
from hss_inspect.media.probe import (
    PacketIndex,
    PacketReader,
    cut_short_hint,
    declared_duration,
    read_packet_index,
    unreadable,
    video_stream,
)
from hss_inspect.media.uri import UriFrames, frame_sizes

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
class Truncation:
    """A clip whose data ends before its declared duration, and what that cost."""

    declared_duration: float
    decodable_duration: float
    frames_dropped: int


@dataclass(frozen=True)
class SampledVideo:
    """The frames a model receives for one clip, and how they were chosen.

    `duration` is the one the model is told: the declared duration, or for a clip whose
    data ends early, the decodable span its frames come from (`truncation` says so).
    `jpegs` is a tuple when decoded, and the frames' data URIs (`UriFrames`) when read
    from the cache.
    """

    duration: float
    effective_fps: float
    planned_frames: int
    timestamps: tuple[float, ...]
    source_times: tuple[float, ...]
    jpegs: Sequence[bytes]
    width: int
    height: int
    rotation: int
    truncation: Truncation | None = None

    @property
    def thinned(self) -> bool:
        return len(self.timestamps) < self.planned_frames

    @property
    def frame_sizes(self) -> tuple[int, ...]:
        """Each frame's bytes (frames held as data URIs are not decoded for them)."""
        return frame_sizes(self.jpegs)

    @cached_property
    def frame_sha256(self) -> tuple[str, ...]:
        """Each frame's SHA-256 (what `rebuild-frames` checks a rebuild against), computed
        once; a cache entry's are read from its manifest instead (`with_digests`)."""
        return tuple(hashlib.sha256(jpeg).hexdigest() for jpeg in self.jpegs)


def with_digests(video: SampledVideo, digests: Sequence[str]) -> SampledVideo:
    """`video`, knowing its frames' digests without hashing them (one a frame, or ignored)."""
    if len(digests) == len(video.jpegs):
        video.__dict__["frame_sha256"] = tuple(digests)  # where cached_property keeps it
    return video


def _known_digests(video: SampledVideo) -> tuple[str, ...] | None:
    return video.__dict__.get("frame_sha256")


def thinned_video(full: SampledVideo, cap: int) -> SampledVideo:
    """The frames of `full` (a clip's unthinned frames) that thinning to `cap` images keeps.

    Thinning keeps slots of the same plan, and a slot's frame depends only on the plan and
    the frame settings, so these are byte for byte the frames a decode thinned to `cap`
    gives, taken without opening the clip."""
    if full.thinned:
        raise ValueError("thinned_video needs the unthinned frames of a clip")
    keep = thin_uniformly(full.planned_frames, cap)
    jpegs = full.jpegs
    thinned = replace(
        full,
        timestamps=tuple(full.timestamps[i] for i in keep),
        source_times=tuple(full.source_times[i] for i in keep),
        jpegs=jpegs.subset(keep) if isinstance(jpegs, UriFrames) else tuple(jpegs[i] for i in keep),
    )
    known = _known_digests(full)
    return thinned if known is None else with_digests(thinned, [known[i] for i in keep])


def sample_video(
    path: Path, settings: FrameSettings, deadline: Deadline = NO_DEADLINE
) -> SampledVideo:
    """Probe, plan and decode `path` into the frames `settings` asks for."""
    return sample_video_sweep(path, [settings], deadline)[0]


def sample_video_sweep(
    path: Path, sweep: Sequence[FrameSettings], deadline: Deadline = NO_DEADLINE
) -> list[SampledVideo]:
    """The frames of `path` under each of `sweep`'s settings, decoding the clip once.

    Plans that share a frame size and JPEG quality are decoded together: the union of
    the source frames they need is decoded, scaled and encoded once, so each result is
    byte-identical to sampling with its settings alone.
    """
    try:
        with av.open(str(path)) as container:
            declared = declared_duration(container, video_stream(container, path))
        # Reading the index costs a demux pass (a few percent of a decode); it pays for
        # itself on every plan by the non-reference frames it lets the decoder skip.
        index = read_packet_index(path, deadline)
        duration = declared if declared is not None else (index.span if index else 0.0)
        results: dict[FrameSettings, SampledVideo] = {}
        for group in _by_encoding(sweep):
            sampled = _sample_group(path, duration, group, index, deadline)
            results.update(zip(group, sampled, strict=True))
        return [results[settings] for settings in sweep]
    except av.FFmpegError as exc:
        raise unreadable(path, exc) from exc


def _by_encoding(sweep: Iterable[FrameSettings]) -> list[list[FrameSettings]]:
    groups: dict[tuple[int, int], list[FrameSettings]] = {}
    for settings in dict.fromkeys(sweep):
        groups.setdefault((settings.frame_side, settings.jpeg_quality), []).append(settings)
    return list(groups.values())


def _sample_group(
    path: Path,
    duration: float,
    group: Sequence[FrameSettings],
    index: PacketIndex | None,
    deadline: Deadline,
) -> list[SampledVideo]:
    if index is not None and not index.damaged:
        plans = [plan_frames(duration, settings, index.span) for settings in group]
        sampled = _decode_indexed_many(path, plans, group[0], index, deadline)
        if sampled is not None:
            return sampled
    damaged = index is not None and index.damaged
    return [
        _decode_streaming(path, plan_frames(duration, settings), settings, deadline, damaged)
        for settings in group
    ]


def decode_plan(
    path: Path, plan: FramePlan, settings: FrameSettings, deadline: Deadline = NO_DEADLINE
) -> SampledVideo:
    """Decode the frames of a plan made elsewhere (a window of the clip, one frame).

    The plan is taken as given: its slots are not cut to the decodable data.
    """
    try:
        index = read_packet_index(path, deadline)
        if index is not None and not index.damaged:
            sampled = _decode_indexed(path, plan, settings, index, deadline)
            if sampled is not None:
                return sampled
        damaged = index is not None and index.damaged
        return _decode_streaming(path, plan, settings, deadline, damaged, whole_clip=False)
    except av.FFmpegError as exc:
        raise unreadable(path, exc) from exc


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
        # One scaler for every frame (its one thread uses it): a frame's own `reformat`
        # builds a new swscale context each time, which costs more than the scaling.
        self._scaler = VideoReformatter()
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
        image = _scaled_image(frame, self.settings.frame_side, self.rotation, self._scaler)
        self.size = image.size
        return _jpeg(image, self.settings.jpeg_quality)


def _result(
    plan: FramePlan, encoder: _FrameEncoder, jpegs: list[bytes], source_times: list[float]
) -> SampledVideo:
    duration, truncation = plan.duration, None
    if plan.frames_dropped and plan.decodable_span is not None:
        # The model is told the span its frames come from, not a length it never sees.
        duration = plan.decodable_span
        truncation = Truncation(plan.duration, plan.decodable_span, plan.frames_dropped)
    return SampledVideo(
        duration=duration,
        effective_fps=plan.effective_fps,
        planned_frames=plan.planned_frames,
        timestamps=plan.timestamps,
        source_times=tuple(source_times),
        jpegs=tuple(jpegs),
        width=encoder.size[0],
        height=encoder.size[1],
        rotation=encoder.rotation,
        truncation=truncation,
    )


def _decode_indexed(
    path: Path,
    plan: FramePlan,
    settings: FrameSettings,
    index: PacketIndex,
    deadline: Deadline = NO_DEADLINE,
) -> SampledVideo | None:
    sampled = _decode_indexed_many(path, [plan], settings, index, deadline)
    return None if sampled is None else sampled[0]


def _decode_indexed_many(
    path: Path,
    plans: Sequence[FramePlan],
    settings: FrameSettings,
    index: PacketIndex,
    deadline: Deadline,
) -> list[SampledVideo] | None:
    """Decode only what the plans' frames need; None if the decoder did not deliver them.

    The wanted frames are split at keyframes into one run per core, each decoded by its
    own single-threaded decoder: the runs share no decoding work, and this keeps every
    core busy where frame threading stalls on chains of reference frames.
    """
    times = [index.seconds(p) for p in index.pts]
    wanted = [[index.pts[i] for i in last_before(times, plan.boundaries)] for plan in plans]
    unique = sorted({pts for plan_wanted in wanted for pts in plan_wanted})
    runs = split_at_keyframes(unique, index, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=len(runs), thread_name_prefix="hss-decode") as pool:
        parts = list(
            pool.map(lambda run: _decode_run(path, index, run, settings, len(runs), deadline), runs)
        )
    encoded = {pts: jpeg for part in parts for pts, jpeg in part.jpegs.items()}
    if len(encoded) != len(unique):
        return None
    return [
        _result(
            plan, parts[0].encoder, [encoded[p] for p in chosen], [index.seconds(p) for p in chosen]
        )
        for plan, chosen in zip(plans, wanted, strict=True)
    ]


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
    path: Path,
    index: PacketIndex,
    run: list[int],
    settings: FrameSettings,
    runs: int,
    deadline: Deadline,
) -> _RunResult:
    with _FrameEncoder(settings) as encoder, av.open(str(path)) as container:
        stream = video_stream(container, path)
        if runs > 1:
            stream.codec_context.thread_count = 1
        else:
            stream.thread_type = "AUTO"
        pending = {
            pts: encoder.submit(frame)
            for pts, frame in _wanted_frames(
                container, stream, index, run, lambda: deadline.check(path)
            )
        }
        return _RunResult({pts: future.result() for pts, future in pending.items()}, encoder)


def _wanted_frames(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    index: PacketIndex,
    wanted: Sequence[int],
    check_time: Callable[[], None],
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
        for packet in PacketReader(container, stream):
            check_time()
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
            for frame in _decoded(packet):
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


def _decoded(packet: av.Packet[av.VideoStream]) -> list[av.VideoFrame]:
    """The packet's frames; none when it does not decode (the ffmpeg program skips it too)."""
    try:
        return packet.decode()
    except av.FFmpegError:
        return []


@dataclass
class _Picked:
    """One decoding pass's choice: (source time, JPEG) per kept slot of its plan."""

    frames: list[tuple[float, bytes]]
    encoder: _FrameEncoder
    span: float | None  # where the decodable data ended; None when it outlasts the plan


def _decode_streaming(
    path: Path,
    plan: FramePlan,
    settings: FrameSettings,
    deadline: Deadline = NO_DEADLINE,
    damaged: bool = False,
    whole_clip: bool = True,
) -> SampledVideo:
    """Decode every frame in order and keep the last one before each slot's boundary.

    For a whole-clip plan, where the decodable data ends is known only at the end of the
    pass. When it leaves fewer slots than planned, the slots past it are dropped; a
    second pass is needed only when thinning to an image cap then picks slots the first
    pass did not keep.

    A damaged clip is decoded without frame threading: a frame-threaded decoder reports
    an error a few frames late and loses the frames still in flight, so what survives
    would depend on the number of cores. Without it, every frame that decodes is kept
    (the ffmpeg program's output with `-threads 1`).
    """
    picked = _stream_pass(path, plan, settings, deadline, damaged)
    final = plan_frames(plan.duration, settings, picked.span) if whole_clip else plan
    by_slot = dict(zip(plan.slots, picked.frames, strict=True))
    if not set(final.slots) <= by_slot.keys():
        picked = _stream_pass(path, final, settings, deadline, damaged)
        by_slot = dict(zip(final.slots, picked.frames, strict=True))
    chosen = [by_slot[slot] for slot in final.slots]
    return _result(final, picked.encoder, [j for _, j in chosen], [t for t, _ in chosen])


def _stream_pass(
    path: Path, plan: FramePlan, settings: FrameSettings, deadline: Deadline, damaged: bool
) -> _Picked:
    pending: list[tuple[float, Future[bytes]]] = []
    with _FrameEncoder(settings) as encoder, av.open(str(path)) as container:
        stream = video_stream(container, path)
        stream.thread_type = "SLICE" if damaged else "AUTO"
        timed = _TimedFrames(container, stream, lambda: deadline.check(path))
        for _, time, frame in select_per_boundary(timed, plan.boundaries):
            if not pending or pending[-1][0] != time:
                pending.append((time, encoder.submit(frame)))
            else:
                pending.append(pending[-1])
        frames = [(time, future.result()) for time, future in pending]
    if not frames:
        raise MediaError(f"{path}: no decodable video frames{cut_short_hint(path)}")
    return _Picked(frames, encoder, timed.end if timed.finished else None)


class _TimedFrames:
    """Decoded frames with their presentation time counted from the first frame.

    Packets that do not decode are skipped and a read error ends the input, as in the
    ffmpeg program. Once iterated to the end, `finished` is set and `end` is where the
    decodable data ends: the last frame's time plus its duration.
    """

    def __init__(
        self,
        container: av.container.InputContainer,
        stream: av.VideoStream,
        check_time: Callable[[], None],
    ) -> None:
        self._container, self._stream, self._check_time = container, stream, check_time
        self._time_base = stream.time_base or Fraction(1, 1)
        self._step = 1 / float(stream.guessed_rate or stream.average_rate or 25)
        self._first: int | None = None
        self.end = 0.0
        self.finished = False

    def __iter__(self) -> Iterator[tuple[float, av.VideoFrame]]:
        packets = PacketReader(self._container, self._stream)
        for packet in packets:
            self._check_time()
            yield from self._timed(_decoded(packet))
        if packets.failed:  # no end-of-stream packet follows a read error: flush here
            yield from self._timed(self._flushed())
        self.finished = True

    def _flushed(self) -> list[av.VideoFrame]:
        try:
            return self._stream.codec_context.decode(None)
        except av.FFmpegError:
            return []

    def _timed(self, frames: Iterable[av.VideoFrame]) -> Iterator[tuple[float, av.VideoFrame]]:
        for frame in frames:
            if frame.pts is None:
                time = self.end
            else:
                if self._first is None:
                    self._first = frame.pts
                time = float((frame.pts - self._first) * self._time_base)
            duration = float(frame.duration * self._time_base) if frame.duration else self._step
            self.end = time + duration
            yield time, frame


def _scaled_image(
    frame: av.VideoFrame, side: int, rotation: int, scaler: VideoReformatter
) -> Image.Image:
    width, height = scaled_size(frame.width, frame.height, side)
    rgb = scaler.reformat(
        frame, width=width, height=height, format="rgb24", interpolation="LANCZOS"
    )
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
