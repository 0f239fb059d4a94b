"""What the near-duplicate checks of `hss-inspect build new` cost, on a build's shape: a pool
of photos and clips, some of them re-encodes, crops or cuts of a reference release's media.

1. Looking at each file (`media.fingerprint.look_of`, cold cache): a clip's frames decoded
   at 2 per second and 96 px, side by side with the alternative of hashing every frame of
   a full decode (PyAV, each frame converted at its size); ratio of medians per clip. An
   image's look, cold, and any look read back from the cache (warm), per file.
2. The matching (`construction.media_match.find_matches`), the pool within itself and
   against the release, on the files' looks; and on random looks shaped as real ones,
   which need no decoding: a pool of half photos and half 60 s clips against 522 items
   (288 photos and 234 clips), and a pool of 9 photos in 10 and 20 s clips within itself,
   at 2,000 items side by side with the old all-pairs path (`benchmarks.all_pairs_match`,
   ratio of medians, the same pairs found) and at 10,000 items, each size with the 8 ways a
   picture or clip can lie and with the first alone (the cost of catching turned and
   mirrored copies), and with `--baseline REV` beside REV's package. And a build's texts
   checked for near repeats (`construction.text_repeats`), at 1,000 tasks against
   comparing every pair, and at the paper's 3,466.
3. That the planted near-duplicates are all found and nothing else.
4. Pools of distinct pictures (`--distinct` generated pictures of eight flat shapes and a
   caption, and scikit-image's sample pictures): the share marked by the rule, and by the
   hashes alone (the rule before its claims were checked), and the time of each.
5. A pool of look-alikes (`--look-alikes` pictures of a flat colour and a caption, every
   pair near to the hashes): `hss-inspect build new` on it, cold cache, its wall time,
   peak memory and the lines on its groups; then the marks an author's home reads for one
   page of the pool, against reading every item's.

    python -m benchmarks.bench_duplicates [--images 30] [--clips 9] [--seconds 20]
        [--repeats 3] [--scale-pool 2000] [--within 2000 10000] [--text-tasks 1000 3466]
        [--distinct 2000] [--look-alikes 10000] [--jobs 2] [--baseline REV]
        [--only within] [--json benchmarks/results_duplicates.json]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np
from numpy.typing import NDArray
from PIL import Image

from benchmarks import all_pairs_match, print_and_keep
from hss_inspect.construction import media_match
from hss_inspect.construction.media_match import Match, find_matches
from hss_inspect.construction.text_repeats import (
    CONTAINMENT,
    QUESTION,
    REFERENCE,
    Text,
    TextIndex,
    containment,
    word_pairs,
)
from hss_inspect.media.fingerprint import LOOK_FPS, Look, look_of, looks_of
from hss_inspect.media.perceptual import (
    CROP_PLACES,
    CROP_SHARES,
    SIZE,
    Hashes,
    grayscale,
    picture_hash,
)
from tests.support.near_media import (
    crop_share,
    look_alike,
    panning_frames,
    sample_photographs,
    save,
    scene,
    shape_picture,
    write_clip,
)

PHOTO = (1280, 720)
CLIP = (640, 360)
CLIP_FPS = 30


def make_media(root: Path, images: int, clips: int, seconds: float) -> dict[str, Any]:
    """The release (a third of the images and clips), and the pool: the rest, plus a crop
    of each of the release's first two photos and a cut of its first clip, plus a re-encode
    of one pool photo (a duplicate within the pool). The planted pairs, by file name."""
    release, pool = root / "release", root / "pool"
    ref_images, ref_clips = max(2, images // 3), max(1, clips // 3)
    planted: set[tuple[str, str]] = set()
    for n in range(images):
        where = release if n < ref_images else pool
        save(scene(1000 + n, PHOTO), where / f"photo-{n}.jpg", quality=88)
    for n in range(2):
        crop = crop_share(Image.open(release / f"photo-{n}.jpg"), (0.1, 0.05, 0.9, 0.87))
        save(crop, pool / f"crop-of-photo-{n}.jpg", quality=80)
        planted.add((f"crop-of-photo-{n}.jpg", f"photo-{n}.jpg"))
    first_pool = f"photo-{ref_images}.jpg"
    save(Image.open(pool / first_pool), pool / "again.png")
    planted.add((first_pool, "again.png"))
    for n in range(clips):
        where = release if n < ref_clips else pool
        frames = panning_frames(2000 + n, seconds, CLIP_FPS, CLIP)
        write_clip(where / f"clip-{n}.mp4", frames, CLIP_FPS)
        if n == 0:
            start = round(seconds * CLIP_FPS / 3)
            write_clip(pool / "cut-of-clip-0.mp4", frames[start : start + 4 * CLIP_FPS], CLIP_FPS)
            planted.add(("cut-of-clip-0.mp4", "clip-0.mp4"))
    return {"release": release, "pool": pool, "planted": planted}


def kind_of(path: Path) -> str:
    return "video" if path.suffix == ".mp4" else "image"


def full_decode_hashes(path: Path) -> int:
    """The alternative: every frame decoded and hashed at its own size."""
    count = 0
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            picture_hash(grayscale(frame.to_image()))  # type: ignore[no-untyped-call]
            count += 1
    return count


def timed(work: Any, *args: Any) -> float:
    started = time.perf_counter()
    work(*args)
    return time.perf_counter() - started


def look_costs(files: list[Path], repeats: int) -> dict[str, Any]:
    """Cold and warm looks per file, and the full decode of each clip."""
    cold: dict[str, list[float]] = {"image": [], "video": []}
    warm: list[float] = []
    full: list[float] = []
    ours_per_clip: list[float] = []
    for path in files:
        kind = kind_of(path)
        runs = []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as cache:
                runs.append(timed(look_of, path, kind, Path(cache)))
                warm.append(timed(look_of, path, kind, Path(cache)))
        cold[kind].append(statistics.median(runs))
        if kind == "video":
            ours_per_clip.append(statistics.median(runs))
            full.append(statistics.median(timed(full_decode_hashes, path) for _ in range(repeats)))
    return {
        "cold_look_median_s": {k: round(statistics.median(v), 4) for k, v in cold.items() if v},
        "warm_look_median_s": round(statistics.median(warm), 5),
        "clip_full_decode_median_s": round(statistics.median(full), 4),
        "clip_look_vs_full_decode": round(
            statistics.median(ours_per_clip) / statistics.median(full), 3
        ),
        "warm_vs_cold_clip": round(statistics.median(warm) / statistics.median(ours_per_clip), 4),
    }


def found_pair(pairs: set[tuple[str, str]], pair: tuple[str, str]) -> bool:
    return pair in pairs or pair[::-1] in pairs


# Looks carry a photo's grayscale copy since look format 2; a baseline's may not.
HAS_THUMB = "thumb" in {field.name for field in dataclasses.fields(Look)}
THUMB_SHAPE = (96, 128)


def random_looks(count: int, kind: str, rng: np.random.Generator, frames: int) -> list[Look]:
    """Looks shaped as real ones: a photo's whole and crop hashes and its grayscale copy
    (noise), a clip's frames."""
    rows = 1 + len(CROP_SHARES) * len(CROP_PLACES) ** 2 if kind == "image" else frames
    looks = []
    for n in range(count):
        hashes = rng.standard_normal((rows, SIZE)).astype(np.float32)
        hashes /= np.linalg.norm(hashes, axis=1, keepdims=True)
        thumb = rng.integers(0, 256, THUMB_SHAPE, dtype=np.uint8) if kind == "image" else None
        looks.append(made_look(kind, hashes, f"{kind}-{n}", thumb))
    return looks


def made_look(kind: str, hashes: Hashes, key: str, thumb: NDArray[np.uint8] | None) -> Look:
    seen = np.ones(len(hashes), np.bool_)
    if HAS_THUMB and thumb is not None:
        return Look(kind, hashes, seen, key, thumb)  # type: ignore[call-arg,unused-ignore]
    return Look(kind, hashes, seen, key)


def scale_matching(
    pool_items: int, release_items: tuple[int, int], seconds: float
) -> dict[str, Any]:
    """find_matches of a pool against the release at the paper's scale, on random looks."""
    rng = np.random.default_rng(0)
    frames = round(seconds * LOOK_FPS)
    pool = random_pool(pool_items, 0.5, frames, rng)
    release = random_looks(release_items[0], "image", rng, frames) + random_looks(
        release_items[1], "video", rng, frames
    )
    against = timed(lambda: find_matches(pool, [(lk.sha256, lk) for lk in release], same=False))
    return {
        "pool_items": pool_items,
        "release_items": sum(release_items),
        "clip_seconds": seconds,
        "against_release_s": round(against, 2),
        "against_release_ms_per_pool_item": round(1000 * against / pool_items, 2),
    }


def random_pool(
    items: int, image_share: float, frames: int, rng: np.random.Generator
) -> list[tuple[str, Look]]:
    images = round(items * image_share)
    looks = random_looks(images, "image", rng, frames)
    looks += random_looks(items - images, "video", rng, frames)
    return [(look.sha256, look) for look in looks]


def planted(pool: list[tuple[str, Look]], rng: np.random.Generator) -> list[tuple[str, Look]]:
    """The pool and, for its first 10 photos and 10 clips, a near copy: a photo whose whole
    is one of the first's crops a little changed, a clip cut from the first, a little
    changed (so that both matchings have pairs to find)."""
    copies = []
    for kind in ("image", "video"):
        for key, look in [(k, lk) for k, lk in pool if lk.media_type == kind][:10]:
            hashes = look.hashes[5:6] if kind == "image" else look.hashes[4:]
            hashes = np.concatenate([hashes, look.hashes[1:]]) if kind == "image" else hashes
            changed = hashes + 0.01 * rng.standard_normal(hashes.shape).astype(np.float32)
            changed /= np.linalg.norm(changed, axis=1, keepdims=True)
            copies.append((f"near-{key}", made_look(kind, changed, f"near-{key}", part(look))))
    return pool + copies


def part(look: Look) -> NDArray[np.uint8] | None:
    """A photo's copy at its crop 4 (hash row 5), the crop a planted photo repeats."""
    thumb: NDArray[np.uint8] | None = getattr(look, "thumb", None)
    if look.media_type != "image" or thumb is None:
        return None
    height, width = thumb.shape
    share, top, place = CROP_SHARES[0], 0.0, CROP_PLACES[4]  # crop 4: the first share, top right
    left, right, bottom = place * (1 - share), place * (1 - share) + share, share
    rows = slice(round(top * height), round(bottom * height))
    return thumb[rows, round(left * width) : round(right * width)]


def within_pool(sizes: list[int], repeats: int, seconds: float) -> dict[str, Any]:
    """The pool matched within itself, 9 in 10 items photos and the rest short clips: the
    matching against the old all-pairs path (`benchmarks.all_pairs_match`) at the first
    size, ratio of medians, both finding the same pairs; the new alone at the others (the
    old path's time there is its first-size time scaled by the square of the pool)."""
    frames = round(seconds * LOOK_FPS)
    result: dict[str, Any] = {"image_share": 0.9, "clip_seconds": seconds, "repeats": repeats}
    for n, size in enumerate(sizes):
        rng = np.random.default_rng(size)
        pool = planted(random_pool(size, 0.9, frames, rng), rng)
        result.setdefault("pairs_found", {})[str(size)] = len(find_matches(pool, pool, True))
        # repeated at the first size only: the larger take minutes on a shared machine; with
        # the 8 ways a picture or clip can lie and with the first alone, in turn
        new, unturned = [], []
        for _ in range(repeats if n == 0 else 1):
            new.append(timed(find_matches, pool, pool, True))
            with turns_as_they_are():
                unturned.append(timed(find_matches, pool, pool, True))
        entry = {"new_median_s": round(statistics.median(new), 2)}
        if hasattr(media_match, "TURNS"):
            plain = statistics.median(unturned)
            entry["without_turns_median_s"] = round(plain, 2)
            entry["turns_vs_without"] = round(statistics.median(new) / plain, 3)
        if n == 0:
            old = [
                timed(all_pairs_match.all_pairs_matches, pool, pool, True) for _ in range(repeats)
            ]
            same = {(m.item, m.other) for m in find_matches(pool, pool, True)} == {
                (m.item, m.other) for m in all_pairs_match.all_pairs_matches(pool, pool, True)
            }
            ratio = statistics.median(new) / statistics.median(old)
            entry |= {"old_median_s": round(statistics.median(old), 2), "same_pairs": same,
                      "new_vs_old": round(ratio, 3)}  # fmt: skip
            base = (size, statistics.median(old))
        else:
            entry["old_extrapolated_s"] = round(base[1] * (size / base[0]) ** 2)
        result[str(size)] = entry
    return result


@contextlib.contextmanager
def turns_as_they_are() -> Iterator[None]:
    """The matching trying pictures and clips only as they lie (as before turns were
    caught); nothing for a package without turns."""
    kept = getattr(media_match, "TURNS", None)
    if kept is not None:
        media_match.TURNS = (0,)  # type: ignore[attr-defined,unused-ignore]
    try:
        yield
    finally:
        if kept is not None:
            media_match.TURNS = kept  # type: ignore[attr-defined,unused-ignore]


def text_repeats(sizes: list[int], repeats: int) -> dict[str, Any]:
    """`build_texts` at each size: the index, and comparing every pair at the first size
    only (it grows with the square of the texts)."""
    result: dict[str, Any] = {}
    for n, tasks in enumerate(sizes):
        texts = build_texts(tasks)
        new = [timed(text_hits, texts, True) for _ in range(repeats)]
        entry = {"texts": len(texts), "index_median_s": round(statistics.median(new), 3),
                 "repeats_found": len(text_hits(texts, True))}  # fmt: skip
        if n == 0:
            started = time.perf_counter()
            every = text_hits(texts, False)
            old = time.perf_counter() - started
            entry |= {"every_pair_s": round(old, 2),
                      "index_vs_every_pair": round(statistics.median(new) / old, 4),
                      "same_repeats": text_hits(texts, True) == every}  # fmt: skip
        result[str(tasks)] = entry
    return result


def build_texts(tasks: int) -> list[Text]:
    """A build's texts (a question and a reference for each task, words drawn from a
    skewed vocabulary so that common pairs recur, one task in 20 rewording the one before:
    the planted repeats)."""
    rng = np.random.default_rng(3)
    vocabulary = [f"w{n}" for n in range(20_000)]
    weights = 1 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    texts: list[Text] = []
    for n in range(tasks):
        for field, length in ((QUESTION, 25), (REFERENCE, 40)):
            words = list(rng.choice(vocabulary, size=length, p=weights))
            if n % 20 == 19:
                words = texts[-2].text.split()[:-3] + words[:3]  # the task before's
            texts.append(Text(f"task {n}", field, " ".join(words)))
    return texts


def text_hits(texts: list[Text], indexed: bool) -> set[tuple[str, str, str]]:
    """Each (text, text it nearly repeats, field): by the index, or every pair compared."""
    if indexed:
        index = TextIndex(texts)
        return {(t.owner, o.owner, t.field) for t in texts for o, _ in index.repeats(t, t.owner)}
    pairs = [word_pairs(t.text) for t in texts]
    return {(a.owner, b.owner, a.field) for (a, pa), (b, pb)
            in itertools.permutations(zip(texts, pairs, strict=True), 2)
            if a.field == b.field and containment(pa, pb) >= CONTAINMENT}  # fmt: skip


def distinct_pools(root: Path, pictures: int, jobs: int) -> dict[str, Any]:
    """Pools of pictures no two of which are copies, each matched within itself: generated
    pictures of eight flat shapes and a caption, and scikit-image's sample pictures. The
    items marked by the rule (the hashes' claims, each checked where it puts the picture)
    and by the hashes alone (`all_pairs_match`, the rule before the check), and the time of
    each matching."""
    shapes = [save(shape_picture(n), root / "shapes" / f"picture-{n:04d}.png")
              for n in range(pictures)]  # fmt: skip
    result: dict[str, Any] = {}
    for name, files in (("shape_pictures", shapes), ("scikit_image_samples", sample_photographs())):
        looked = looks_of([(path, "image") for path in files], jobs)
        looks = [(path.name, lk) for path, lk in zip(files, looked, strict=True)
                 if isinstance(lk, Look) and not lk.blank]  # fmt: skip
        started = time.perf_counter()
        found = find_matches(looks, looks, True)
        rule = time.perf_counter() - started
        started = time.perf_counter()
        proposed = all_pairs_match.all_pairs_matches(looks, looks, True)
        hashes = time.perf_counter() - started
        entry = {"pictures": len(files), "compared": len(looks),
                 "marked_by_rule": marked(found), "marked_by_hashes_alone": marked(proposed),
                 "marked_share_by_rule": round(marked(found) / max(1, len(looks)), 4),
                 "marked_share_by_hashes_alone": round(marked(proposed) / max(1, len(looks)), 4),
                 "rule_s": round(rule, 3), "hashes_alone_s": round(hashes, 3)}  # fmt: skip
        if name == "scikit_image_samples":
            entry["pairs_by_rule"] = sorted(f"{m.item} ~ {m.other} ({m.how})" for m in found)
            entry["pairs_by_hashes_alone"] = sorted(
                f"{m.item} ~ {m.other} ({m.how}, {m.distance:.3f})" for m in proposed
            )
        result[name] = entry
    return result


def look_alike_build(root: Path, items: int, jobs: int, repeats: int) -> dict[str, Any]:
    """`hss-inspect build new --against none` on a pool of `items` look-alikes (a flat colour
    and a caption each, every pair alike to the hashes), cold cache: its wall time, the
    largest resident memory of its processes and the lines it prints of the groups; then
    what an author's home reads of the marks for one page of the pool, against reading
    every item's marks (as every request did before), medians over `repeats`."""
    from hss_inspect.construction import duplicates, store
    from hss_inspect.construction.pages import POOL_ROWS
    from hss_inspect.web.store import rows

    pool = root / "look-alikes"
    for n in range(items):
        save(look_alike(n), pool / f"scene-{n:05d}.png")
    build = root / "look-alikes.sqlite"
    env = {**os.environ, "HSS_INSPECT_CACHE": str(root / "cache-look-alikes")}
    command = [sys.executable, "-c", "from hss_inspect.commands.cli import main; main()",
               "build", "new", str(build), "--pool", str(pool), "--authors", "ann",
               "--reviewers", "r1,r2,r3", "--against", "none", "--jobs", str(jobs)]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB, the largest child
    page = [item.item_id for item, _, _ in store.pool_page(build, "all", 0, POOL_ROWS).rows]
    every = [item.item_id for item, _, _ in store.pool_items(build)]
    shown = [timed(duplicates.item_notes, build, page) for _ in range(repeats)]
    whole = [timed(duplicates.item_notes, build, every) for _ in range(repeats)]
    ((marks,),) = rows(build, "SELECT COUNT(*) FROM duplicates")
    return {
        "items": items, "jobs": jobs, "build_new_s": round(wall, 1),
        "peak_resident_mb": round(peak / 1024) if peak > before else None,
        "lines": [line for line in done.stdout.splitlines() if "near-duplicates" in line
                  or "proved no copies" in line],
        "marks_stored": marks,
        "home_marks_read_ms": round(1000 * statistics.median(shown), 1),
        "every_items_marks_read_ms": round(1000 * statistics.median(whole), 1),
    }  # fmt: skip


def marked(found: list[Match]) -> int:
    return len({m.item for m in found} | {m.other for m in found})


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    images, clips, seconds, repeats = args.images, args.clips, args.seconds, args.repeats
    scale_pool, within_sizes, text_tasks = args.scale_pool, args.within, args.text_tasks
    made = make_media(root, images, clips, seconds)
    release = sorted(p for p in made["release"].iterdir())
    pool = sorted(p for p in made["pool"].iterdir())
    costs = look_costs(release + pool, repeats)
    with tempfile.TemporaryDirectory() as cache:
        looks = {p: look_of(p, kind_of(p), Path(cache)) for p in release + pool}
    keyed_pool = [(p.name, looks[p]) for p in pool]
    keyed_release = [(p.name, looks[p]) for p in release]
    started = time.perf_counter()
    found = find_matches(keyed_pool, keyed_pool, same=True)
    found += find_matches(keyed_pool, keyed_release, same=False)
    matching = time.perf_counter() - started
    pairs = {(m.item, m.other) for m in found}
    planted = made["planted"]
    result = {
        "pool": {"images": sum(kind_of(p) == "image" for p in pool),
                 "clips": sum(kind_of(p) == "video" for p in pool)},
        "release": {"images": sum(kind_of(p) == "image" for p in release),
                    "clips": sum(kind_of(p) == "video" for p in release)},
        "photo_size": list(PHOTO), "clip_size": list(CLIP), "clip_seconds": seconds,
        "repeats": repeats,
        **costs,
        "matching_s": round(matching, 4),
        "planted": sorted(f"{a} ~ {b}" for a, b in planted),
        "all_planted_found": all(found_pair(pairs, pair) for pair in planted),
        "unplanted_found": sorted(f"{a} ~ {b}" for a, b in pairs
                                  if not found_pair(planted, (a, b))),
        "distances_of_found": {f"{m.item} ~ {m.other}": round(m.distance, 4) for m in found},
    }  # fmt: skip
    if args.distinct:
        result["distinct_pools"] = distinct_pools(root, args.distinct, args.jobs)
    if args.look_alikes:
        result["look_alike_pool"] = look_alike_build(root, args.look_alikes, args.jobs, repeats)
    if scale_pool:
        result["paper_scale_matching"] = scale_matching(scale_pool, (288, 234), 60.0)
    if within_sizes:
        result["within_pool"] = within_pool(within_sizes, repeats, 20.0)
    if text_tasks:
        result["text_repeats"] = text_repeats(text_tasks, repeats)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=30)
    parser.add_argument("--clips", type=int, default=9)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale-pool", type=int, default=2_000)
    parser.add_argument("--within", type=int, nargs="*", default=[2_000, 10_000])
    parser.add_argument("--text-tasks", type=int, nargs="*", default=[1_000, 3_466])
    parser.add_argument("--distinct", type=int, default=2_000, help="shape pictures (0: none)")
    parser.add_argument("--look-alikes", type=int, default=10_000, help="items (0: none)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for the looks")
    parser.add_argument("--only", choices=["within"], help="the within-pool matching alone")
    parser.add_argument("--baseline", metavar="REV",
                        help="also the within-pool matching of this commit's package")  # fmt: skip
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("HSS_INSPECT_CACHE", tempfile.mkdtemp(prefix="bench-dups-"))
    with tempfile.TemporaryDirectory() as root:
        if args.only == "within":
            result = {"within_pool": within_pool(args.within, args.repeats, 20.0)}
        else:
            result = run(args, Path(root))
        if args.baseline:
            result["within_pool_baseline"] = baseline_within(args, Path(root))
            result["within_pool_vs_baseline"] = {
                size: round(entry["new_median_s"] / result["within_pool_baseline"][size]
                            ["new_median_s"], 3)
                for size, entry in result["within_pool"].items() if size.isdigit()
            }  # fmt: skip
    print_and_keep(result, args.json)


def baseline_within(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The within-pool matching of the baseline's package, run as this script with its
    `src/` first on the path (`bench_full_shape.baseline_env`), on the same random pools."""
    from benchmarks.bench_full_shape import baseline_env

    env = baseline_env(work, args.baseline, dict(os.environ))
    out = work / "baseline-within.json"
    subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_duplicates", "--only", "within", "--within",
         *map(str, args.within), "--repeats", str(args.repeats), "--json", str(out)],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    found: dict[str, Any] = json.loads(out.read_text())["within_pool"]
    return found


if __name__ == "__main__":
    main()
