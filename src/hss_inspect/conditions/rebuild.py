"""The media a sample was sent, rebuilt from its log record (`hss-inspect rebuild-frames`).

A log written with `--no-log-images` keeps, per sample-epoch, `sent_media` (written by
`turn`): the media's content hash, the settings its frames were prepared with and each
sent frame's hash. The media are fetched from the dataset and revision the eval recorded
(or the one given), prepared the way the solver did, and every hash is checked before the
files are written.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample, EvalSampleSummary

from hss_inspect.core.settings import DEFAULT_MEDIA, FrameSettings
from hss_inspect.data.release import Release, open_release
from hss_inspect.data.rows import DatasetError
from hss_inspect.media import service
from hss_inspect.media.frame_cache import FRAME_ALGORITHM_VERSION
from hss_inspect.media.frame_files import frame_name, manifest_of
from hss_inspect.media.video import SampledVideo

MANIFEST = "sent_media.json"


class RebuildError(DatasetError):
    """A log record that cannot be rebuilt, or a rebuild that does not match it."""


@dataclass(frozen=True)
class Rebuilt:
    files: list[str]
    checked: int  # hashes compared and equal
    unchecked: list[str]  # what the record had no hash for


def release_for(metadata: dict[str, Any], dataset: str | None, revision: str | None) -> Release:
    """The release the eval read, at the commit it resolved to, unless one is given."""
    if dataset is not None:
        return open_release(dataset, revision or "main")
    requested = metadata.get("hss_dataset_requested") or {}
    if "dataset" not in requested:
        raise RebuildError("the log records no HSS dataset; give one with --dataset")
    commit = metadata.get("hss_dataset_revision") or requested.get("revision") or "main"
    return open_release(str(requested["dataset"]), str(commit))


def rebuild(
    sample: EvalSample | EvalSampleSummary,
    release: Release,
    out: Path,
    media_settings: dict[str, Any],
) -> Rebuilt:
    """Write the media `sample` was sent into `out`, after checking every logged hash.

    `media_settings` is the eval's `hss_media_settings`: the limits a record made
    before per-sample limits were logged was prepared under.
    """
    meta = sample.metadata
    record: dict[str, Any] = meta.get("sent_media") or {}
    kind = record.get("kind")
    where = f"sample {sample.id} epoch {sample.epoch}"
    if kind in (None, "none"):
        raise RebuildError(f"{where} was sent no media (its sent_media records none)")
    path = release.media_file(meta["media_path"], str(meta["task_id"]))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != record.get("media_sha256"):
        raise RebuildError(
            f"{where}: {meta['media_path']} from {release.description} has sha256 {digest}, "
            f"the log recorded {record.get('media_sha256')}; give the copy the eval read "
            "with --dataset"
        )
    out.mkdir(parents=True, exist_ok=True)
    settings = {**media_settings, **(record.get("limits") or {})}
    if kind == "frames":
        return _rebuild_frames(record, path, out, where, settings)
    if kind == "image":
        return _rebuild_image(record, path, out, where, settings)
    target = out / f"video{path.suffix}"
    target.write_bytes(path.read_bytes())
    return Rebuilt([target.name], 1, [])


def frame_settings_of(record: dict[str, Any]) -> FrameSettings:
    return FrameSettings(**record["frame_settings"])


def _rebuild_frames(
    record: dict[str, Any], path: Path, out: Path, where: str, limits: dict[str, Any]
) -> Rebuilt:
    settings = frame_settings_of(record)
    budget = record.get("byte_budget", limits.get("frame_bytes_budget"))
    max_each = limits.get("image_max_raw_bytes") if "limits" in record else None
    video = asyncio.run(
        service.video_frames(
            path,
            settings,
            int(budget or DEFAULT_MEDIA.frame_bytes_budget),
            None,  # no time limit: a person is waiting for these frames, not a run
            None if max_each is None else int(max_each),
        )
    )
    # A cache entry holds the frames as data URIs, and their digests as its manifest says:
    # decoded once here, for the files, and hashed once, from these bytes (a new instance
    # knows no digests), for the check and the manifest.
    video = replace(video, jpegs=tuple(video.jpegs))
    compare_frames(video, record, where)
    for stale in out.glob("frame_*.jpg"):
        stale.unlink()
    names = []
    for index, jpeg in enumerate(video.jpegs):
        (out / frame_name(index)).write_bytes(jpeg)
        names.append(frame_name(index))
    manifest = {
        **manifest_of(video, settings, record["media_sha256"]),
        "frame_algorithm_version": FRAME_ALGORITHM_VERSION,
        "logged": record,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1))
    hashes = record.get("frame_sha256")
    return Rebuilt(names, 1 + (len(hashes) if hashes else 0), [] if hashes else ["frames"])


def compare_frames(video: SampledVideo, record: dict[str, Any], where: str) -> None:
    """Raise unless the rebuilt frames are the logged ones: count, times, then each hash
    (of `video`'s frames as decoded: not digests a cache entry's manifest gave it)."""
    if len(video.jpegs) != record["frame_count"]:
        raise RebuildError(
            f"{where}: rebuilt {len(video.jpegs)} frames, the log recorded {record['frame_count']}"
        )
    if list(video.timestamps) != list(record["timestamps"]):
        raise RebuildError(f"{where}: the rebuilt frame times differ from the logged ones")
    logged = record.get("frame_sha256")
    if logged is None:
        return
    actual = list(video.frame_sha256)
    differing = [i for i, (a, b) in enumerate(zip(actual, logged, strict=True)) if a != b]
    if differing:
        shown = ", ".join(str(i) for i in differing[:10])
        raise RebuildError(
            f"{where}: {len(differing)} of {len(actual)} rebuilt frames differ from the "
            f"logged hashes (frames {shown}); the decoder, Pillow or this package's frame "
            "preparation has changed since the eval"
        )


def _rebuild_image(
    record: dict[str, Any], path: Path, out: Path, where: str, limits: dict[str, Any]
) -> Rebuilt:
    max_side = int(limits.get("image_max_side") or DEFAULT_MEDIA.image_max_side)
    max_bytes = int(
        limits.get("image_max_raw_bytes")
        or limits.get("image_max_bytes")
        or DEFAULT_MEDIA.image_max_bytes
    )
    max_pixels = limits.get("image_max_pixels")
    image = asyncio.run(
        service.image_bytes(
            path, max_side, max_bytes, None if max_pixels is None else int(max_pixels), None
        )
    )
    logged = record.get("sha256")
    if logged is not None and hashlib.sha256(image.data).hexdigest() != logged:
        raise RebuildError(f"{where}: the rebuilt image differs from the logged hash")
    suffix = ".jpg" if image.mime == "image/jpeg" else path.suffix
    target = out / f"image{suffix}"
    target.write_bytes(image.data)
    (out / MANIFEST).write_text(json.dumps({"logged": record}, indent=1))
    return Rebuilt([target.name], 2 if logged else 1, [] if logged else ["image"])
