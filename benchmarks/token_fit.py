"""How many frames of the hold-out-length clips each model family gets per context window,
and one request of them measured on the wire at a vLLM stand-in.

The clips: 10 minutes at 1280x720 and 28 minutes at 854x480 (the lengths of HSS's long
clips; both become 768x432 frames at the protocol's 768 px side), encoded once at 2 fps
with the detailed scene of `benchmarks/log_size.py`. For each model family, the frames are
fitted exactly as a run fits them (`conditions.turn.fitted_frames`, the same plan, rules
and constants) to windows of 32k, 128k, 200k and 1M tokens with 4,096 kept for the output.
Then `inspect eval` sends the clips to the stand-in of vLLM's API
(tests/support/vllm_server.py: Qwen2.5-VL's rule, text counted as bytes) through Inspect's
real `vllm/` provider, and the stand-in records the request body and its token count.

    python -m benchmarks.token_fit [--json benchmarks/results_token_fit.json]
        [--clips-dir benchmarks/.token_fit_release]   (the clips are encoded once, reused)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np

from benchmarks.log_size import _scene
from hss_inspect.conditions.turn import fitted_frames
from hss_inspect.core.settings import MediaSettings
from hss_inspect.providers.fit import DoesNotFit, TokenBudget
from hss_inspect.providers.limits import applied_limits, frame_settings_for
from tests.support.runs import run_eval
from tests.support.servers import provider_stand_in, scripted_models

CLIPS = {
    "10 min": ("holdout_10min.mp4", 1280, 720, 600),
    "28 min": ("holdout_28min.mp4", 854, 480, 1680),
}
WINDOWS = (32_768, 131_072, 200_000, 1_000_000)
OUTPUT = 4096
MODELS = {
    "Qwen2.5-VL": "vllm/Qwen/Qwen2.5-VL-7B-Instruct",
    "Qwen3-VL": "vllm/Qwen/Qwen3-VL-8B-Instruct",
    "Gemma 3": "vllm/google/gemma-3-27b-it",
    "InternVL3": "vllm/OpenGVLab/InternVL3-8B",
    "Claude (vision guide)": "anthropic/claude-opus-5",
}
QUESTION = "What happens next, and why? [PASS]"
QWEN25 = {"factor": 28, "min_pixels": 3136, "max_pixels": 12_845_056}


def write_clip(path: Path, width: int, height: int, seconds: int) -> None:
    """A detailed scene panning a little each frame, 2 fps (one source frame per slot)."""
    scene = _scene(seed=seconds, width=width, height=height)
    with av.open(str(path), "w") as container:
        stream = container.add_stream(
            "libx264", rate=2, options={"preset": "veryfast", "crf": "18"}
        )
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for index in range(seconds * 2):
            offset = (index * 7) % width
            pixels = np.ascontiguousarray(scene[:, offset : offset + width])
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts, frame.time_base = index, Fraction(1, 2)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


def build_release(root: Path) -> Path:
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "media").mkdir(exist_ok=True)
    rows = []
    for label, (name, width, height, seconds) in CLIPS.items():
        if not (root / "media" / name).exists():
            write_clip(root / "media" / name, width, height, seconds)
        rows.append(
            {
                "task_id": name.removesuffix(".mp4"),
                "domain": "Temporal & Causal Dynamics",
                "subdomain": "Extrapolation",
                "media_type": "video",
                "media_path": f"media/{name}",
                "prompt": QUESTION,
                "golden_response": f"The {label} clip goes on.",
                "rubric_criteria": [{"id": "c1", "title": "Says it goes on"}],
            }
        )
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


async def fit_of(path: Path, model: str, window: int) -> dict[str, Any]:
    media = MediaSettings()
    limits = applied_limits(media, model)
    frames = frame_settings_for(media, limits)
    budget = TokenBudget(window, "option", f"{window}", OUTPUT, "fixed for the table")
    try:
        _, fit = await fitted_frames(path, frames, limits, limits.token_rule, budget, QUESTION)
    except DoesNotFit:
        return {"frames": 0}
    assert fit is not None and budget.input_tokens is not None
    # everything the fit counts: the input budget less what it left unused
    margin = math.ceil(limits.fit.margin * budget.input_tokens)
    unused = fit.available - fit.image_tokens - fit.label_tokens
    return {
        "frames": fit.frames,
        "side": max(fit.size),
        "size": list(fit.size),
        "image_tokens": fit.image_tokens,
        "estimated_tokens": budget.input_tokens - margin - unused,
    }


def table(release: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for label, (name, *_) in CLIPS.items():
        path = release / "media" / name
        for family, model in MODELS.items():
            for window in WINDOWS:
                rows[f"{label} | {family} | {window}"] = asyncio.run(fit_of(path, model, window))
    return rows


def on_the_wire(release: Path, work: Path) -> list[dict[str, Any]]:
    """Each clip sent to a Qwen2.5-VL stand-in with a 32k and a 128k window."""
    measured = []
    with scripted_models(work / "judge", log_requests=False) as (judge_url, _):
        for window in (32_768, 131_072):
            config = {
                "model": "Qwen/Qwen2.5-VL-7B-Instruct",
                "max_model_len": window,
                "qwen": QWEN25,
            }
            with provider_stand_in(work / f"vllm-{window}", config, "vllm_server.py") as (
                url,
                wire,
            ):
                log, done = run_eval(
                    "hss_inspect/hss_video",
                    work / f"logs-{window}",
                    judge_url,
                    "--model-base-url",
                    f"{url}/v1",
                    "--max-tokens",
                    str(OUTPUT),
                    "--no-log-images",
                    model="vllm/Qwen/Qwen2.5-VL-7B-Instruct",
                    epochs=1,
                    task_args={"dataset": release},
                    env={"HSS_INSPECT_CACHE": str(work / "cache")},
                    timeout=3600,
                )
                if log.status != "success":
                    raise RuntimeError(done.stderr[-3000:])
                entries = [json.loads(line) for line in wire.read_text().splitlines()]
            for sample in log.samples or []:
                sent = sample.metadata["sent_media"]
                lasting = f"lasting {sent['duration']:.2f} seconds"
                [entry] = [e for e in entries if lasting in e["texts"][0]]
                measured.append(
                    {
                        "task": sample.id,
                        "window": window,
                        "status": entry["status"],
                        "frames_sent": len(entry["images"]),
                        "frame_size": [entry["images"][0]["width"], entry["images"][0]["height"]],
                        "request_bytes_on_wire": entry["body_bytes"],
                        "prompt_tokens_at_server": entry["prompt_tokens"],
                        "estimated_tokens": sent["token_fit"]["estimated_tokens"],
                        "estimated_request_bytes": sent["payload"]["estimated_request_bytes"],
                    }
                )
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--clips-dir", type=Path, default=Path("benchmarks/.token_fit_release"))
    args = parser.parse_args()
    release = build_release(args.clips_dir)
    report: dict[str, Any] = {"output_reserve": OUTPUT, "table": table(release)}
    with tempfile.TemporaryDirectory(prefix="hss-token-fit-") as scratch:
        report["wire"] = on_the_wire(release, Path(scratch))
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
