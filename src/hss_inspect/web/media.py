"""The media people are shown (in a study, or while building tasks): an image as it is; a
clip without its audio track (the benchmark is the visual channel only: the track is
removed from what is served, not muted), kept in the media cache; or, in the frames view,
the frames and time labels a model is sent at the chosen settings, from the same cache and
code as a run's. All of it can be prepared ahead, so each page shows at once."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import av

from hss_inspect.conditions.prompt import frame_label
from hss_inspect.conditions.turn import frames_note
from hss_inspect.core.settings import FrameSettings, MediaSettings
from hss_inspect.media import service
from hss_inspect.media.cache_folder import cache_root
from hss_inspect.media.prepare import Fetch, PrepareJob, prepare_all
from hss_inspect.media.video import SampledVideo

# Frames kept in the server's memory between requests (each frame is its own request).
FRAMES_KEPT_BYTES = 512_000_000


@dataclass(frozen=True)
class ShownFrames:
    """The frames of one clip as a model receives them: the note before them, the JPEGs
    and each one's label."""

    note: str
    jpegs: tuple[bytes, ...]
    labels: tuple[str, ...]

    @property
    def size(self) -> int:
        return sum(len(jpeg) for jpeg in self.jpegs)


async def silent_clip(path: Path) -> Path:
    """The clip without its audio track, made once and kept in the media cache."""
    digest = await service.media_sha256(path)
    target = cache_root() / "human" / f"{digest}.mp4"
    if not target.is_file():
        await _in_thread(lambda: remux_without_audio(path, target))
    return target


async def _in_thread(work: object) -> None:
    import anyio

    await anyio.to_thread.run_sync(work)  # type: ignore[arg-type]


# The containers whose index can be moved to the start of the file (`movflags faststart`)
_FASTSTART = (".mp4", ".m4v", ".mov")


def remux_without_audio(source: Path, target: Path) -> None:
    """Copy the video stream's packets, and nothing else, into a new file (no re-encoding)
    of the container `target`'s suffix names; an MP4's index at the start, so that a browser
    plays it before it has all of it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=".partial-", suffix=target.suffix, dir=target.parent)
    os.close(handle)
    faststart = target.suffix.lower() in _FASTSTART
    # bitexact: no muxer version written, so the same clip gives the same bytes under any
    # PyAV (a release's fingerprints then change only when a clip does)
    options = {"fflags": "+bitexact", **({"movflags": "faststart"} if faststart else {})}
    try:
        with av.open(str(source)) as inp, av.open(staging, "w", options=options) as out:
            video = inp.streams.video[0]
            copy = out.add_stream_from_template(video)
            for packet in inp.demux(video):
                if packet.dts is None:
                    continue  # the demuxer's flush packet
                packet.stream = copy
                out.mux(packet)
        os.replace(staging, target)
    finally:
        if os.path.exists(staging):
            os.unlink(staging)


class FrameStore:
    """The frames shown by the frames view, kept in memory up to a bound, so a page's many
    frame requests read the cache entry once."""

    def __init__(self, settings: FrameSettings, byte_budget: int) -> None:
        self.settings, self.byte_budget = settings, byte_budget
        self.kept: OrderedDict[str, ShownFrames] = OrderedDict()
        self.kept_bytes = 0

    async def frames(self, path: Path) -> ShownFrames:
        key = str(path)
        if key in self.kept:
            self.kept.move_to_end(key)
            return self.kept[key]
        video = await service.video_frames(path, self.settings, self.byte_budget, None)
        if key in self.kept:  # another request read it while this one waited
            return self.kept[key]
        shown = shown_frames(video)
        self.kept[key] = shown
        self.kept_bytes += shown.size
        while len(self.kept) > 1 and self.kept_bytes > FRAMES_KEPT_BYTES:
            self.kept_bytes -= self.kept.popitem(last=False)[1].size
        return shown


def shown_frames(video: SampledVideo) -> ShownFrames:
    return ShownFrames(
        frames_note(video), tuple(video.jpegs), tuple(frame_label(t) for t in video.timestamps)
    )


@dataclass(frozen=True)
class Shown:
    """A media file people will be shown: the name an error gives it (a task, an item),
    its type and its path as `fetch` takes it."""

    name: str
    media_type: str
    media_path: str


def prepare_shown(
    shown: Sequence[Shown], fetch: Fetch, view: str, media: MediaSettings, jobs: int
) -> str:
    """Fill the cache with what people are shown, so each page shows at once: in the frames
    view each clip's frames at `media`'s settings; else each clip without its audio track
    (every file is fetched either way). One line saying what was done."""
    if view == "frames":
        unique = {s.media_path: s for s in shown}.values()
        work = [PrepareJob(s.name, s.media_type, s.media_path, (media,)) for s in unique]
        return "; ".join(prepare_all(fetch, work, jobs).lines())

    async def fetch_and_silence() -> int:
        for item in shown:
            path = fetch(item.media_path, item.name)
            if item.media_type == "video":
                await silent_clip(path)
        return sum(item.media_type == "video" for item in shown)

    clips = asyncio.run(fetch_and_silence())
    return f"fetched {len(shown)} media file(s); {clips} clip(s) kept without their audio track"
