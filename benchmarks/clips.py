"""The benchmark clips, encoded with PyAV's own encoders (x264, x265, libvpx, SVT-AV1).

Content is a textured scene panning steadily, so every frame differs and the decoder
does real work. Clips are written once into a folder and reused by later runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
import numpy as np


@dataclass(frozen=True)
class ClipSpec:
    name: str
    codec: str
    width: int
    height: int
    fps: int
    seconds: float
    options: dict[str, str] = field(default_factory=dict)
    rotation: int = 0
    variable_rate: bool = False

    @property
    def filename(self) -> str:
        return f"{self.name}.{'webm' if self.codec == 'libvpx-vp9' else 'mp4'}"


X264 = {"preset": "veryfast"}  # keeps x264's B-frames and its default keyframe spacing (250)

CLIPS: tuple[ClipSpec, ...] = (
    ClipSpec("h264_1080p_2min", "libx264", 1920, 1080, 30, 120, X264),
    ClipSpec("h264_720p_10min", "libx264", 1280, 720, 30, 600, X264),
    ClipSpec(
        "hevc_720p_1min",
        "libx265",
        1280,
        720,
        30,
        60,
        {"preset": "ultrafast", "x265-params": "log-level=none"},
    ),
    ClipSpec(
        "vp9_720p_1min",
        "libvpx-vp9",
        1280,
        720,
        30,
        60,
        {"deadline": "realtime", "cpu-used": "8", "row-mt": "1"},
    ),
    ClipSpec("av1_720p_1min", "libsvtav1", 1280, 720, 30, 60, {"preset": "12"}),
    ClipSpec("h264_480p_28min", "libx264", 854, 480, 30, 28 * 60, X264),
    ClipSpec("h264_720p_vfr_2min", "libx264", 1280, 720, 30, 120, X264, variable_rate=True),
    ClipSpec("h264_720p_rot90_1min", "libx264", 1280, 720, 30, 60, X264, rotation=90),
)


def _texture(width: int, height: int, seed: int = 7) -> np.ndarray:
    """A smooth random texture twice as wide as the frame, to pan across."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 255, (height // 8 + 1, width // 4 + 1, 3), dtype=np.uint8)
    texture = np.repeat(np.repeat(coarse, 8, axis=0), 8, axis=1)[:height, : 2 * width]
    noise = rng.integers(0, 24, texture.shape, dtype=np.uint8)
    return np.ascontiguousarray(texture + noise)


def _frame_times(spec: ClipSpec) -> Iterator[float]:
    """Constant rate, or a repeating pattern of 1/60 to 1/10 s gaps for variable rate."""
    if not spec.variable_rate:
        for index in range(round(spec.fps * spec.seconds)):
            yield index / spec.fps
        return
    gaps = (1 / 60, 1 / 30, 1 / 30, 1 / 10, 1 / 24)
    now, step = 0.0, 0
    while now < spec.seconds:
        yield now
        now += gaps[step % len(gaps)]
        step += 1


def write_clip(spec: ClipSpec, path: Path) -> None:
    texture = _texture(spec.width, spec.height)
    with av.open(str(path), "w") as container:
        stream = container.add_stream(spec.codec, rate=spec.fps, options=dict(spec.options))
        stream.width, stream.height, stream.pix_fmt = spec.width, spec.height, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        if spec.rotation:
            stream.set_display_rotation(spec.rotation)
        for time_s in _frame_times(spec):
            offset = int(time_s * 120) % spec.width
            pixels = texture[:, offset : offset + spec.width]
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels), format="rgb24")
            frame.pts, frame.time_base = round(time_s * 1000), Fraction(1, 1000)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def bench_arguments(doc: str | None, default_clips: Sequence[str] | None) -> argparse.Namespace:
    """The command line every benchmark over these clips takes: --repeats, --clips,
    --clip-dir and --json."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--clips",
        nargs="*",
        default=list(default_clips) if default_clips else None,
        help="names from benchmarks/clips.py",
    )
    parser.add_argument("--clip-dir", type=Path, default=Path("benchmarks/.clips"))
    parser.add_argument("--json", type=Path, default=None)
    return parser.parse_args()


def ensure_clips(folder: Path, names: list[str] | None = None) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for spec in CLIPS:
        if names and spec.name not in names:
            continue
        path = folder / spec.filename
        if not path.exists():
            started = time.perf_counter()
            partial = path.with_suffix(".partial" + path.suffix)
            write_clip(spec, partial)
            partial.rename(path)
            print(f"encoded {path.name} in {time.perf_counter() - started:.0f} s", flush=True)
        paths[spec.name] = path
    return paths


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("benchmarks/.clips"))
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    ensure_clips(args.dir, args.names or None)
