"""Images as sent, through the cache: the file itself when its facts say a provider's
limits leave it untouched, else its re-encoding, read from `images/<key>/` or prepared
and stored there."""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from hss_inspect.media.activity import count_image
from hss_inspect.media.cache_entries import entry_key, locked, replace_entry
from hss_inspect.media.cache_folder import cache_root
from hss_inspect.media.errors import NO_DEADLINE, Deadline
from hss_inspect.media.facts import read_facts, remembered_sha256, write_facts
from hss_inspect.media.image import ImageFacts, PreparedImage, prepare_image

IMAGE_MANIFEST = "image.json"
IMAGE_DATA = "image.bin"
# Bump when the image preparation changes, so old entries stop matching.
IMAGE_ALGORITHM_VERSION = 1


def cached_prepare_image(
    path: Path,
    max_side: int,
    max_bytes: int,
    root: Path | None = None,
    deadline: Deadline = NO_DEADLINE,
    max_pixels: int | None = None,
) -> PreparedImage:
    """The image to send for `path`: the file itself when its facts say the limits leave it
    untouched, else a re-encoding from the cache, or prepared and stored."""
    root = root or cache_root()
    digest = remembered_sha256(path, root)
    limits = (max_side, max_bytes, max_pixels)
    cached = _image_from_cache(root, digest, path, limits)
    if cached is not None:
        return cached
    with locked(root, f"image-{digest}"):
        cached = _image_from_cache(root, digest, path, limits)
        if cached is not None:
            return cached
        image, facts = prepare_image(path, max_side, max_bytes, deadline, max_pixels)
        count_image(digest)
        write_facts(root, digest, {"kind": "image", **asdict(facts)})
        if image.reencoded:
            entry = root / "images" / _image_key(digest, facts, limits)
            replace_entry(entry, lambda staging: _write_image(staging, image), root)
        return image


def _image_key(digest: str, facts: ImageFacts, limits: tuple[int, int, int | None]) -> str:
    side, max_bytes, pixels = facts.reencoding_limits(*limits)
    spec: dict[str, Any] = {
        "image": digest,
        "max_side": side,
        "max_bytes": max_bytes,
        "v": IMAGE_ALGORITHM_VERSION,
    }
    if pixels is not None:
        spec["max_pixels"] = pixels
    return entry_key(spec)


def _image_from_cache(
    root: Path, digest: str, path: Path, limits: tuple[int, int, int | None]
) -> PreparedImage | None:
    stored = read_facts(root, digest, "image")
    try:
        facts = ImageFacts(**{k: v for k, v in (stored or {}).items() if k != "kind"})
    except TypeError:
        return None
    if facts.mime is not None and facts.sent_as_is(*limits):
        with contextlib.suppress(OSError):
            raw = path.read_bytes()
            if hashlib.sha256(raw).hexdigest() == digest:
                return PreparedImage(raw, facts.mime, facts.width, facts.height, False, len(raw))
        return None
    return _read_image(root / "images" / _image_key(digest, facts, limits), path)


def _write_image(folder: Path, image: PreparedImage) -> None:
    if image.reencoded:
        (folder / IMAGE_DATA).write_bytes(image.data)
    record = {**asdict(image), "data": None, "data_sha256": hashlib.sha256(image.data).hexdigest()}
    (folder / IMAGE_MANIFEST).write_text(json.dumps(record))


def _read_image(folder: Path, original: Path) -> PreparedImage | None:
    try:
        record = json.loads((folder / IMAGE_MANIFEST).read_text())
        data = (folder / IMAGE_DATA if record["reencoded"] else original).read_bytes()
        if hashlib.sha256(data).hexdigest() != record["data_sha256"]:
            return None
        return PreparedImage(
            data,
            record["mime"],
            record["width"],
            record["height"],
            record["reencoded"],
            record["original_bytes"],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
