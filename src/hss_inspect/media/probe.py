"""What a clip is, read without decoding it: its duration, its frames' size (from its
first frame alone), its packet index (presentation times and keyframes), and what the
bytes of a file that will not open suggest.

The decoder (`video`) plans and seeks with the packet index; the token fit and the cache's
clip facts need only the duration and the frame size.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

from hss_inspect.media.errors import NO_DEADLINE, Deadline, MediaError


@dataclass(frozen=True)
class PacketIndex:
    """Presentation times of a clip's decodable packets, read without decoding."""

    time_base: Fraction
    pts: tuple[int, ...]
    keyframes: tuple[int, ...]
    end: int  # the latest packet's end: presentation time plus duration
    damaged: bool = False  # a packet cut short or a read error: only decoding tells more

    @property
    def span(self) -> float:
        """Seconds from the first frame to the end of the last."""
        return self.seconds(self.end)

    def seconds(self, pts: int) -> float:
        return float((pts - self.pts[0]) * self.time_base)

    def keyframe_at_or_before(self, pts: int) -> int:
        return self.keyframes[max(0, bisect.bisect_right(self.keyframes, pts) - 1)]


def video_stream(container: av.container.InputContainer, path: Path) -> av.VideoStream:
    """The clip's first video stream; MediaError when the file has none."""
    if not container.streams.video:
        raise MediaError(f"{path}: no video stream in this file")
    return container.streams.video[0]


def probe_duration(path: Path) -> float:
    """Clip duration in seconds: the container's, else the stream's, else from its packets."""
    try:
        with av.open(str(path)) as container:
            declared = declared_duration(container, video_stream(container, path))
        if declared is not None:
            return declared
        index = read_packet_index(path)
    except av.FFmpegError as exc:
        raise unreadable(path, exc) from exc
    return index.span if index is not None else 0.0


def probe_frame_size(path: Path) -> tuple[int, int]:
    """Width and height of the clip's first frame as shown (display rotation applied),
    decoding that frame only."""
    try:
        with av.open(str(path)) as container:
            stream = video_stream(container, path)
            for frame in container.decode(stream):
                turned = round(frame.rotation) % 360 in (90, 270)
                return (frame.height, frame.width) if turned else (frame.width, frame.height)
    except av.FFmpegError as exc:
        raise unreadable(path, exc) from exc
    raise MediaError(f"{path}: no decodable video frames{cut_short_hint(path)}")


def unreadable(path: Path, exc: av.FFmpegError) -> MediaError:
    """The error for a clip the demuxer or decoder refuses, with what the bytes suggest."""
    hint = cut_short_hint(path)
    return MediaError(f"{path}: cannot decode video ({exc}){hint}")


def cut_short_hint(path: Path) -> str:
    """'; ...' when the file's top-level MP4/MOV boxes end past the end of the file."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            if handle.read(8)[4:8] != b"ftyp":
                return ""
            offset = 0
            while offset + 8 <= size:
                handle.seek(offset)
                header = handle.read(16)
                box = int.from_bytes(header[:4], "big")
                if box == 1 and len(header) >= 16:
                    box = int.from_bytes(header[8:16], "big")
                if box < 8:
                    return ""  # 0: box runs to the end of the file; else not a box
                offset += box
    except OSError:
        return ""
    if offset <= size:
        return ""
    return (
        f"; the file is cut short: its boxes need {offset} bytes and it has {size} "
        "(an interrupted download or copy? fetch it again)"
    )


def declared_duration(
    container: av.container.InputContainer, stream: av.VideoStream
) -> float | None:
    """The duration the container declares, else the stream; None when neither does."""
    if container.duration is not None and container.duration > 0:
        return container.duration / av.time_base
    if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
        return float(stream.duration * stream.time_base)
    return None


def read_packet_index(path: Path, deadline: Deadline = NO_DEADLINE) -> PacketIndex | None:
    """The clip's packet times and keyframes, or None when some packet has no timestamp."""
    times: list[int] = []
    keys: list[int] = []
    end = 0
    damaged = False
    with av.open(str(path)) as container:
        stream = video_stream(container, path)
        packets = PacketReader(container, stream)
        for packet in packets:
            deadline.check(path)
            if packet.size == 0:
                continue  # the demuxer's end-of-stream marker
            if packet.pts is None or stream.time_base is None:
                return None
            if packet.is_discard:
                continue
            damaged = damaged or packet.is_corrupt
            times.append(packet.pts)
            end = max(end, packet.pts + (packet.duration or 0))
            if packet.is_keyframe:
                keys.append(packet.pts)
        damaged = damaged or packets.failed
        if not times or not keys or stream.time_base is None:
            return None
        return PacketIndex(
            stream.time_base, tuple(sorted(times)), tuple(sorted(keys)), end, damaged
        )


class PacketReader:
    """The stream's packets up to the end of the file or the first read error.

    A read error ends the input, as it does for the ffmpeg program, and sets `failed`.
    The demuxer's empty end-of-stream packet does not come after an error, so a caller
    that decodes flushes its decoder itself.
    """

    def __init__(self, container: av.container.InputContainer, stream: av.VideoStream) -> None:
        self._packets = container.demux(stream)
        self.failed = False

    def __iter__(self) -> Iterator[av.Packet[av.VideoStream]]:
        while True:
            try:
                packet = next(self._packets)
            except StopIteration:
                return
            except av.FFmpegError:
                self.failed = True
                return
            yield packet
