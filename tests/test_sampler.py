"""The fast sampler against the plain one and against the ffmpeg program's own choice.

`_decode_streaming` decodes every frame and applies the rule to what comes out: the
reference. `_decode_indexed` reads the packet index, seeks, skips unneeded frames and
must deliver exactly the same bytes.
"""

from __future__ import annotations

import io
import math
import shutil
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media import probe, video
from hss_inspect.media.plan import plan_frames
from tests.support.fixture_repo import read_index, write_video

SMALL = (320, 240)
CODECS = {
    "h264_bframes": ("libx264", {"g": "30", "bf": "3", "preset": "veryfast"}),
    "h264_open_gop": ("libx264", {"preset": "veryfast", "x264-params": "keyint=40:open-gop=1"}),
    "hevc": ("libx265", {"preset": "ultrafast", "x265-params": "log-level=none:keyint=30"}),
    "vp9": ("libvpx-vp9", {"deadline": "realtime", "cpu-used": "8", "g": "30"}),
    "av1": ("libsvtav1", {"preset": "12", "g": "30"}),
}
PLANS = {
    "dense": FrameSettings(),
    "capped": FrameSettings(max_frames=7),
    "thinned": FrameSettings(fps=3.0, max_images=5),
    "sparse": FrameSettings(max_frames=3, frame_side=160),
}


def clip(folder: Path, codec_key: str, **extra: object) -> Path:
    codec, options = CODECS[codec_key]
    path = folder / f"{codec_key}.{'webm' if codec == 'libvpx-vp9' else 'mp4'}"
    if not path.exists():
        write_video(
            path,
            codec=codec,
            fps=30,
            seconds=10.0,
            size=SMALL,
            options=options,
            numbered=True,
            **extra,
        )  # type: ignore[arg-type]
    return path


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("clips")


@pytest.mark.parametrize("plan_key", list(PLANS))
@pytest.mark.parametrize("codec_key", list(CODECS))
def test_indexed_sampler_delivers_the_reference_bytes(
    clips: Path, codec_key: str, plan_key: str
) -> None:
    path = clip(clips, codec_key)
    settings = PLANS[plan_key]
    plan = plan_frames(probe.probe_duration(path), settings)
    index = probe.read_packet_index(path)
    assert index is not None
    fast = video._decode_indexed(path, plan, settings, index)
    slow = video._decode_streaming(path, plan, settings)
    assert fast is not None, "the indexed decoder fell back"
    assert fast.source_times == slow.source_times
    assert fast.jpegs == slow.jpegs


def test_variable_frame_rate_and_rotation_through_the_indexed_sampler(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    times = np.cumsum(rng.choice([1 / 60, 1 / 30, 1 / 8, 0.4], size=150)).tolist()
    path = tmp_path / "vfr_rot.mp4"
    write_video(
        path,
        fps=30,
        frame_times=[0.0, *times[:-1]],
        rotation=270,
        size=SMALL,
        options={"g": "20"},
        numbered=True,
    )
    settings = FrameSettings(max_frames=9)
    plan = plan_frames(probe.probe_duration(path), settings)
    index = probe.read_packet_index(path)
    assert index is not None
    fast = video._decode_indexed(path, plan, settings, index)
    slow = video._decode_streaming(path, plan, settings)
    assert fast is not None and fast.jpegs == slow.jpegs and fast.rotation == 270


@pytest.mark.skipif(
    int(av.__version__.split(".")[0]) < 16,
    reason="PyAV < 16 (lmms-eval's pin): av.Packet is an immutable type, its decode unpatchable",
)
def test_sparse_plan_decodes_fewer_frames(clips: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = clip(clips, "h264_bframes")
    decoded = 0
    original = av.Packet.decode

    def counting(packet: av.Packet) -> list[av.VideoFrame]:
        nonlocal decoded
        frames = original(packet)
        decoded += len(frames)
        return frames

    monkeypatch.setattr(av.Packet, "decode", counting)
    settings = FrameSettings(max_frames=3)
    plan = plan_frames(probe.probe_duration(path), settings)
    index = probe.read_packet_index(path)
    assert index is not None
    assert video._decode_indexed(path, plan, settings, index) is not None
    assert 3 <= decoded < 300 / 3


def ffmpeg_choice(path: Path, rate: str, count: int, out: Path) -> list[int]:
    """Source frame indices the ffmpeg program's fps filter emits, read from its pixels."""
    out.mkdir()
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-i",
            str(path),
            "-vf",
            f"fps={rate}",
            "-frames:v",
            str(count),
            str(out / "f_%05d.png"),
        ],
        check=True,
    )
    return [read_index(np.asarray(Image.open(p).convert("L"))) for p in sorted(out.glob("*.png"))]


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="the ffmpeg program is not installed")
@pytest.mark.parametrize(
    ("codec_key", "settings", "rate"),
    [
        ("h264_bframes", FrameSettings(), "2"),
        ("h264_bframes", FrameSettings(max_frames=8), "4/5"),
        ("hevc", FrameSettings(fps=3.0), "3"),
        ("vp9", FrameSettings(), "2"),
        ("av1", FrameSettings(max_frames=5), "1/2"),
    ],
)
def test_same_source_frames_as_the_ffmpeg_program(
    clips: Path, tmp_path: Path, codec_key: str, settings: FrameSettings, rate: str
) -> None:
    path = clip(clips, codec_key)
    ours = video.sample_video(path, settings)
    assert ours.effective_fps == pytest.approx(eval(rate))
    ours_idx = [read_index(np.asarray(Image.open(io.BytesIO(j)).convert("L"))) for j in ours.jpegs]
    theirs = ffmpeg_choice(path, rate, len(ours.jpegs), tmp_path / "ff")
    assert len(theirs) == len(ours_idx)
    exact = sum(a == b for a, b in zip(ours_idx, theirs, strict=True)) / len(theirs)
    assert exact >= 0.95, (ours_idx, theirs)
    assert max(abs(a - b) for a, b in zip(ours_idx, theirs, strict=True)) <= 1


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="the ffmpeg program is not installed")
def test_variable_rate_clip_matches_the_ffmpeg_program(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    gaps = rng.choice([1 / 60, 1 / 30, 1 / 12, 0.3], size=200)
    path = tmp_path / "vfr.mp4"
    write_video(
        path,
        fps=30,
        frame_times=[0.0, *np.cumsum(gaps)[:-1].tolist()],
        size=SMALL,
        options={"g": "25", "bf": "2"},
        numbered=True,
    )
    ours = video.sample_video(path, FrameSettings())
    ours_idx = [read_index(np.asarray(Image.open(io.BytesIO(j)).convert("L"))) for j in ours.jpegs]
    theirs = ffmpeg_choice(path, "2", len(ours.jpegs), tmp_path / "ff")
    exact = sum(a == b for a, b in zip(ours_idx, theirs, strict=True)) / len(theirs)
    assert exact >= 0.95, (ours_idx, theirs)
    assert max(abs(a - b) for a, b in zip(ours_idx, theirs, strict=True)) <= 1
    assert not math.isnan(ours.duration)


def test_runs_split_at_keyframes_without_sharing_a_keyframe() -> None:
    from fractions import Fraction

    # 300 packets, a keyframe every 30.
    index = probe.PacketIndex(Fraction(1, 30), tuple(range(300)), tuple(range(0, 300, 30)), 300)
    wanted = [5, 20, 35, 61, 62, 150, 299]
    runs = video.split_at_keyframes(wanted, index, 2)
    assert [p for run in runs for p in run] == wanted
    assert len(runs) == 2
    keyframes_of = [{index.keyframe_at_or_before(p) for p in run} for run in runs]
    assert not keyframes_of[0] & keyframes_of[1]
    assert video.split_at_keyframes([5, 20], index, 4) == [[5, 20]]
    assert video.split_at_keyframes(wanted, index, 1) == [wanted]


def test_one_scaler_for_many_frames_gives_each_frame_its_own_bytes(tmp_path: Path) -> None:
    """The encoder's shared swscale context equals a fresh one per frame, across sizes."""
    from av.video.reformatter import VideoReformatter

    sources = []
    for name, size in (("a.mp4", (320, 240)), ("b.mp4", (200, 300))):
        write_video(tmp_path / name, fps=10, seconds=1.0, size=size, numbered=True)
        with av.open(str(tmp_path / name)) as container:
            sources.append(list(container.decode(video=0))[:4])
    shared = VideoReformatter()
    for first, second in zip(*sources, strict=True):
        for frame in (first, second):
            ours = video._scaled_image(frame, 160, 0, shared)
            fresh = frame.reformat(
                width=ours.width, height=ours.height, format="rgb24", interpolation="LANCZOS"
            ).to_image()
            assert ours.tobytes() == fresh.tobytes()
