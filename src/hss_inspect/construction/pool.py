"""The curated media pool a build's authors choose from (Sec. 2.4, step 1): a folder of
images and clips in the formats the tasks take, each file an item with an id. Pages and
links name an item by its id, never by its path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".gif")
VIDEO_SUFFIXES = (".mp4", ".mov", ".m4v", ".mpeg", ".mpg", ".webm", ".mkv")


@dataclass(frozen=True)
class PoolItem:
    item_id: str
    path: str  # relative POSIX path inside the pool folder
    media_type: str
    bytes: int


@dataclass(frozen=True)
class PoolScan:
    items: tuple[PoolItem, ...]
    skipped: tuple[str, ...]  # "path: why", for files that look like media but do not open


def media_type_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix in VIDEO_SUFFIXES:
        return "video"
    return None


def scan_pool(folder: Path) -> PoolScan:
    """Every image and clip below `folder` that opens, in path order, numbered item-0001...;
    other files are not media and are passed over."""
    items: list[PoolItem] = []
    skipped: list[str] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        kind = media_type_of(path)
        relative = PurePosixPath(path.relative_to(folder).as_posix())
        if kind is None or any(part.startswith(".") for part in relative.parts):
            continue
        problem = unreadable(path, kind)
        if problem:
            skipped.append(f"{relative}: {problem}")
            continue
        item_id = f"item-{len(items) + 1:04d}"
        items.append(PoolItem(item_id, str(relative), kind, path.stat().st_size))
    return PoolScan(tuple(items), tuple(skipped))


def unreadable(path: Path, media_type: str) -> str:
    """Why the file cannot be shown as its kind ('' when it can)."""
    import av  # only a scan opens files: the build's other commands start without PyAV
    from PIL import Image

    try:
        if media_type == "image":
            with Image.open(path) as image:
                image.verify()
            return ""
        with av.open(str(path)) as container:
            return "" if container.streams.video else "no video stream"
    except (OSError, SyntaxError, ValueError, av.FFmpegError) as exc:
        return f"does not open as {'an image' if media_type == 'image' else 'a clip'} ({exc})"
