"""Clips whose data ends before their declared duration, against the ffmpeg program.

Each fixture is a PyAV-encoded clip with its bytes cut off, as an interrupted download
leaves it. The reference is what the `ffmpeg` program's `fps` filter emits for the cut
file (read back from the frames' drawn indices) and what `ffprobe` decodes.
"""

from __future__ import annotations

import asyncio
import io
import shutil
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from hss_inspect.conditions.turn import frames_content
from hss_inspect.core.settings import FrameSettings, MediaSettings
from hss_inspect.media import probe, video
from hss_inspect.media.errors import MediaError
from hss_inspect.media.plan import plan_frames, thin_uniformly
from tests.support.fixture_repo import read_index, write_video

needs_ffmpeg = pytest.mark.skipif(
    shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
    reason="the ffmpeg program is not installed",
)
H264 = {"g": "30", "bf": "2", "preset": "veryfast"}
LAYOUTS = {
    "faststart": ("libx264", H264, {"movflags": "faststart"}, "mp4"),
    "fragmented": ("libx264", H264, {"movflags": "frag_keyframe+empty_moov"}, "mp4"),
    "webm_vp9": ("libvpx-vp9", {"deadline": "realtime", "cpu-used": "8", "g": "30"}, {}, "webm"),
}


def whole_clip(folder: Path, layout: str) -> Path:
    codec, options, container_options, ext = LAYOUTS[layout]
    path = folder / f"{layout}.{ext}"
    if not path.exists():
        write_video(
            path,
            codec=codec,
            fps=30,
            seconds=4.0,
            size=(160, 120),
            options=options,
            container_options=container_options,
            numbered=True,
        )
    return path


def cut(source: Path, keep: float, out: Path) -> Path:
    data = source.read_bytes()
    out.write_bytes(data[: int(len(data) * keep)])
    return out


def ffmpeg_indices(path: Path, rate: str, out: Path) -> list[int]:
    """Every frame the ffmpeg program's fps filter emits for the file, as source indices.

    Single-threaded: with frame threading, the frames in flight when a decoding error is
    reported are lost, so the output for a damaged file would depend on the core count.
    """
    out.mkdir()
    subprocess.run(
        [
            *("ffmpeg", "-v", "quiet", "-threads", "1", "-i", str(path)),
            *("-vf", f"fps={rate}", str(out / "%05d.png")),
        ],
        check=False,  # a cut file makes ffmpeg report errors; its frames are the reference
    )
    return [read_index(np.asarray(Image.open(p).convert("L"))) for p in sorted(out.glob("*.png"))]


def ffprobe_span(path: Path) -> float:
    """From the first decoded frame's start to the last one's end, by ffprobe."""
    lines = subprocess.run(
        [
            "ffprobe",
            "-v",
            "quiet",
            "-select_streams",
            "v:0",
            "-show_entries",
            "frame=best_effort_timestamp_time,pkt_duration_time",
            "-of",
            "csv=p=0",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    frames = [tuple(float(v) for v in line.split(",")[:2]) for line in lines if "," in line]
    return frames[-1][0] + frames[-1][1] - frames[0][0]


def sent_indices(sampled: video.SampledVideo) -> list[int]:
    return [read_index(np.asarray(Image.open(io.BytesIO(j)).convert("L"))) for j in sampled.jpegs]


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("whole")


@needs_ffmpeg
@pytest.mark.parametrize("keep", [0.19, 0.37, 0.5, 0.71, 0.93])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_cut_clip_gets_the_frames_the_ffmpeg_program_emits(
    clips: Path, tmp_path: Path, layout: str, keep: float
) -> None:
    source = whole_clip(clips, layout)
    path = cut(source, keep, tmp_path / f"cut{source.suffix}")
    settings = FrameSettings()
    theirs = ffmpeg_indices(path, "2", tmp_path / "ff")
    if not theirs:  # the cut leaves no frame that decodes (the first keyframe is cut)
        with pytest.raises(MediaError, match=r"cut\.\w+: (no decodable video|cannot decode)"):
            video.sample_video(path, settings)
        return
    ours = video.sample_video(path, settings)
    declared = probe.probe_duration(path)
    planned = plan_frames(declared, settings).planned_frames
    # The reference harness takes at most N frames (from the declared duration).
    assert sent_indices(ours) == theirs[:planned]
    assert ours.timestamps == pytest.approx([i / 2 for i in range(len(theirs[:planned]))])
    if len(theirs) < planned:
        assert ours.truncation is not None
        assert ours.truncation.declared_duration == pytest.approx(declared)
        assert ours.truncation.decodable_duration == pytest.approx(ffprobe_span(path), abs=1e-3)
        assert ours.truncation.frames_dropped == planned - len(theirs)
        # The model is told the span it sees, not the length the container claims.
        assert ours.duration == ours.truncation.decodable_duration
    else:
        assert ours.truncation is None and ours.duration == declared


@needs_ffmpeg
def test_faststart_cut_loses_frames_and_fragmented_cut_shortens_the_declared_duration(
    clips: Path, tmp_path: Path
) -> None:
    faststart = cut(whole_clip(clips, "faststart"), 0.5, tmp_path / "f.mp4")
    fragmented = cut(whole_clip(clips, "fragmented"), 0.5, tmp_path / "g.mp4")
    # A faststart file keeps its full index: the container still says 4 s.
    assert probe.probe_duration(faststart) == pytest.approx(4.0)
    assert video.sample_video(faststart, FrameSettings()).truncation is not None
    # A fragmented file's duration comes from the fragments that are there.
    assert probe.probe_duration(fragmented) < 3.0


@needs_ffmpeg
def test_clean_cut_at_a_packet_takes_the_indexed_path_with_the_same_result(
    clips: Path, tmp_path: Path
) -> None:
    source = whole_clip(clips, "faststart")
    with av.open(str(source)) as container:
        positions = [p.pos for p in container.demux(video=0) if p.size and p.pos is not None]
    path = tmp_path / "clean.mp4"
    path.write_bytes(source.read_bytes()[: sorted(positions)[len(positions) // 2 + 3]])
    index = probe.read_packet_index(path)
    assert index is not None and not index.damaged
    settings = FrameSettings(max_images=4)
    plan = plan_frames(probe.probe_duration(path), settings, index.span)
    fast = video._decode_indexed(path, plan, settings, index)
    slow = video._decode_streaming(path, plan_frames(plan.duration, settings), settings)
    assert fast is not None
    assert fast.jpegs == slow.jpegs and fast.truncation == slow.truncation
    theirs = ffmpeg_indices(path, "2", tmp_path / "ff")
    assert sent_indices(fast) == [theirs[i] for i in thin_uniformly(len(theirs), 4)]


@needs_ffmpeg
def test_damaged_cut_with_thinning_matches_the_ffmpeg_program_thinned(
    clips: Path, tmp_path: Path
) -> None:
    path = cut(whole_clip(clips, "faststart"), 0.62, tmp_path / "cut.mp4")
    index = probe.read_packet_index(path)
    assert index is not None and index.damaged  # the last packet is cut in two
    ours = video.sample_video(path, FrameSettings(fps=3.0, max_images=5))
    theirs = ffmpeg_indices(path, "3", tmp_path / "ff")
    assert ours.planned_frames == len(theirs) and ours.thinned
    assert sent_indices(ours) == [theirs[i] for i in thin_uniformly(len(theirs), 5)]


@needs_ffmpeg
def test_the_note_and_the_record_say_what_is_sent(clips: Path, tmp_path: Path) -> None:
    path = cut(whole_clip(clips, "faststart"), 0.4, tmp_path / "cut.mp4")
    settings = MediaSettings().frames
    content, record = asyncio.run(frames_content(path, settings, 32_000_000))
    theirs = ffmpeg_indices(path, "2", tmp_path / "ff")
    span = ffprobe_span(path)
    note = content[0].text  # type: ignore[union-attr]
    assert f"{len(theirs)} frames" in note
    assert f"lasting {span:.2f} seconds" in note
    labels = [c.text for c in content[1:] if c.type == "text"]  # type: ignore[union-attr]
    assert labels == [f"Frame at {i / 2:.2f} s:" for i in range(len(theirs))]
    assert record["frame_count"] == len(theirs)
    assert record["truncation"] == {
        "declared_duration": pytest.approx(4.0),
        "decodable_duration": pytest.approx(span, abs=1e-3),
        "frames_dropped": 8 - len(theirs),
    }


def test_moov_at_end_cut_is_refused_naming_the_file_and_the_cause(tmp_path: Path) -> None:
    whole = tmp_path / "whole.mp4"
    write_video(whole, fps=30, seconds=2.0)
    path = cut(whole, 0.8, tmp_path / "moov_lost.mp4")
    for call in (
        lambda: video.sample_video(path, FrameSettings()),
        lambda: probe.probe_duration(path),
    ):
        with pytest.raises(MediaError, match=r"moov_lost\.mp4.*cut short"):
            call()


def test_a_clip_with_no_decodable_frame_is_refused(tmp_path: Path) -> None:
    whole = tmp_path / "whole.mp4"
    write_video(whole, fps=30, seconds=2.0, container_options={"movflags": "faststart"})
    with av.open(str(whole)) as container:
        first = min(p.pos for p in container.demux(video=0) if p.size and p.pos is not None)
    path = tmp_path / "header_only.mp4"
    path.write_bytes(whole.read_bytes()[: first + 10])
    with pytest.raises(MediaError, match=r"header_only\.mp4"):
        video.sample_video(path, FrameSettings())


@needs_ffmpeg
@pytest.mark.parametrize("layout", ["faststart", "webm_vp9"])
def test_clip_with_zeroed_bytes_mid_file_matches_the_ffmpeg_program(
    clips: Path, tmp_path: Path, layout: str
) -> None:
    source = whole_clip(clips, layout)
    data = bytearray(source.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 3000] = bytes(3000)
    path = tmp_path / f"zeroed{source.suffix}"
    path.write_bytes(bytes(data))
    settings = FrameSettings()
    ours = video.sample_video(path, settings)
    theirs = ffmpeg_indices(path, "2", tmp_path / "ff")
    planned = plan_frames(probe.probe_duration(path), settings).planned_frames
    assert sent_indices(ours) == theirs[:planned]
