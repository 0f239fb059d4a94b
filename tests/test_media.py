"""Frames and images as the model receives them, against independent decoding."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from hss_inspect.commands.cli import main as cli_main
from hss_inspect.core.settings import FrameSettings
from hss_inspect.media import cache_folder, frame_cache, frame_files
from hss_inspect.media.errors import MediaError
from hss_inspect.media.image import prepare_image, shrink_jpegs_to_budget
from hss_inspect.media.video import sample_video
from tests.support.fixture_repo import write_image, write_video


def decoded_times(path: Path) -> list[float]:
    """Every frame's presentation time from the first, by a plain full decode."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        pts = [f.pts for f in container.decode(stream)]
        return [float((p - pts[0]) * stream.time_base) for p in pts]


def expected_source_times(times: list[float], duration: float, fps: float, cap: int) -> list[float]:
    """Equation 1 and the fps-filter rule, computed directly."""
    rate = min(fps, cap / duration)
    count = max(1, min(math.floor(fps * duration), cap))
    chosen = []
    for slot in range(count):
        before = [t for t in times if t < (slot + 0.5) / rate]
        chosen.append(before[-1])
    return chosen


@pytest.mark.parametrize(
    ("name", "kwargs", "settings"),
    [
        ("cfr.mp4", {"fps": 30, "seconds": 4.0}, FrameSettings()),
        ("cfr_capped.mp4", {"fps": 25, "seconds": 8.0}, FrameSettings(max_frames=5)),
        ("vp9.webm", {"codec": "libvpx-vp9", "fps": 24, "seconds": 3.0}, FrameSettings()),
        (
            "hevc.mp4",
            {
                "codec": "libx265",
                "fps": 30,
                "seconds": 2.0,
                "options": {"x265-params": "log-level=none"},
            },
            FrameSettings(fps=3.0),
        ),
    ],
)
def test_frames_follow_the_reference_rule(
    tmp_path: Path, name: str, kwargs: dict, settings: FrameSettings
) -> None:
    path = tmp_path / name
    write_video(path, **kwargs)
    video = sample_video(path, settings)
    times = decoded_times(path)
    with av.open(str(path)) as container:
        duration = container.duration / 1_000_000
    assert video.duration == pytest.approx(duration)
    expected = expected_source_times(times, duration, settings.fps, settings.max_frames)
    assert list(video.source_times) == pytest.approx(expected)
    rate = min(settings.fps, settings.max_frames / duration)
    assert list(video.timestamps) == pytest.approx([i / rate for i in range(len(expected))])


def test_variable_frame_rate_clip(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    gaps = rng.choice([1 / 60, 1 / 30, 1 / 10, 0.35], size=60)
    frame_times = [0.0, *np.cumsum(gaps)[:-1].tolist()]
    path = tmp_path / "vfr.mp4"
    write_video(path, fps=30, frame_times=frame_times)
    video = sample_video(path, FrameSettings())
    times = decoded_times(path)
    assert times == pytest.approx(frame_times, abs=1e-3)
    expected = expected_source_times(times, video.duration, 2.0, 500)
    assert list(video.source_times) == pytest.approx(expected)


def test_rotation_metadata_is_applied_like_the_ffmpeg_program(tmp_path: Path) -> None:
    path = tmp_path / "rot.mp4"
    write_video(path, fps=10, seconds=1.0, size=(96, 64), rotation=90)
    video = sample_video(path, FrameSettings())
    image = Image.open(io.BytesIO(video.jpegs[0])).convert("RGB")
    assert image.size == (64, 96)
    # Source: red left half, blue right half. Turned a quarter counter-clockwise,
    # the right (blue) half ends on top, as `ffmpeg -i rot.mp4 out.png` shows it.
    top = np.asarray(image)[10:30, 20:44].mean(axis=(0, 1))
    bottom = np.asarray(image)[70:90, 20:44].mean(axis=(0, 1))
    assert top[2] > 150 > top[0]
    assert bottom[0] > 150 > bottom[2]


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="the ffmpeg program is not installed")
def test_rotated_frame_matches_ffmpeg_program_output(tmp_path: Path) -> None:
    path = tmp_path / "rot270.mp4"
    write_video(path, fps=10, seconds=1.0, size=(96, 64), rotation=270)
    video = sample_video(path, FrameSettings())
    out = tmp_path / "ffmpeg.png"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-i", str(path), "-frames:v", "1", str(out)], check=True
    )
    ours = np.asarray(Image.open(io.BytesIO(video.jpegs[0])).convert("RGB"), dtype=float)
    theirs = np.asarray(Image.open(out).convert("RGB"), dtype=float)
    assert ours.shape == theirs.shape
    assert np.abs(ours - theirs).mean() < 12


def test_long_side_is_capped_and_never_upscaled(tmp_path: Path) -> None:
    big, small = tmp_path / "big.mp4", tmp_path / "small.mp4"
    write_video(big, fps=5, seconds=1.0, size=(1280, 720))
    write_video(small, fps=5, seconds=1.0, size=(320, 240))
    big_frame = Image.open(io.BytesIO(sample_video(big, FrameSettings()).jpegs[0]))
    small_frame = Image.open(io.BytesIO(sample_video(small, FrameSettings()).jpegs[0]))
    assert big_frame.size == (768, 432)
    assert small_frame.size == (320, 240)


def test_thinned_frames_keep_their_labels(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    write_video(path, fps=30, seconds=5.0)
    full = sample_video(path, FrameSettings())
    thinned = sample_video(path, FrameSettings(max_images=4))
    assert full.planned_frames == 10 and len(full.jpegs) == 10
    assert thinned.thinned and len(thinned.jpegs) == 4
    picked = [0, 3, 6, 9]
    assert list(thinned.timestamps) == [full.timestamps[i] for i in picked]
    assert list(thinned.source_times) == [full.source_times[i] for i in picked]


def test_undecodable_video_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.mp4"
    path.write_bytes(b"\x00" * 1000)
    with pytest.raises(MediaError, match=r"broken\.mp4"):
        sample_video(path, FrameSettings())


def test_small_images_are_sent_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "exif.jpg"
    write_image(path, (80, 40), "JPEG", orientation=6)
    prepared = prepare_image(path, 4096, 4_500_000)[0]
    assert prepared.data == path.read_bytes()
    assert not prepared.reencoded
    assert (prepared.width, prepared.height) == (40, 80)


def test_oversized_exif_image_is_reencoded_upright_within_limits(tmp_path: Path) -> None:
    path = tmp_path / "wide.jpg"
    write_image(path, (600, 200), "JPEG", orientation=6)  # displayed 200 wide, 600 tall
    prepared = prepare_image(path, 300, 4_500_000)[0]
    image = Image.open(io.BytesIO(prepared.data))
    assert prepared.reencoded and prepared.mime == "image/jpeg"
    assert image.size == (100, 300)
    assert "exif" not in image.info or Image.open(io.BytesIO(prepared.data)).getexif().get(
        0x0112
    ) in (None, 1)


def test_image_byte_limit_is_met(tmp_path: Path) -> None:
    path = tmp_path / "noise.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (400, 400, 3), dtype=np.uint8)).save(
        path
    )
    prepared = prepare_image(path, 4096, 60_000)[0]
    assert len(prepared.data) <= 60_000 < path.stat().st_size


def test_frame_byte_budget_shrinks_every_frame(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    write_video(path, fps=10, seconds=2.0, size=(640, 480))
    video = sample_video(path, FrameSettings())
    total = sum(len(j) for j in video.jpegs)
    shrunk = shrink_jpegs_to_budget(list(video.jpegs), total // 3, 90)
    assert sum(len(j) for j in shrunk) <= total // 3
    sizes = {Image.open(io.BytesIO(j)).size for j in shrunk}
    assert len(sizes) == 1 and next(iter(sizes))[0] < 640


def test_corrupt_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    write_video(path, fps=30, seconds=2.0)
    first = frame_cache.cached_sample_video(path, FrameSettings())
    entry = next((cache_folder.cache_root() / "frames").iterdir())
    blob = bytearray((entry / frame_files.FRAME_URIS).read_bytes())
    blob[len(blob) // 2] ^= 0x01  # same size, one flipped bit
    (entry / frame_files.FRAME_URIS).write_bytes(bytes(blob))
    assert frame_files.read_frames(entry) is None
    assert frame_cache.cached_sample_video(path, FrameSettings()) == first


def test_frames_command_writes_what_the_model_sees(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    write_video(path, fps=30, seconds=3.0)
    out = tmp_path / "out"
    assert cli_main(["frames", str(path), "--out", str(out), "--max-images", "4"]) == 0
    manifest = json.loads((out / "frames.json").read_text())
    assert manifest["duration"] == pytest.approx(3.0)
    assert manifest["effective_fps"] == 2.0
    # 6 planned slots thinned to 4: round(j * 5 / 3) for j = 0..3 is 0, 2, 3, 5.
    assert manifest["timestamps"] == [0.0, 1.0, 1.5, 2.5]
    jpgs = sorted(out.glob("frame_*.jpg"))
    assert [p.name for p in jpgs] == [f"frame_{i:05d}.jpg" for i in range(4)]
    assert [p.read_bytes() for p in jpgs] == list(
        sample_video(path, FrameSettings(max_images=4)).jpegs
    )
    # A second, smaller run into the same folder leaves no stale frames behind.
    assert (
        cli_main(["frames", str(path), "--out", str(out), "--max-images", "2", "--no-cache"]) == 0
    )
    assert len(list(out.glob("frame_*.jpg"))) == 2


def test_partial_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    write_video(path, fps=30, seconds=2.0)
    first = frame_cache.cached_sample_video(path, FrameSettings())
    entry = next((cache_folder.cache_root() / "frames").iterdir())
    uris = entry / frame_files.FRAME_URIS
    uris.write_bytes(uris.read_bytes()[:100])
    assert frame_files.read_frames(entry) is None
    (entry / "frames.json").unlink()
    assert frame_files.read_frames(entry) is None
    assert frame_cache.cached_sample_video(path, FrameSettings()) == first


def test_a_cache_entry_gives_its_frames_digests_without_hashing_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request's record carries each frame's SHA-256 (for rebuild-frames); read from the
    entry's manifest, they cost no hashing per request, and a thinned set keeps its own."""
    import hashlib

    from hss_inspect.media import video as video_module
    from hss_inspect.media.video import thinned_video

    clip = tmp_path / "clip.mp4"
    write_video(clip, fps=10, seconds=3.0)
    settings = FrameSettings(fps=5.0)
    made = frame_cache.cached_sample_video(clip, settings)
    expected = tuple(hashlib.sha256(j).hexdigest() for j in made.jpegs)

    real, hashed = hashlib.sha256, []

    def watched(data: bytes = b"", **kwargs: object) -> object:
        hashed.append(bytes(data))
        return real(data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(video_module.hashlib, "sha256", watched)
    read = frame_cache.cached_sample_video(clip, settings)
    assert read.jpegs == made.jpegs and read.frame_sha256 == expected
    thinned = thinned_video(read, 4)
    assert len(thinned.jpegs) == 4
    assert thinned.frame_sha256 == tuple(expected[made.jpegs.index(j)] for j in thinned.jpegs)
    assert not set(hashed) & set(made.jpegs), "a frame was hashed"
