"""What a media file looks like, for finding near-duplicates (`media.perceptual`): an
image's hashes (the whole and its crops), or the hashes of a clip's frames sampled at a
fixed rate by the package's own decoding (`media.video`); an image also keeps a small
grayscale copy, to check a match where the hashes put it (`media.alignment`). Worked out
once per file content and kept in the cache beside its facts
(`facts/<sha256>.look-<LOOK_FORMAT>.npz`), so a second build on the same pool or against
the same release decodes nothing."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from hss_inspect.core.settings import FrameSettings
from hss_inspect.media.cache_entries import write_atomically
from hss_inspect.media.cache_folder import cache_root
from hss_inspect.media.errors import MediaError
from hss_inspect.media.facts import remembered_sha256
from hss_inspect.media.image import upright_image
from hss_inspect.media.perceptual import (
    SIZE,
    Hashes,
    grayscale,
    picture_hash,
    picture_hashes,
    stored,
    thumbnail,
    unstored,
)
from hss_inspect.media.video import sample_video
from hss_inspect.media.workers import completed, worker_pool

# A look's file format; a change of the hash or the sampling below makes a new one (2: the
# hash not centred, so that turned pictures' hashes are its numbers moved; a blank crop
# kept as a row of zeros; an image's grayscale copy).
LOOK_FORMAT = 2
# A clip's frames are hashed at this rate, whatever its length: a clip cut from another
# shares a run of frames with it at most half a sampling interval apart.
LOOK_FPS = 2.0
LOOK_MAX_FRAMES = 7_200  # an hour at LOOK_FPS
# Frames decoded this small: the hash reads a 32x32 downscale.
LOOK_SIDE = 96
LOOK_SETTINGS = FrameSettings(
    fps=LOOK_FPS, max_frames=LOOK_MAX_FRAMES, frame_side=LOOK_SIDE, jpeg_quality=95
)


@dataclass(frozen=True)
class Look:
    """An image's hashes (row 0 the whole picture, then its crops) and its grayscale copy
    (`thumb`), or a clip's: one row a sampled frame, `seen` false for a blank frame (its row
    is not a likeness), and no copy."""

    media_type: str
    hashes: Hashes
    seen: NDArray[np.bool_]
    sha256: str
    thumb: NDArray[np.uint8] = field(default_factory=lambda: np.zeros((0, 0), np.uint8))

    @property
    def blank(self) -> bool:
        return not bool(self.seen.any())


def look_of(path: Path, media_type: str, root: Path | None = None) -> Look:
    """The look of an image or clip, read from the cache or worked out and kept there."""
    root = root or cache_root()
    digest = remembered_sha256(path, root)
    entry = root / "facts" / f"{digest}.look-{LOOK_FORMAT}.npz"
    kept = _read_look(entry, media_type, digest)
    if kept is not None:
        return kept
    hashes, seen, thumb = _image_look(path) if media_type == "image" else _clip_look(path)
    kept_hashes = stored(hashes)
    buffer = io.BytesIO()
    np.savez(buffer, kind=np.array(media_type), hashes=kept_hashes, seen=seen, thumb=thumb)
    write_atomically(entry, buffer.getvalue(), root)
    # as read back from the cache, so a first build and a second find the same distances
    return Look(media_type, unstored(kept_hashes), seen, digest, thumb)


def _read_look(entry: Path, media_type: str, digest: str) -> Look | None:
    try:
        with np.load(entry, allow_pickle=False) as kept:
            if str(kept["kind"]) != media_type:
                return None
            hashes, seen = unstored(kept["hashes"]), kept["seen"].astype(np.bool_)
            thumb = kept["thumb"].astype(np.uint8)
    except (OSError, ValueError, KeyError, EOFError):
        return None  # missing or damaged: worked out again
    if hashes.ndim != 2 or hashes.shape[1] != SIZE or len(seen) != len(hashes):
        return None
    if thumb.ndim != 2:
        return None
    return Look(media_type, hashes, seen, digest, thumb)


def _image_look(path: Path) -> tuple[Hashes, NDArray[np.bool_], NDArray[np.uint8]]:
    image, _ = upright_image(path.read_bytes(), path)
    gray = grayscale(image)
    hashes = picture_hashes(gray)
    return hashes, np.ones(len(hashes), np.bool_), thumbnail(gray)


def _clip_look(path: Path) -> tuple[Hashes, NDArray[np.bool_], NDArray[np.uint8]]:
    video = sample_video(path, LOOK_SETTINGS)
    rows = np.zeros((len(video.jpegs), SIZE), np.float32)
    seen = np.zeros(len(video.jpegs), np.bool_)
    for n, jpeg in enumerate(video.jpegs):
        with Image.open(io.BytesIO(jpeg)) as frame:
            found = picture_hash(grayscale(frame))
        if found is not None:
            rows[n], seen[n] = found, True
    return rows, seen, np.zeros((0, 0), np.uint8)


def looks_of(
    files: Sequence[tuple[Path, str]], jobs: int, root: Path | None = None
) -> list[Look | str]:
    """The look of each (path, media type), in worker processes when `jobs` > 1; a file
    that cannot be read gives the one line saying why, in its place."""
    root = root or cache_root()
    if jobs <= 1 or len(files) < 2:
        return [_look_or_problem(path, kind, root) for path, kind in files]
    with worker_pool(min(jobs, len(files)), _quiet) as pool:
        futures = {
            pool.submit(_look_or_problem, path, kind, root): n
            for n, (path, kind) in enumerate(files)
        }
        found: dict[int, Look | str] = {}
        for future in completed(futures):
            found[futures[future]] = future.result()
    return [found[n] for n in range(len(files))]


def _look_or_problem(path: Path, media_type: str, root: Path) -> Look | str:
    try:
        return look_of(path, media_type, root)
    except (MediaError, OSError) as exc:
        return f"{path}: {exc}"


def _quiet() -> None:
    """Nothing to set up in a worker."""
