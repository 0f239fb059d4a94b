"""How fast a build's pages show their media, with 10 people working at once on a pool of 200
items, and the server's memory.

The pool: 200 items, 139 photos (1920x1080 JPEG), 59 clips (20-78 s, 640x360, with an
audio track the server strips), a 4K photo and a 2-minute clip. First, in headless Chromium, the
time from the request of an author's item page to its media shown (the 4K image decoded,
the 2-minute clip ready to play) on a freshly started `hss-inspect build serve`,
`--repeats` times, side by side with the same bytes in a plain page served as static files
(the floor: Starlette's StaticFiles). Then 10 people at once over HTTP (5 authors writing
and submitting tasks on free items, 5 reviewers deciding every round dealt to them until
all is reviewed): each page request followed by its media, timed from the page's request to
the media's last byte, against the same requests of a static site at the same concurrency;
and the server's resident memory after start and at its peak (VmHWM).

    python -m benchmarks.bench_build [--repeats 3] [--tasks-per-author 8]
        [--json benchmarks/results_build.json]
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
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from PIL import Image

from benchmarks.bench_human import (
    BROWSER_ARGS,
    CHROMIUM,
    SHOWN,
    encode_clip,
    medians,
    peak_rss_mb,
    ratios,
    serve_static,
    static_page,
    time_to_shown,
)
from tests.support.human_study import HSS_INSPECT, Server
from tests.support.servers import free_port

AUTHORS, REVIEWERS = 5, 5
LINK = re.compile(r"^  (author|reviewer) (\S+): http://\S+/b/(\S+)$", re.M)


def make_pool(pool: Path) -> None:
    rng = np.random.default_rng(0)
    for n in range(139):
        photo = rng.integers(0, 60, (1080, 1920, 3), dtype=np.uint8) + np.uint8(n % 150)
        Image.fromarray(photo).save(pool / f"photo_{n:03d}.jpg", quality=85)
    for n in range(59):
        encode_clip(pool / f"clip_{n:02d}.mp4", 20 + n, 10, (640, 360), audio=True)
    photo = (
        rng.integers(0, 40, (2160, 3840, 3), dtype=np.uint8)
        + np.linspace(0, 200, 3840, dtype=np.uint8)[None, :, None]
    )
    Image.fromarray(photo).save(pool / "zz_photo_4k.jpg", quality=90)
    encode_clip(pool / "zz_clip_2min.mp4", 120, 25, (854, 480), audio=True)


def new_build(path: Path, pool: Path, env: dict[str, str]) -> tuple[dict[str, str], float]:
    started = time.perf_counter()
    done = subprocess.run(
        [HSS_INSPECT, "build", "new", str(path), "--pool", str(pool), "--authors", str(AUTHORS),
         "--reviewers", str(REVIEWERS)], env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    return {f"{role}:{name}": token for role, name, token in LINK.findall(done.stdout)}, seconds


def item_ids(path: Path) -> dict[str, str]:
    from hss_inspect.construction.store import pool_items

    return {item.path: item.item_id for item, _, _ in pool_items(path)}


# ---- time to shown, in Chromium ----------------------------------------------------------


def shown_on_fresh_server(
    browser: Any, build: Path, url_path: str, shown: str, env: dict[str, str]
) -> float:
    server = Server(build, env, free_port(), command="build")
    server.start()
    try:
        return time_to_shown(browser, f"{server.base}{url_path}", shown)
    finally:
        server.kill()


# ---- 10 people at once ----------------------------------------------------------------


class Timings:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seconds: list[float] = []
        self.failures: list[str] = []

    def add(self, seconds: float) -> None:
        with self.lock:
            self.seconds.append(seconds)


def page_then_media(client: httpx.Client, url: str, timings: Timings) -> str:
    """GET a page, then every media it names; the time to the last byte of the media."""
    started = time.perf_counter()
    page = client.get(url)
    sources = [html.unescape(s) for s in re.findall(r'src="(/b/[^"]+)"', page.text)]
    for source in sources:
        if client.get(source).status_code != 200:
            timings.failures.append(source)
    if sources:
        timings.add(time.perf_counter() - started)
    return page.text


def author_works(base: str, token: str, items: list[str], timings: Timings) -> None:
    with httpx.Client(base_url=base, timeout=300) as client:
        for item_id in items:
            client.get(f"/b/{token}")  # the home page: their tasks and the pool's 200 rows
            page_then_media(client, f"/b/{token}/item/{item_id}", timings)
            form = {
                "item_id": item_id, "task_id": "", "opened_at": str(time.time()),
                "subdomain": "Retrodiction", "prompt": "What happened just before?",
                "reference": "It fell.", "criteria": "Says it fell", "action": "submit",
            }  # fmt: skip
            if client.post(f"/b/{token}/task", data=form).status_code != 303:
                timings.failures.append(f"submit {item_id}")


def reviewer_works(base: str, token: str, all_done: threading.Event, timings: Timings) -> None:
    with httpx.Client(base_url=base, timeout=300) as client:
        while True:
            page = page_then_media(client, f"/b/{token}", timings)
            found = re.search(
                r'name=task_id value="([^"]+)">.*?name=revision value="(\d+)">.*?'
                r'name=round value="(\d+)">', page, re.S,
            )  # fmt: skip
            if found is None:
                if all_done.is_set():
                    return
                time.sleep(0.2)
                continue
            task_id, revision, round_ = found.groups()
            verdict = "drop" if (int(task_id.rsplit("-", 1)[1]) + int(round_)) % 4 == 0 else "pass"
            form = {"task_id": task_id, "revision": revision, "round": round_,
                    "verdict": verdict, "reason": "no_consensus"}  # fmt: skip
            if client.post(f"/b/{token}/verdict", data=form).status_code != 303:
                timings.failures.append(f"verdict {task_id}")


def people_at_once(
    build: Path, tokens: dict[str, str], items: list[str], per_author: int, env: dict[str, str]
) -> dict[str, Any]:
    server = Server(build, env, free_port(), command="build")
    server.start()
    assert server.process is not None
    timings = Timings()
    authored = threading.Event()
    try:
        idle = peak_rss_mb(server.process.pid)
        authors = [t for k, t in tokens.items() if k.startswith("author:")]
        reviewers = [t for k, t in tokens.items() if k.startswith("reviewer:")]
        started = time.perf_counter()
        writers = [
            threading.Thread(target=author_works, args=(server.base, token,
                             items[n * per_author:(n + 1) * per_author], timings))
            for n, token in enumerate(authors)
        ]  # fmt: skip
        readers = [
            threading.Thread(target=reviewer_works, args=(server.base, t, authored, timings))
            for t in reviewers
        ]
        for worker in writers + readers:
            worker.start()
        for worker in writers:
            worker.join()
        authored.set()
        for worker in readers:
            worker.join()
        return {
            "people": len(writers) + len(readers),
            "seconds": round(time.perf_counter() - started, 2),
            "media_pages": len(timings.seconds),
            "page_to_media_s": quantiles(timings.seconds),
            "server_rss_mb_after_start": round(idle, 1),
            "server_peak_rss_mb": round(peak_rss_mb(server.process.pid), 1),
            "failed_requests": len(timings.failures),
        }
    finally:
        server.kill()


def static_at_once(site: Path, requests: list[str], people: int) -> dict[str, Any]:
    """The same page-then-media requests of a static site, `people` at once."""
    process, base = serve_static(site)
    timings = Timings()
    shares = [requests[n::people] for n in range(people)]

    def work(share: list[str]) -> None:
        with httpx.Client(base_url=base, timeout=300) as client:
            for page in share:
                started = time.perf_counter()
                text = client.get(page).text
                for source in re.findall(r'src="([^"]+)"', text):
                    client.get("/" + source)
                timings.add(time.perf_counter() - started)

    try:
        workers = [threading.Thread(target=work, args=(share,)) for share in shares]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        return {"page_to_media_s": quantiles(timings.seconds)}
    finally:
        process.kill()


def say(text: str) -> None:
    print(f"bench_build: {text}", file=sys.stderr, flush=True)


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 4),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 4),
        "max": round(ordered[-1], 4),
    }


def static_site(pool: Path, work: Path, paths: list[str]) -> tuple[Path, list[str]]:
    """One plain page per pool file, holding it as the build's page does."""
    site = work / "static"
    site.mkdir(parents=True)
    pages = []
    for n, path in enumerate(paths):
        shutil.copy(pool / path, site / path)
        tag = (
            f'<video controls preload=auto src="{path}"></video>'
            if path.endswith(".mp4")
            else f'<img src="{path}">'
        )
        static_page(site, f"p{n}.html", tag)
        pages.append(f"/p{n}.html")
    return site, pages


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks-per-author", type=int, default=8)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--pool", type=Path, help="keep the generated pool here, for a rerun")
    args = parser.parse_args()
    assert CHROMIUM, "Debian's chromium is needed"
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        env = {**os.environ, "HSS_INSPECT_CACHE": str(work / "cache")}
        pool = args.pool or work / "pool"
        if not (pool / "zz_clip_2min.mp4").is_file():
            pool.mkdir(parents=True, exist_ok=True)
            say("making the pool of 200 items")
            make_pool(pool)
        build = work / "build.sqlite"
        tokens, made_in = new_build(build, pool, env)
        ids = item_ids(build)
        author = next(t for k, t in tokens.items() if k.startswith("author:"))
        site, _ = static_site(pool, work, ["zz_photo_4k.jpg", "zz_clip_2min.mp4"])
        static, static_base = serve_static(site)
        cases = {
            "4K image": (ids["zz_photo_4k.jpg"], SHOWN["image"], "/p0.html"),
            "2-min clip": (ids["zz_clip_2min.mp4"], SHOWN["video"], "/p1.html"),
        }
        times: dict[str, dict[str, list[float]]] = {}
        say("time to shown, in Chromium")
        try:
            with sync_playwright() as driver:
                browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
                for name, (item_id, shown, floor) in cases.items():
                    times[name] = {"build": [], "static": []}
                    for _ in range(args.repeats):
                        url = f"/b/{author}/item/{item_id}"
                        times[name]["build"].append(
                            shown_on_fresh_server(browser, build, url, shown, env)
                        )
                        times[name]["static"].append(
                            time_to_shown(browser, f"{static_base}{floor}", shown)
                        )
                browser.close()
        finally:
            static.kill()
        say("10 people at once")
        free = [item_id for path, item_id in sorted(ids.items()) if not path.startswith("zz_")]
        crowd = people_at_once(build, tokens, free, args.tasks_per_author, env)
        chosen = [p for p in sorted(ids) if not p.startswith("zz_")][
            : AUTHORS * args.tasks_per_author
        ]
        site2, pages = static_site(pool, work / "floor", chosen)
        floor = static_at_once(site2, pages * (crowd["media_pages"] // max(len(pages), 1) or 1),
                               AUTHORS + REVIEWERS)  # fmt: skip
        summary: dict[str, Any] = {
            "pool_items": len(ids),
            "build_new_seconds": round(made_in, 1),
            "repeats": args.repeats,
            "median_seconds_to_shown": medians(times),
            "ratio_build_over_static": ratios(times, "build", "static"),
            "people_at_once": crowd,
            "static_at_once": floor,
            "ratio_page_to_media_median": round(
                crowd["page_to_media_s"]["median"] / floor["page_to_media_s"]["median"], 2
            ),
        }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
