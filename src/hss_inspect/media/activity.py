"""The counts of what preparing media cost this process (`Activity`): the caches add to
them, `hss-inspect estimate` and `prepare` read them."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Activity:
    """What preparing media cost this process: clips decoded (frames each), the seconds
    their decoding took, images prepared from their files. `hss-inspect estimate` tells
    from it what was already prepared."""

    clips: dict[str, int] = field(default_factory=dict)
    decode_seconds: float = 0.0
    images: dict[str, int] = field(default_factory=dict)  # preparations of each image
    not_stored: int = 0  # cache files that could not be written

    def since(self, earlier: Activity) -> Activity:
        return Activity(
            _counts_since(self.clips, earlier.clips),
            self.decode_seconds - earlier.decode_seconds,
            _counts_since(self.images, earlier.images),
            self.not_stored - earlier.not_stored,
        )


def _counts_since(now: dict[str, int], earlier: dict[str, int]) -> dict[str, int]:
    grown = {key: count - earlier.get(key, 0) for key, count in now.items()}
    return {key: count for key, count in grown.items() if count}


_activity = Activity()
_activity_lock = threading.Lock()


def activity() -> Activity:
    """A copy of this process's media work so far."""
    with _activity_lock:
        return Activity(
            dict(_activity.clips),
            _activity.decode_seconds,
            dict(_activity.images),
            _activity.not_stored,
        )


def count_decoded(digest: str, frames: int, seconds: float) -> None:
    with _activity_lock:
        _activity.clips[digest] = _activity.clips.get(digest, 0) + frames
        _activity.decode_seconds += seconds


def count_image(digest: str) -> None:
    with _activity_lock:
        _activity.images[digest] = _activity.images.get(digest, 0) + 1


def count_not_stored() -> None:
    with _activity_lock:
        _activity.not_stored += 1
