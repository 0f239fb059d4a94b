"""How fast a build's pages show their media, with 10 people working at once on a pool of 200
items, and the server's memory.

The pool: 200 items, 139 photos (1920x1080 JPEG), 59 clips (20-78 s, 640x360, with an
audio track the server strips), a 4K photo and a 2-minute clip.

First, in headless Chromium, the time from the request of an author's item page to its
media shown (the 4K image decoded, the 2-minute clip ready to play) on a freshly started
`hss-inspect build serve`, and again on the same server, `--repeats` times, side by side
with the same bytes (as the build serves them) in a plain page served as static files (the
floor: Starlette's StaticFiles).

Then 10 people at once over HTTP (5 authors writing and submitting tasks on free items
spread over the pool, 5 reviewers deciding every round dealt to them until all is
reviewed): each page request followed by its media, timed from the page's request to the
media's last byte, against pages of the same bytes on a static site at the same
concurrency; and the server's resident memory after start and at its peak (VmHWM).

    python -m benchmarks.bench_build [--repeats 3] [--tasks-per-author 8] [--pool DIR]
        [--json benchmarks/results_build.json]
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
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


def pool_items_of(path: Path) -> list[Any]:
    from hss_inspect.construction.store import pool_items

    return [item for item, _, _ in pool_items(path)]


def item_ids(path: Path) -> dict[str, str]:
    return {item.path: item.item_id for item in pool_items_of(path)}


# ---- time to shown, in Chromium ----------------------------------------------------------


def shown_on_fresh_server(
    browser: Any, build: Path, url_path: str, shown: str, env: dict[str, str]
) -> tuple[float, float]:
    """Seconds to shown on a server that has answered nothing yet, then on the same server
    again (each in a new browser context: nothing cached)."""
    server = Server(build, env, free_port(), command="build")
    server.start()
    try:
        fresh = time_to_shown(browser, f"{server.base}{url_path}", shown)
        return fresh, time_to_shown(browser, f"{server.base}{url_path}", shown)
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


def served_bytes(
    build: Path, token: str, item_ids: list[str], env: dict[str, str]
) -> dict[str, bytes]:
    """Each item's media as the build serves it (a clip without its audio track), so the
    static floor serves the very same bytes."""
    server = Server(build, env, free_port(), command="build")
    server.start()
    try:
        with httpx.Client(base_url=server.base, timeout=300) as client:
            return {i: client.get(f"/b/{token}/media/{i}").content for i in item_ids}
    finally:
        server.kill()


def static_site(work: Path, files: dict[str, tuple[str, bytes]]) -> tuple[Path, list[str]]:
    """One plain page per file (name -> media type and bytes), showing it as the build's
    page does."""
    site = work / "static"
    site.mkdir(parents=True)
    pages = []
    for n, (name, (media_type, data)) in enumerate(files.items()):
        (site / name).write_bytes(data)
        tag = (
            f'<video controls preload=auto src="{name}"></video>'
            if media_type == "video"
            else f'<img src="{name}">'
        )
        static_page(site, f"p{n}.html", tag)
        pages.append(f"/p{n}.html")
    return site, pages


def spread(items: list[str], count: int) -> list[str]:
    """`count` items spread evenly over the pool (images and clips alike)."""
    step = max(1, len(items) // count)
    return items[::step][:count]


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
        types = {item.item_id: item.media_type for item in pool_items_of(build)}
        big = [ids["zz_photo_4k.jpg"], ids["zz_clip_2min.mp4"]]
        shown = served_bytes(build, author, big, env)
        site, _ = static_site(work, {f"{i}.media": (types[i], shown[i]) for i in big})
        static, static_base = serve_static(site)
        cases = {
            "4K image": (ids["zz_photo_4k.jpg"], SHOWN["image"], "/p0.html"),  # same bytes
            "2-min clip": (ids["zz_clip_2min.mp4"], SHOWN["video"], "/p1.html"),
        }
        times: dict[str, dict[str, list[float]]] = {}
        say("time to shown, in Chromium")
        try:
            with sync_playwright() as driver:
                browser = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
                for name, (item_id, shown, floor) in cases.items():
                    times[name] = {"build": [], "build, warm": [], "static": []}
                    for _ in range(args.repeats):
                        url = f"/b/{author}/item/{item_id}"
                        fresh, warm = shown_on_fresh_server(browser, build, url, shown, env)
                        times[name]["build"].append(fresh)
                        times[name]["build, warm"].append(warm)
                        times[name]["static"].append(
                            time_to_shown(browser, f"{static_base}{floor}", shown)
                        )
                browser.close()
        finally:
            static.kill()
        say("10 people at once")
        free = [item_id for path, item_id in sorted(ids.items()) if not path.startswith("zz_")]
        chosen = spread(free, AUTHORS * args.tasks_per_author)
        # each author's share spread over the pool too: author n takes every AUTHORS-th item
        shares = [chosen[n::AUTHORS] for n in range(AUTHORS)]
        crowd = people_at_once(build, tokens, [i for share in shares for i in share],
                               args.tasks_per_author, env)  # fmt: skip
        files = served_bytes(build, author, chosen, env)
        site2, pages = static_site(
            work / "floor", {f"{i}.media": (types[i], files[i]) for i in chosen}
        )
        repeats = max(1, round(crowd["media_pages"] / len(pages)))
        floor = static_at_once(site2, pages * repeats, AUTHORS + REVIEWERS)
        summary: dict[str, Any] = {
            "pool_items": len(ids),
            "build_new_seconds": round(made_in, 1),
            "repeats": args.repeats,
            "median_seconds_to_shown": medians(times),
            "ratio_build_over_static": ratios(times, "build", "static"),
            "ratio_build_warm_over_static": ratios(times, "build, warm", "static"),
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
