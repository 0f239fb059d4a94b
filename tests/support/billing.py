"""Runs whose bill is measured: an HSS-format release of clips and photographs at the sizes
HSS sends, a provider stand-in that caches and bills as its provider documents
(tests/support/prompt_cache.py) on a fast clock, and each run's billed input from Inspect's
own recorded usage and prices (`--model-cost-config`), never from the package's arithmetic.

Both the stand-in and `inspect` run under `faketime` at the same speed, so an epoch of a few
real seconds is tens of minutes on both clocks: the gap between attempts that a full run has.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import numpy as np
from inspect_ai.log import EvalLog
from PIL import Image

from tests.support.fixture_repo import FixtureTask, build_repo
from tests.support.runs import INSPECT, run_eval
from tests.support.servers import provider_stand_in

# $ per million tokens. The cache prices keep the providers' documented ratios to input
# (Anthropic: 5-minute writes 1.25x, reads 0.1x; OpenAI from GPT-5.6: writes 1.25x, reads
# 0.1x).
PRICES: dict[str, dict[str, float]] = {
    "anthropic/claude-opus-5": {
        "input": 5.0,
        "output": 25.0,
        "input_cache_write": 6.25,
        "input_cache_read": 0.5,
    },
    "openai/gpt-6-astra": {
        "input": 2.5,
        "output": 15.0,
        "input_cache_write": 3.125,
        "input_cache_read": 0.25,
    },
}
# the stand-in's rules: caching as documented, Claude Opus 5's 512-token minimum
CACHING_RULES: dict[str, object] = {"prompt_cache": True, "anthropic_min_tokens": 512}
FRAME_SIZE = (768, 432)


def billing_release(
    root: Path, videos: int, images: int, seconds: float = 20.0, behaviour: str = "PASS"
) -> Path:
    """`videos` clips of `seconds` at 768x432 (40 frames each at 2 fps for 20 s) and
    `images` 1280x720 photographs, each its own task."""
    tasks = [
        _task(f"vid-{i:02d}", behaviour, "video", f"media/bill_{i:02d}.mp4") for i in range(videos)
    ]
    tasks += [
        _task(f"img-{i:02d}", behaviour, "image", f"media/bill_{i:02d}.jpg") for i in range(images)
    ]
    build_repo(root, tuple(tasks))
    name_the_task_in_its_question(root / "data" / "test.jsonl")
    for i in range(videos):
        write_clip(root / "media" / f"bill_{i:02d}.mp4", seed=i, seconds=seconds)
    for i in range(images):
        Image.fromarray(blocks(np.random.default_rng(1000 + i), (1280, 720))).save(
            root / "media" / f"bill_{i:02d}.jpg", quality=90
        )
    return root


def _task(task_id: str, behaviour: str, media_type: str, path: str) -> FixtureTask:
    criteria = ({"id": "c1", "title": "States the key fact"},)
    domain, subdomain = "Temporal & Causal Dynamics", "Retrodiction"
    return FixtureTask(task_id, behaviour, domain, subdomain, media_type, path, criteria)


def name_the_task_in_its_question(rows: Path) -> None:
    """`What happens in vid-00? [PASS]`: the stand-in's log then tells the tasks apart."""
    lines = [json.loads(line) for line in rows.read_text().splitlines()]
    for row in lines:
        row["prompt"] = row["prompt"].replace(
            "What happens here?", f"What happens in {row['task_id']}?"
        )
    rows.write_text("".join(json.dumps(row) + "\n" for row in lines))


def blocks(rng: np.random.Generator, size: tuple[int, int], cell: int = 16) -> np.ndarray:
    """A picture of coloured cells: cheap to encode, and different for every seed (so no
    two tasks share a cached prefix by accident)."""
    width, height = size
    grid = rng.integers(0, 256, (height // cell, width // cell, 3), dtype=np.uint8)
    return np.kron(grid, np.ones((cell, cell, 1), dtype=np.uint8))


def write_clip(path: Path, seed: int, seconds: float, fps: int = 10) -> None:
    """A 768x432 clip whose cells drift frame by frame."""
    rng = np.random.default_rng(seed)
    picture = blocks(rng, FRAME_SIZE)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps, options={"preset": "ultrafast"})
        stream.width, stream.height = FRAME_SIZE
        stream.pix_fmt = "yuv420p"
        for index in range(round(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(np.roll(picture, index * 4, axis=1), "rgb24")
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


@dataclass(frozen=True)
class BilledRun:
    log: EvalLog
    wire: list[dict[str, Any]]
    model: str

    @property
    def usage(self) -> Any:
        return self.log.stats.model_usage[self.model]

    @property
    def billed(self) -> float:
        """Dollars Inspect recorded for the model under evaluation."""
        cost = self.usage.total_cost
        assert cost is not None, "Inspect recorded no cost: was --model-cost-config given?"
        return float(cost)

    @property
    def billed_input(self) -> float:
        """Inspect's recorded cost less its output tokens at the output price: the input."""
        return self.billed - self.usage.output_tokens * PRICES[self.model]["output"] / 1e6

    @property
    def input_tokens(self) -> int:
        usage = self.usage
        return int(
            usage.input_tokens
            + (usage.input_tokens_cache_write or 0)
            + (usage.input_tokens_cache_read or 0)
        )

    @property
    def plain_input(self) -> float:
        """What the same input tokens cost with no cache at all."""
        return self.input_tokens * PRICES[self.model]["input"] / 1e6


def faketime(speed: float) -> tuple[str, ...]:
    clear_stale_faketime()
    return ("faketime", "-f", f"+0 x{speed:g}")


def clear_stale_faketime(shm: Path = Path("/dev/shm")) -> None:
    """The faketime wrapper names its shared memory and semaphore by its pid, and leaves them
    when it is stopped by a signal (as the stand-ins are); a later wrapper given the same
    pid then fails ("sem_open: File exists"). Remove those of processes that are gone."""
    for entry in shm.glob("*faketime_*_*"):
        pid = entry.name.rsplit("_", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            entry.unlink(missing_ok=True)


def billed_run(
    model: str,
    release: Path,
    workdir: Path,
    *args: str,
    task: str = "hss_inspect/hss",
    strategy: str = "plan",
    speed: float = 60.0,
    latency: float = 50.0,
    epochs: int = 3,
    rules: dict[str, object] | None = None,
    cache: Path | None = None,
    batch: bool = False,
) -> BilledRun:
    """One run of `model` on `release` against a caching stand-in answering each request in
    `latency` seconds, both on a clock `speed` times as fast, with `-T cache_plan=strategy`
    (empty: the option is not given); `batch`: through the provider's batch API, each
    batch sent at once and answered a latency later. The judge is the package's scripted
    model."""
    workdir.mkdir(parents=True, exist_ok=True)
    prices = workdir / "prices.json"
    prices.write_text(json.dumps({model: PRICES[model]}))
    stand_in_rules = {**CACHING_RULES, "latency_seconds": latency, **(rules or {})}
    if batch:
        config = workdir / "batch.yaml"
        config.write_text("size: 1\nsend_delay: 1\ntick: 1\n")
        args = ("--batch", str(config), *args)
        stand_in_rules = {**stand_in_rules, "latency_seconds": 0, "batch_seconds": latency}
    with provider_stand_in(workdir / "server", stand_in_rules, prefix=faketime(speed)) as (
        url,
        wire_file,
    ):
        env, program = _endpoint(model, url)
        log, done = run_eval(
            task,
            workdir / "logs",
            "",
            "--max-connections",
            "1",
            "--max-tokens",
            "1000",
            "--no-log-images",
            "--model-cost-config",
            str(prices),
            *args,
            model=model,
            grader="hss/scripted",
            epochs=epochs,
            task_args={"dataset": release, **({"cache_plan": strategy} if strategy else {})},
            env={"HSS_INSPECT_CACHE": str(cache or workdir / "media-cache"), **env},
            timeout=900,
            program=(*faketime(speed), *program),
        )
        wire = [json.loads(line) for line in wire_file.read_text().splitlines()]
    assert log.status == "success", f"{log.status}: {log.error}\n{done.stderr[-3000:]}"
    return BilledRun(log, wire, model)


def _endpoint(model: str, url: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """How `inspect` reaches the stand-in: Anthropic by its base URL; OpenAI as the SDK's
    default endpoint, so that Inspect treats it as the direct api.openai.com."""
    if model.startswith("anthropic/"):
        return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"}, (INSPECT,)
    env = {"HSS_TEST_OPENAI_ENDPOINT": f"{url}/v1", "OPENAI_API_KEY": "test-key"}
    return env, (sys.executable, "-m", "tests.support.direct_openai")
