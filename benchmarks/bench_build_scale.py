"""A build at the paper's scale (Sec. 2.4, Fig. 8): 3,466 authored tasks over a pool of
10,000 items, 20 authors and 12 reviewers at work at once; with `--baseline REV`, the same
build made by another commit's package beside it.

Each side, in its own folder over the same pool:

  new       `hss-inspect build new` on the pool (9 in 10 items small JPEGs, 1 in 10 short
            clips, none a near-duplicate of another), against no reference release
  import    one `hss-inspect build import` an author of about 173 rows (3,466 in all), each
            row on its own pool item; then the first author's rows again, `--repeats` times,
            into a build of a pool of only their items: an import's cost should grow with
            its rows, not with the pool
  review    `build serve`, and over HTTP (httpx) 12 reviewer threads deciding every round
            dealt to them by a verdict plan, and 20 author threads loading their home page
            and revising every task returned to them, until every task is admitted or
            dropped. The plan gives the paper's funnel (3,466 -> 1,164 -> 559 -> 522): each
            task's outcome drawn (seed 0) to those counts, and about 5% of the tasks sent
            back once with an Edit before it. Timed: each review page (GET, a round shown),
            each verdict (POST), each author home page (time and bytes); the server's peak
            resident memory (VmHWM)
  status    `hss-inspect build status` and `build funnel` (wall time, `--repeats` times);
            the funnel printed must be the plan's
  export    `hss-inspect build export` of the admitted tasks

and checks the targets of the paper's scale (issue 40): review page and verdict under
100 ms median; an author's home page under 0.5 s (p95) and 1 MB; status and funnel under
2 s; export under 30 s; the server under 300 MB; an import of the same rows no slower with
the 10,000-item pool than with a pool of its own items alone (ratio under 1.5). With a
baseline, each figure of this tree over the baseline's (medians).

The baseline runs REV's `src/` (exported with `git archive`, first on PYTHONPATH, as in
bench_full_shape) in this environment: only the package differs.

    python -m benchmarks.bench_build_scale [--items 10000] [--tasks 3466] [--authors 20]
        [--reviewers 12] [--repeats 3] [--baseline REV] [--work DIR]
        [--json benchmarks/results_build_scale.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import av
import httpx
import numpy as np
from PIL import Image

from benchmarks.bench_full_shape import baseline_env, package_of
from benchmarks.bench_human import peak_rss_mb
from hss_inspect.core.taxonomy import DOMAINS
from hss_inspect.providers.paper_models import construction_funnel
from tests.support.human_study import HSS_INSPECT, Server
from tests.support.servers import free_port

THIS_TREE, BASELINE = "after", "before"
ROUNDS = 3
EDIT_SHARE = 0.05
STALLED_S = 120
FEEDBACK = "Say which cup: two are shown."
DROP_REASONS = ("pure_perception", "expertise", "no_consensus", "uninformative_media")
SUBDOMAINS = [(d.name, s.name) for d in DOMAINS for s in d.subdomains]
# name -> (the figure's key in a side's summary, its limit, how it is compared)
TARGETS = {
    "review page median < 100 ms": ("review_page_ms.median", 100.0),
    "verdict median < 100 ms": ("verdict_ms.median", 100.0),
    "author home p95 < 0.5 s": ("author_home_ms.p95", 500.0),
    "author home < 1 MB": ("author_home_kb.max", 1000.0),
    "status < 2 s": ("status_s", 2.0),
    "funnel < 2 s": ("funnel_s", 2.0),
    "export < 30 s": ("export_s", 30.0),
    "server < 300 MB": ("server_peak_rss_mb", 300.0),
    "import: 10,000-item pool over its items alone < 1.5": ("import_pool_ratio", 1.5),
}


def say(text: str) -> None:
    print(f"bench_build_scale: {text}", file=sys.stderr, flush=True)


# ---- the pool and the tasks ------------------------------------------------------------


def item_name(n: int) -> str:
    """Every tenth item a clip, the rest photos, interleaved in the pool's order."""
    return f"item_{n:05d}.mp4" if n % 10 == 9 else f"item_{n:05d}.jpg"


def make_pool(pool: Path, items: int) -> None:
    """Small JPEGs and 2-second clips, each of its own random cells (so no two are near
    duplicates of each other), the clips panning over theirs."""
    pool.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for n in range(items):
        cells = rng.integers(0, 255, (6, 10, 3), dtype=np.uint8)
        if item_name(n).endswith(".mp4"):
            write_clip(pool / item_name(n), np.asarray(Image.fromarray(cells).resize((320, 96))))
        else:
            Image.fromarray(cells).resize((160, 96)).save(pool / item_name(n), quality=80)


def write_clip(path: Path, scene: np.ndarray, fps: int = 5, frames: int = 10) -> None:
    with av.open(str(path), "w") as container:
        video = container.add_stream("libx264", rate=fps, options={"preset": "ultrafast"})
        video.width, video.height, video.pix_fmt = 160, 96, "yuv420p"
        for index in range(frames):
            view = np.ascontiguousarray(scene[:, index * 8 : index * 8 + 160])
            frame = av.VideoFrame.from_ndarray(view, format="rgb24")
            frame.pts, frame.time_base = index, Fraction(1, fps)
            container.mux(video.encode(frame))
        container.mux(video.encode())


def task_rows(items: int, tasks: int) -> list[dict[str, Any]]:
    """`tasks` rows in the release's format, on items spread evenly over the pool, each
    text its own words (seed 0), so no two nearly repeat each other (`text_repeats`)."""
    rng = random.Random(0)

    def words(count: int) -> str:
        return " ".join(rng.choice(VOCABULARY) for _ in range(count))

    rows = []
    for t in range(tasks):
        name = item_name(t * items // tasks)
        domain, subdomain = SUBDOMAINS[t % len(SUBDOMAINS)]
        rows.append({
            "task_id": f"src-{t:05d}", "domain": domain, "subdomain": subdomain,
            "media_type": "video" if name.endswith(".mp4") else "image",
            "media_path": f"media/{name}", "prompt": f"{words(12)}?",
            "golden_response": f"{words(16)}.",
            "rubric_criteria": [{"id": "c1", "title": words(6)}, {"id": "c2", "title": words(6)}],
        })  # fmt: skip
    return rows


# Words to write the tasks' texts with (random draws: texts that share few word pairs).
WORDS = (
    "cup table edge falls tips rolls ball door opens closes hand reaches shelf light shadow "
    "window rain street car stops turns wheel dog cat child runs jumps waits crowd smiles "
    "frowns points glass breaks spills water floor slips rope pulls lifts box heavy empty "
    "full left right behind under above near far before after during because since "
    "bicycle ladder bridge river boat sinks floats paper burns smoke candle melts ice "
    "clock hour minute train leaves arrives platform bag drops coin spins stack topples "
    "mirror reflects hidden face mask hat coat wind blows leaf tree branch bends snaps "
    "wall paint wet dry sign arrow queue ticket guard teacher student chair desk phone "
    "rings screen cracked cable plugged lamp switch kettle boils steam pot lid rattles"
)
VOCABULARY = WORDS.split()


def shares(rows: list[Any], parts: int) -> list[list[Any]]:
    """`rows` cut into `parts` runs as even as can be (3,466 in 20: 173 or 174 each)."""
    bounds = [len(rows) * k // parts for k in range(parts + 1)]
    return [rows[bounds[k] : bounds[k + 1]] for k in range(parts)]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# ---- the verdict plan ------------------------------------------------------------------


@dataclass(frozen=True)
class Planned:
    """A task's course: dropped at `drop_round` (None: admitted), and an Edit on its first
    revision at `edit_round` (None: none)."""

    drop_round: int | None
    edit_round: int | None


def planned_funnel(tasks: int) -> list[int]:
    """Authored, then the survivors of each round: the paper's (Fig. 8) at 3,466 tasks,
    scaled to `tasks` otherwise."""
    authored, after = construction_funnel()
    return [tasks, *(round(n * tasks / authored) for n in after)]


def verdict_plan(task_ids: list[str], seed: int = 0) -> dict[str, Planned]:
    counts = planned_funnel(len(task_ids))
    courses: list[int | None] = []
    for r in range(1, ROUNDS + 1):
        courses += [r] * (counts[r - 1] - counts[r])
    courses += [None] * counts[-1]
    rng = random.Random(seed)
    rng.shuffle(courses)
    edited = set(rng.sample(range(len(task_ids)), round(EDIT_SHARE * len(task_ids))))
    plan = {}
    for n, (task_id, drop) in enumerate(zip(task_ids, courses, strict=True)):
        edit = rng.randint(1, drop or ROUNDS) if n in edited else None
        plan[task_id] = Planned(drop, edit)
    return plan


def planned_verdict(plan: Planned, revision: int, round_: int) -> str:
    if plan.edit_round == round_ and revision == 1:
        return "edit"
    return "drop" if plan.drop_round == round_ else "pass"


# ---- people at once --------------------------------------------------------------------


@dataclass
class Crowd:
    """What the threads measured, and when every task has reached its end."""

    tasks: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    seconds: dict[str, list[float]] = field(
        default_factory=lambda: {"review_page": [], "verdict": [], "author_home": []}
    )
    home_bytes: list[int] = field(default_factory=list)
    ended: int = 0  # tasks admitted or dropped
    failures: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    moved: float = field(default_factory=time.monotonic)  # when the last verdict was sent

    def timed(self, what: str, seconds: float) -> None:
        with self.lock:
            self.seconds[what].append(seconds)
            if what == "verdict":
                self.moved = time.monotonic()

    def end_one(self) -> None:
        with self.lock:
            self.ended += 1
            if self.ended >= self.tasks:
                self.done.set()

    def fail(self, text: str) -> None:
        with self.lock:
            self.failures.append(text)
        if len(self.failures) > 50:
            self.done.set()


SLOT = re.compile(
    r'name=task_id value="([^"]+)">.*?name=revision value="(\d+)">.*?name=round value="(\d+)">',
    re.S,
)


def reviewer_works(base: str, token: str, plan: dict[str, Planned], crowd: Crowd) -> None:
    with httpx.Client(base_url=base, timeout=300) as client:
        while not crowd.done.is_set():
            started = time.perf_counter()
            page = client.get(f"/b/{token}")
            found = SLOT.search(page.text)
            if found is None:
                time.sleep(0.2)
                continue
            crowd.timed("review_page", time.perf_counter() - started)
            task_id, revision, round_ = found.group(1), int(found.group(2)), int(found.group(3))
            verdict = planned_verdict(plan[task_id], revision, round_)
            form = {"task_id": task_id, "revision": str(revision), "round": str(round_),
                    "verdict": verdict, "reason": DROP_REASONS[round_ % len(DROP_REASONS)],
                    "feedback": FEEDBACK if verdict == "edit" else ""}  # fmt: skip
            started = time.perf_counter()
            answer = client.post(f"/b/{token}/verdict", data=form)
            crowd.timed("verdict", time.perf_counter() - started)
            if answer.status_code != 303:
                crowd.fail(f"verdict {task_id}: {answer.status_code}")
            elif verdict == "drop" or (verdict == "pass" and round_ == ROUNDS):
                crowd.end_one()


# A row of an author's task list: its task, and where it stands (one row at a time: a
# pattern spanning rows backtracks over the whole page, and the client's threads stall).
TASK_ROW = re.compile(r'/task/([^"]+)">[^<]*</a>(?:(?!</tr>).)*class=state>([^<]*)<')


def author_works(base: str, token: str, pause: float, crowd: Crowd) -> None:
    rng = random.Random(token)
    with httpx.Client(base_url=base, timeout=300) as client:
        while not crowd.done.is_set():
            started = time.perf_counter()
            home = client.get(f"/b/{token}")
            crowd.timed("author_home", time.perf_counter() - started)
            with crowd.lock:
                crowd.home_bytes.append(len(home.content))
            for task_id, state in TASK_ROW.findall(home.text):
                if state.startswith("returned: revise and"):
                    revise(client, token, task_id, crowd)
            crowd.done.wait(pause * rng.uniform(0.5, 1.5))


def revise(client: httpx.Client, token: str, task_id: str, crowd: Crowd) -> None:
    """The returned task's form, sent again with the question made plainer."""
    page = client.get(f"/b/{token}/task/{task_id}").text
    item = re.search(r'name=item_id value="([^"]+)"', page)
    if item is None:
        crowd.fail(f"no form for returned task {task_id}")
        return
    form = {"item_id": item.group(1), "task_id": task_id, "opened_at": str(time.time()),
            "subdomain": SUBDOMAINS[0][1], "prompt": "The cup on the left: what happens next?",
            "reference": "It tips over, its base being half off the edge.",
            "criteria": "Says the cup tips over\nNames the base off the edge as the cause",
            "action": "submit"}  # fmt: skip
    answer = client.post(f"/b/{token}/task", data=form)
    if answer.status_code != 303:
        crowd.fail(f"revision of {task_id}: {answer.status_code}")


def people_at_once(
    build: Path, env: dict[str, str], plan: dict[str, Planned], pause: float, ended: int = 0
) -> dict[str, Any]:
    """`ended`: tasks admitted or dropped already (a build resumed)."""
    tokens = links(build)
    crowd = Crowd(len(plan), ended=ended)
    server = Server(build, env, free_port(), command="build")
    server.start()
    assert server.process is not None
    try:
        idle = peak_rss_mb(server.process.pid)
        workers = [
            threading.Thread(target=reviewer_works, args=(server.base, t, plan, crowd))
            for role, t in tokens if role == "reviewer"
        ] + [
            threading.Thread(target=author_works, args=(server.base, t, pause, crowd))
            for role, t in tokens if role == "author"
        ]  # fmt: skip
        started = time.perf_counter()
        for worker in workers:
            worker.start()
        while not crowd.done.wait(5):  # a plan gone wrong stalls: stop it, and say so
            if time.monotonic() - crowd.moved > STALLED_S:
                crowd.fail(f"no verdict for {STALLED_S} s, {crowd.ended} of {crowd.tasks} ended")
                crowd.done.set()
        for worker in workers:
            worker.join()
        if crowd.failures:
            raise RuntimeError(f"{len(crowd.failures)} failed request(s): {crowd.failures[:5]}")
        return {
            "seconds": round(time.perf_counter() - started, 1),
            "review_pages": len(crowd.seconds["review_page"]),
            "verdicts": len(crowd.seconds["verdict"]),
            "author_homes": len(crowd.seconds["author_home"]),
            "review_page_ms": quantiles(crowd.seconds["review_page"], 1000),
            "verdict_ms": quantiles(crowd.seconds["verdict"], 1000),
            "author_home_ms": quantiles(crowd.seconds["author_home"], 1000),
            "author_home_kb": quantiles([float(b) for b in crowd.home_bytes], 1 / 1000),
            "server_rss_mb_after_start": round(idle, 1),
            "server_peak_rss_mb": round(peak_rss_mb(server.process.pid), 1),
        }
    finally:
        server.kill()


def links(build: Path) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(f"{build.resolve().as_uri()}?mode=ro", uri=True)) as db:
        return db.execute("SELECT role, token FROM people ORDER BY role, name").fetchall()


def task_ids(build: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(f"{build.resolve().as_uri()}?mode=ro", uri=True)) as db:
        return [t for (t,) in db.execute("SELECT task_id FROM tasks ORDER BY task_id")]


def quantiles(values: list[float], scale: float) -> dict[str, float]:
    ordered = sorted(v * scale for v in values)
    return {
        "median": round(statistics.median(ordered), 1),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "max": round(ordered[-1], 1),
    }


# ---- the commands ----------------------------------------------------------------------


def timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([HSS_INSPECT, "build", *command], env=env, capture_output=True,
                          text=True)  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"hss-inspect build {' '.join(command)}: {done.stderr.strip()[-600:]}")
    return seconds, done.stdout


def new_build(build: Path, pool: Path, authors: int, reviewers: int, env: dict[str, str]) -> float:
    against = ["--against", "none"] if supports_against(env) else []
    return timed(["new", str(build), "--pool", str(pool), "--authors", str(authors),
                  "--reviewers", str(reviewers), "--jobs", "2", *against], env)[0]  # fmt: skip


def supports_against(env: dict[str, str]) -> bool:
    """Whether the side's `build new` checks a reference release (a baseline may not)."""
    done = subprocess.run([HSS_INSPECT, "build", "new", "--help"], env=env,
                          capture_output=True, text=True)  # fmt: skip
    return "--against" in done.stdout


def funnel_printed(text: str) -> list[int]:
    """Authored and each round's survivors, as `build funnel` prints them (Markdown)."""
    found = re.findall(r"^\| (authored|after round \d) \| ([\d,]+) \|", text, re.M)
    return [int(count.replace(",", "")) for _, count in found]


def one_side(
    side: str, work: Path, pool: Path, rows: list[dict[str, Any]], env: dict[str, str],
    args: argparse.Namespace,
) -> dict[str, Any]:  # fmt: skip
    folder = work / side
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # One cache for every side and run, kept with the pool: the pool's near-duplicate hashes
    # (cached by content) are made once, as they are for a lab that builds twice on a pool.
    env = {**env, "HSS_INSPECT_CACHE": str(work / "cache")}
    build = folder / "build.sqlite"
    say(f"{side}: build new on {args.items:,} items")
    result: dict[str, Any] = {"package": str(package_of(env))}
    result["new_s"] = round(new_build(build, pool, args.authors, args.reviewers, env), 1)
    parts = shares(rows, args.authors)
    say(f"{side}: {len(parts)} imports of about {len(parts[0])} rows")
    imports = []
    for n, part in enumerate(parts, start=1):
        tasks_file = write_jsonl(folder / f"tasks_{n}.jsonl", part)
        imports.append(timed(["import", str(build), str(tasks_file), "--author", f"author-{n}"],
                             env)[0])  # fmt: skip
    small = small_pool_imports(folder, pool, parts[0], env, args)
    result["import_ms"] = {
        "total": round(sum(imports) * 1000), "per_call": quantiles(imports, 1000),
        "own_items_per_call": quantiles(small, 1000),
    }  # fmt: skip
    # from the times themselves: a ratio of rounded figures moves by a tenth a step
    result["import_pool_ratio"] = round(statistics.median(imports) / statistics.median(small), 2)
    plan = verdict_plan(task_ids(build))
    say(f"{side}: {args.reviewers} reviewers and {args.authors} authors at once")
    result |= people_at_once(build, env, plan, args.author_pause)
    statuses = [timed(["status", str(build)], env)[0] for _ in range(args.repeats)]
    funnels = [timed(["funnel", str(build)], env) for _ in range(args.repeats)]
    result["status_s"] = round(statistics.median(statuses), 2)
    result["funnel_s"] = round(statistics.median(s for s, _ in funnels), 2)
    result["funnel_printed"] = funnel_printed(funnels[0][1])
    result["funnel_planned"] = planned_funnel(len(rows))
    result["export_s"] = round(timed(["export", str(build), "--out", str(folder / "release")],
                                     env)[0], 2)  # fmt: skip
    exported = (folder / "release" / "data" / "test.jsonl").read_text().count("\n")
    result["exported_tasks"] = exported
    planned = result["funnel_planned"]
    if result["funnel_printed"] != planned or exported != planned[-1]:
        raise RuntimeError(f"{side}: funnel {result['funnel_printed']}, {exported} exported; "
                           f"planned {planned}")  # fmt: skip
    result["targets"] = targets_met(result)
    say(f"{side}: {json.dumps(brief(result))}")
    return result


def small_pool_imports(
    folder: Path, pool: Path, part: list[dict[str, Any]], env: dict[str, str],
    args: argparse.Namespace,
) -> list[float]:  # fmt: skip
    """The same rows imported into builds whose pool holds their items alone (links): the
    seconds of each import."""
    own = folder / "own-pool"
    own.mkdir()
    for row in part:
        name = Path(row["media_path"]).name
        (own / name).symlink_to(pool / name)
    tasks_file = write_jsonl(folder / "tasks_own.jsonl", part)
    seconds = []
    for n in range(args.repeats):
        build = folder / f"own-{n}.sqlite"
        new_build(build, own, 1, 3, env)
        seconds.append(timed(["import", str(build), str(tasks_file), "--author", "author-1"],
                             env)[0])  # fmt: skip
    return seconds


def value_at(result: dict[str, Any], key: str) -> float:
    found: Any = result
    for part in key.split("."):
        found = found[part]
    return float(found)


def targets_met(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: {"value": value_at(result, key), "limit": limit,
               "met": value_at(result, key) < limit}
        for name, (key, limit) in TARGETS.items()
    }  # fmt: skip


def brief(result: dict[str, Any]) -> dict[str, Any]:
    return {name: f"{t['value']} ({'met' if t['met'] else 'MISSED'})"
            for name, t in result["targets"].items()}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    authored, _ = construction_funnel()
    parser.add_argument("--items", type=int, default=10_000, help="pool items [10,000]")
    parser.add_argument("--tasks", type=int, default=authored, help="tasks authored [3,466]")
    parser.add_argument("--authors", type=int, default=20, help="authors, one import each")
    parser.add_argument("--reviewers", type=int, default=12)
    parser.add_argument(
        "--author-pause", type=float, default=1.0,
        help="seconds between an author's home page loads (on average) [1]",
    )  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="also build with this commit's package")
    parser.add_argument("--work", type=Path, help="keep the pool and builds here (pool reused)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory(dir="/tmp")))
        pool = work / f"pool-{args.items}"
        if not (pool / item_name(args.items - 1)).is_file():
            say(f"making a pool of {args.items:,} items")
            make_pool(pool, args.items)
        rows = task_rows(args.items, args.tasks)
        env = {**os.environ, "INSPECT_DISPLAY": "none"}
        sides = {THIS_TREE: env}
        if args.baseline:
            sides[BASELINE] = baseline_env(work, args.baseline, env)
        summary: dict[str, Any] = {
            "shape": {"pool_items": args.items, "tasks": args.tasks, "authors": args.authors,
                      "reviewers": args.reviewers, "imports": args.authors,
                      "edit_share": EDIT_SHARE, "author_pause_s": args.author_pause,
                      "repeats": args.repeats, "baseline": args.baseline},
        }  # fmt: skip
        for side, side_env in sides.items():
            summary[side] = one_side(side, work, pool, rows, side_env, args)
    if args.baseline:
        summary["after_over_before"] = ratios(summary[THIS_TREE], summary[BASELINE])
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")


def ratios(after: dict[str, Any], before: dict[str, Any]) -> dict[str, float]:
    """This tree's figures over the baseline's (medians): below 1, this tree is faster."""
    keys = [key for key, _ in TARGETS.values()] + ["import_ms.per_call.median", "new_s"]
    return {key: round(value_at(after, key) / value_at(before, key), 3) for key in keys}


if __name__ == "__main__":
    main()
