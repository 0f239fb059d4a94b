"""How large a `.eval` log grows on realistic video, and what a full HSS run would write.

Builds a small release of 500-frame clips whose frames carry the detail of real footage
(a 1280x720 scene of fine random texture, x264 at CRF 18: 768 px JPEG frames of about
80 KB), runs `inspect eval hss_inspect/hss_video` over it with the scripted models of
`tests/support` at 3 epochs, once logging images (Inspect's default) and once with
`--no-log-images`, and extrapolates the measured bytes per logged frame to the paper's
234 clips at 3 epochs.

    python -m benchmarks.log_size [--clips 3] [--epochs 3] [--json out.json]
        [--clips-dir benchmarks/.log_size_release]   (the clips are encoded once, then reused)
"""

from __future__ import annotations

import argparse
import json
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from PIL import Image

from hss_inspect.core.settings import DEFAULT_FRAMES
from tests.support.runs import run_eval
from tests.support.servers import scripted_models

HSS_VIDEO_CLIPS = 234  # the paper's video tasks (Sec. 2, Table 1)
CLIP_SECONDS = 250  # at 2 fps, exactly the 500-frame cap
SOURCE_FPS = 2


def _scene(seed: int, width: int = 1280, height: int = 720) -> np.ndarray:
    """A detailed scene twice the frame width: 20 px random cells, smoothed, with grain."""
    rng = np.random.default_rng(seed)
    cell = 20
    coarse = rng.integers(0, 255, (height // cell + 2, 2 * width // cell + 2, 3), dtype=np.uint8)
    smooth = Image.fromarray(coarse).resize(
        (2 * width + 2 * cell, height + 2 * cell), Image.Resampling.BICUBIC
    )
    pixels = np.asarray(smooth)[:height, : 2 * width].astype(np.int16)
    grain = rng.integers(-6, 7, pixels.shape)
    return np.clip(pixels + grain, 0, 255).astype(np.uint8)


def write_detailed_clip(path: Path, seed: int) -> None:
    """250 s at 2 fps: every source frame is one sampled frame, each panned a little."""
    scene = _scene(seed)
    width = scene.shape[1] // 2
    with av.open(str(path), "w") as container:
        stream = container.add_stream(
            "libx264", rate=SOURCE_FPS, options={"preset": "veryfast", "crf": "18"}
        )
        stream.width, stream.height, stream.pix_fmt = width, scene.shape[0], "yuv420p"
        for index in range(CLIP_SECONDS * SOURCE_FPS):
            offset = (index * 7) % width
            pixels = np.ascontiguousarray(scene[:, offset : offset + width])
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts, frame.time_base = index, Fraction(1, SOURCE_FPS)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def build_release(root: Path, clips: int) -> Path:
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "media").mkdir(exist_ok=True)
    rows = []
    for index in range(clips):
        media_path = f"media/clip_{index}.mp4"
        write_detailed_clip(root / media_path, seed=index)
        rows.append(
            {
                "task_id": f"clip-{index}",
                "domain": "Temporal & Causal Dynamics",
                "subdomain": "Extrapolation",
                "media_type": "video",
                "media_path": media_path,
                "prompt": "What happens next? [PASS]",
                "golden_response": "It keeps moving.",
                "rubric_criteria": [{"id": "c1", "title": "Says it keeps moving"}],
            }
        )
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def measure(release: Path, work: Path, epochs: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    env = {"HSS_INSPECT_CACHE": str(work / "cache")}
    with scripted_models(work / "server", log_requests=False) as (base_url, _):
        for label, extra in (("images_logged", []), ("no_log_images", ["--no-log-images"])):
            log_dir = work / label
            log, done = run_eval(
                "hss_inspect/hss_video",
                log_dir,
                base_url,
                *extra,
                task_args={"dataset": release},
                epochs=epochs,
                env=env,
                timeout=3600,
            )
            if log.status != "success":
                raise RuntimeError(f"{label} run failed:\n{done.stderr[-3000:]}")
            samples = log.samples or []
            frames = sum(s.metadata["sent_media"]["frame_count"] for s in samples)
            sent = sum(s.metadata["sent_media"]["bytes"] for s in samples)
            (log_file,) = log_dir.glob("*.eval")
            results[label] = {
                "log_bytes": log_file.stat().st_size,
                "sample_epochs": len(samples),
                "frames_sent": frames,
                "frame_bytes_sent": sent,
            }
    return results


def extrapolate(measured: dict[str, Any]) -> dict[str, Any]:
    """Bytes per logged frame, scaled to 234 clips at the 500-frame cap over 3 epochs."""
    full_frames = HSS_VIDEO_CLIPS * DEFAULT_FRAMES.max_frames * 3
    out: dict[str, Any] = {"full_run_frames": full_frames}
    for label, row in measured.items():
        per_frame = row["log_bytes"] / row["frames_sent"]
        out[label] = {
            "log_bytes_per_frame": round(per_frame),
            "log_mb_per_sample_epoch": round(row["log_bytes"] / row["sample_epochs"] / 1e6, 2),
            "full_run_gb": round(per_frame * full_frames / 1e9, 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clips", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--clips-dir", type=Path, default=Path("benchmarks/.log_size_release"))
    args = parser.parse_args()
    release = args.clips_dir
    if not (release / "data" / "test.jsonl").is_file():
        build_release(release, args.clips)
    with tempfile.TemporaryDirectory(prefix="hss-log-size-") as scratch:
        measured = measure(release, Path(scratch), args.epochs)
    report = {"measured": measured, "extrapolated": extrapolate(measured)}
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
