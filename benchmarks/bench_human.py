"""How fast a human study shows its media, and the server's memory with 20 annotators.

Builds a release of three tasks at full size: a 2-minute 854x480 clip with an audio track,
a 4K (3840x2160) JPEG, and a 250 s clip whose frames view holds 500 frames (2 fps, the
500-frame cap). For each, a fresh headless Chromium context opens the annotator's page on a
freshly started `hss-inspect human serve`, and the time from the request to the media
shown is taken (the image decoded, the clip's first frame ready to play, the first frame
of the frames view decoded), `--repeats` times, side by side with the same bytes in a
plain page served as static files (the floor: Starlette's StaticFiles). Then 20 annotators
answer every task at once over HTTP (each page, all its media, its answer), and the
server's peak resident memory (VmHWM) is read, in each view.

    python -m benchmarks.bench_human [--repeats 3] [--annotators 20]
        [--screenshots DIR] [--json benchmarks/results_human.json]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import httpx
import numpy as np
from PIL import Image

from tests.support.human_study import Server, human
from tests.support.servers import free_port

CHROMIUM = shutil.which("chromium")
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run"]
# (task id, media type, media file, what shows it in the page)
TASKS = (
    ("clip-2min", "video", "clip_2min.mp4"),
    ("image-4k", "image", "image_4k.jpg"),
    ("clip-500-frames", "video", "clip_250s.mp4"),
)
SHOWN = {
    "image": "(() => { const i = document.querySelector('img'); "
    "return i && i.complete && i.naturalWidth > 0; })()",
    "video": "(() => { const v = document.querySelector('video'); "
    "return v && v.readyState >= 2; })()",
}


def encode_clip(path: Path, seconds: float, fps: int, size: tuple[int, int], audio: bool) -> None:
    width, height = size
    ramp = np.linspace(0, 255, width, dtype=np.float32)
    with av.open(str(path), "w") as container:
        video = container.add_stream("libx264", rate=fps, options={"preset": "ultrafast"})
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        sound = container.add_stream("aac", rate=16000) if audio else None
        for index in range(round(seconds * fps)):
            row = (ramp + index * 3) % 256
            pixels = np.broadcast_to(row[None, :, None], (height, width, 3)).astype(np.uint8)
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels), format="rgb24")
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(video.encode(frame))
        container.mux(video.encode())
        if sound is not None:
            tone = np.sin(np.arange(int(16000 * seconds)) / 5.0).astype(np.float32)
            for start in range(0, len(tone), 1024):
                chunk = av.AudioFrame.from_ndarray(
                    tone[start : start + 1024].reshape(1, -1), format="flt", layout="mono"
                )
                chunk.sample_rate, chunk.pts = 16000, start
                chunk.time_base = Fraction(1, 16000)
                container.mux(sound.encode(chunk))
            container.mux(sound.encode())


def build_release(root: Path) -> Path:
    media = root / "media"
    media.mkdir(parents=True)
    encode_clip(media / "clip_2min.mp4", 120, 25, (854, 480), audio=True)
    encode_clip(media / "clip_250s.mp4", 250, 10, (640, 360), audio=False)
    rng = np.random.default_rng(0)
    photo = (
        rng.integers(0, 40, (2160, 3840, 3), dtype=np.uint8)
        + np.linspace(0, 200, 3840, dtype=np.uint8)[None, :, None]
    )
    Image.fromarray(photo).save(media / "image_4k.jpg", quality=90)
    rows = [
        {
            "task_id": task_id,
            "domain": "Physical & Spatial Logic",
            "subdomain": "Hidden & Invisible",
            "media_type": media_type,
            "media_path": f"media/{file}",
            "prompt": f"What happens in {task_id}?",
            "golden_response": "kept from annotators",
            "rubric_criteria": [{"id": "c1", "title": "kept from annotators"}],
        }
        for task_id, media_type, file in TASKS
    ]
    (root / "data").mkdir()
    (root / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def new_study(path: Path, release: Path, view: str, annotators: int, env: dict[str, str]) -> dict:
    done = human(
        "new", str(path), "--dataset", str(release), "--annotators", str(annotators),
        "--answers-per-task", str(annotators), "--view", view, env=env,
    )  # fmt: skip
    return dict(re.findall(r"^  (\S+): http://\S+/a/(\S+)$", done.stdout, re.M))


# ---- time to shown ----------------------------------------------------------------------


def time_to_shown(browser: Any, url: str, shown: str, screenshot: Path | None = None) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    started = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(shown, polling=5, timeout=60_000)
    seconds = time.perf_counter() - started
    if screenshot is not None:
        page.wait_for_timeout(300)
        page.screenshot(path=str(screenshot))
    context.close()
    return seconds


def study_page_shows(
    browser: Any, study: Path, token: str, task_id: str, shown: str, env: dict[str, str],
    screenshot: Path | None,
) -> float:  # fmt: skip
    """Open the annotator's page on a fresh server, after answering up to `task_id`."""
    server = Server(study, env, free_port())
    server.start()
    try:
        with httpx.Client(base_url=server.base, timeout=120) as client:
            while f'value="{task_id}"' not in client.get(f"/a/{token}").text:
                current = re.search(r'name=task_id value="([^"]+)"', client.get(f"/a/{token}").text)
                assert current, "the study ended before the task"
                form = {"task_id": current.group(1), "answer": "-", "confidence": "sure"}
                client.post(f"/a/{token}/answer", data=form)
        server.kill()  # the measured request meets a server that has read nothing yet
        server.start()
        return time_to_shown(browser, f"{server.base}/a/{token}", shown, screenshot)
    finally:
        server.kill()


def static_page(folder: Path, name: str, body: str) -> None:
    (folder / name).write_text(f"<!doctype html><html><body>{body}</body></html>")


def static_floor(
    release: Path, frames: list[bytes], work: Path
) -> dict[str, Callable[[Any], float]]:
    """The same bytes as a plain page over StaticFiles, for each measurement."""
    site = work / "static"
    (site / "frames").mkdir(parents=True)
    shutil.copy(release / "media" / "clip_2min.mp4", site / "clip.mp4")
    shutil.copy(release / "media" / "image_4k.jpg", site / "image.jpg")
    for n, jpeg in enumerate(frames):
        (site / "frames" / f"{n}.jpg").write_bytes(jpeg)
    static_page(site, "image.html", '<img src="image.jpg" style="max-width:100%">')
    static_page(site, "clip.html", '<video controls preload=auto src="clip.mp4"></video>')
    figures = "".join(f'<img loading=lazy src="frames/{n}.jpg">' for n in range(len(frames)))
    static_page(site, "frames.html", figures)
    return {"site": site}  # type: ignore[dict-item]


def serve_static(site: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    code = (
        "import uvicorn, sys; from starlette.applications import Starlette; "
        "from starlette.staticfiles import StaticFiles; "
        f"uvicorn.run(StaticFiles(directory={str(site)!r}), host='127.0.0.1', port={port}, "
        "log_level='warning')"
    )
    # its 404 for /favicon.ico is no news
    process = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/image.html", timeout=1)
            return process, base
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the static server did not start")


def served_frames(study: Path, token: str, env: dict[str, str]) -> list[bytes]:
    """The 500 JPEGs the frames view serves for the long clip."""
    server = Server(study, env, free_port())
    server.start()
    try:
        with httpx.Client(base_url=server.base, timeout=120) as client:
            page = client.get(f"/a/{token}").text
            while 'value="clip-500-frames"' not in page:
                current = re.search(r'name=task_id value="([^"]+)"', page)
                assert current
                form = {"task_id": current.group(1), "answer": "-", "confidence": "sure"}
                client.post(f"/a/{token}/answer", data=form)
                page = client.get(f"/a/{token}").text
            sources = re.findall(r'<img loading=lazy src="([^"]+)"', page)
            return [client.get(html.unescape(s)).content for s in sources]
    finally:
        server.kill()


# ---- 20 annotators at once --------------------------------------------------------------


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]


def answer_everything(base: str, token: str, failures: list[str]) -> None:
    with httpx.Client(base_url=base, timeout=300) as client:
        while True:
            page = client.get(f"/a/{token}").text
            current = re.search(r'name=task_id value="([^"]+)"', page)
            if current is None:
                return
            for source in re.findall(r'src="(/a/[^"]+)"', page):
                if client.get(html.unescape(source)).status_code != 200:
                    failures.append(source)
            form = {"task_id": current.group(1), "answer": "An answer.", "confidence": "sure"}
            if client.post(f"/a/{token}/answer", data=form).status_code != 303:
                failures.append(current.group(1))


def many_at_once(study: Path, tokens: dict[str, str], env: dict[str, str]) -> dict[str, Any]:
    server = Server(study, env, free_port())
    server.start()
    assert server.process is not None
    try:
        idle = peak_rss_mb(server.process.pid)
        failures: list[str] = []
        started = time.perf_counter()
        workers = [
            threading.Thread(target=answer_everything, args=(server.base, t, failures))
            for t in tokens.values()
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        return {
            "annotators": len(tokens),
            "seconds": round(time.perf_counter() - started, 2),
            "server_rss_mb_after_start": round(idle, 1),
            "server_peak_rss_mb": round(peak_rss_mb(server.process.pid), 1),
            "failed_requests": len(failures),
        }
    finally:
        server.kill()


def medians(times: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    """Each case's median seconds, per side."""
    return {
        name: {side: round(statistics.median(v), 3) for side, v in t.items()}
        for name, t in times.items()
    }


def ratios(times: dict[str, dict[str, list[float]]], ours: str, floor: str) -> dict[str, float]:
    """Each case's median on our side over the floor's."""
    return {
        name: round(statistics.median(t[ours]) / statistics.median(t[floor]), 2)
        for name, t in times.items()
    }


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--screenshots", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    assert CHROMIUM, "Debian's chromium is needed"
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        env = {**os.environ, "HSS_INSPECT_CACHE": str(work / "cache")}
        release = build_release(work / "release")
        # each measurement takes a fresh annotator (answers are final); the load test too
        timing = 2 * args.repeats + 2
        studies = {
            view: (path, new_study(path, release, view, timing, env))
            for view in ("media", "frames")
            for path in [work / f"{view}.sqlite"]
        }
        media_tokens = studies["media"][1]
        frames_study, frames_tokens = studies["frames"]
        fresh = {"media": iter(media_tokens.values()), "frames": iter(frames_tokens.values())}
        frames = served_frames(frames_study, next(fresh["frames"]), env)
        site = static_floor(release, frames, work)["site"]
        static, static_base = serve_static(site)  # type: ignore[arg-type]
        first_frame = SHOWN["image"].replace(
            "querySelector('img')", "querySelector('.frames img, img')"
        )
        cases = {
            "2-min clip": ("media", "clip-2min", SHOWN["video"], "clip.html"),
            "4K image": ("media", "image-4k", SHOWN["image"], "image.html"),
            "500-frame frames view": ("frames", "clip-500-frames", first_frame, "frames.html"),
        }
        times: dict[str, dict[str, list[float]]] = {}
        try:
            with sync_playwright() as driver:
                browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
                for name, (view, task_id, shown, floor_page) in cases.items():
                    study = studies[view][0]
                    times[name] = {"study": [], "static": []}
                    for repeat in range(args.repeats):
                        shot = None
                        if args.screenshots and repeat == 0:
                            args.screenshots.mkdir(parents=True, exist_ok=True)
                            shot = args.screenshots / f"{task_id}.png"
                        token = next(fresh[view])
                        times[name]["study"].append(
                            study_page_shows(browser, study, token, task_id, shown, env, shot)
                        )
                        times[name]["static"].append(
                            time_to_shown(browser, f"{static_base}/{floor_page}", shown)
                        )
                browser.close()
        finally:
            static.kill()
        summary: dict[str, Any] = {
            "repeats": args.repeats,
            "frames_in_frames_view": len(frames),
            "median_seconds_to_shown": medians(times),
            "ratio_study_over_static": ratios(times, "study", "static"),
            "all_under_1_s": all(statistics.median(t["study"]) < 1 for t in times.values()),
        }
        summary["annotators_at_once"] = {}
        for view in ("media", "frames"):
            crowd = work / f"crowd-{view}.sqlite"
            tokens = new_study(crowd, release, view, args.annotators, env)
            summary["annotators_at_once"][view] = many_at_once(crowd, tokens, env)
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
