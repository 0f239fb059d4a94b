"""What a media file is, worked out once and kept in the cache: its content hash
(remembered by path, size and modification time under `hashes/`) and its probed facts
(`facts/`): a clip's duration and frame size, an image's size, bytes and type."""

from __future__ import annotations

import contextlib
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

from hss_inspect.media.cache_entries import write_atomically
from hss_inspect.media.cache_folder import cache_root
from hss_inspect.media.probe import probe_duration, probe_frame_size

_HASH_CHUNK = 4 * 1024 * 1024


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def remembered_sha256(path: Path, root: Path | None = None) -> str:
    """sha256 of a file, read once and then remembered while its size and mtime hold."""
    stat = path.stat()
    identity = f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}"
    if identity in _hashed:  # also where the cache cannot keep the memo
        return _hashed[identity]
    memo = (root or cache_root()) / "hashes" / hashlib.sha256(identity.encode()).hexdigest()
    with contextlib.suppress(OSError):
        remembered = memo.read_text().strip()
        if len(remembered) == 64:
            _hashed[identity] = remembered
            return remembered
    digest = file_sha256(path)
    write_atomically(memo, digest.encode(), root or cache_root())
    _hashed[identity] = digest
    return digest


_hashed: dict[str, str] = {}


def _facts_path(root: Path, digest: str) -> Path:
    return root / "facts" / f"{digest}.json"


def read_facts(root: Path, digest: str, kind: str) -> dict[str, Any] | None:
    """The stored facts of a file, or None when missing, of another kind or damaged."""
    try:
        record = json.loads(_facts_path(root, digest).read_text())
        facts = record["facts"]
        if record["crc32"] != _checksum(facts):
            return None
        return dict(facts) if facts.get("kind") == kind else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_facts(root: Path, digest: str, facts: dict[str, Any]) -> None:
    sealed = {"facts": facts, "crc32": _checksum(facts)}
    write_atomically(_facts_path(root, digest), json.dumps(sealed).encode(), root)


def _checksum(facts: dict[str, Any]) -> int:
    # as for the frames: a flipped digit must not mislead the token fit
    return zlib.crc32(json.dumps(facts, sort_keys=True).encode())


def cached_clip_geometry(
    path: Path, video_sha256: str | None = None, root: Path | None = None
) -> tuple[float, int, int]:
    """The clip's duration and its frames' size as shown, probed once and then read from
    the cache (the token fit needs them before any frame is chosen)."""
    root = root or cache_root()
    digest = video_sha256 or remembered_sha256(path, root)
    facts = read_facts(root, digest, "clip")
    if facts is not None:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            return float(facts["duration"]), int(facts["width"]), int(facts["height"])
    duration, (width, height) = probe_duration(path), probe_frame_size(path)
    write_facts(
        root, digest, {"kind": "clip", "duration": duration, "width": width, "height": height}
    )
    return duration, width, height
