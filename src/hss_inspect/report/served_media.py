"""The media each attempt was served, as files beside the report's pages.

A sample's `sent_media` record (written by `conditions/turn`, kept in every log, with or
without its images) says what the model was sent: the clip's frames with their times and
hashes, or the image as prepared. `conditions.rebuild` makes those files again from the
release the run read and its media settings, through the package's own frame code and
media cache, and checks every logged hash; so a page shows the bytes the model received,
never a re-encoding of its own. Each distinct set is written once, into
`media/<key>/` (a clip's 500 frames as 500 files, never inlined in a page), and a set
already there from an earlier report is kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hss_inspect.conditions import prompt
from hss_inspect.conditions.rebuild import MANIFEST, rebuild, release_for
from hss_inspect.core.errors import SetupError
from hss_inspect.data.release import Release
from hss_inspect.media.errors import MediaError
from hss_inspect.media.frame_files import frame_name
from hss_inspect.report.logs import ScoredSample

MEDIA_FOLDER = "media"
NO_MEDIA = "none"
# What a rebuild raises for a user's situation (no copy of the release, a copy that
# differs from the one the eval read, a file that cannot be decoded): said on the page.
_CANNOT_REBUILD = (SetupError, FileNotFoundError, MediaError)


@dataclass(frozen=True)
class Served:
    """One distinct set of media as some attempts were served it."""

    key: str | None  # its folder under media/ (None: no media were sent)
    kind: str  # frames, image, native_video, none
    files: tuple[str, ...]  # paths under the pages' folder, in the order sent
    labels: tuple[str, ...]  # each frame's label, as the model read it before the frame
    size: tuple[int, int] | None  # width and height of each file as sent
    note: str  # the text the model read before the media
    summary: str  # one line: what was sent
    problem: str | None = None  # why the files are missing, when they are


def served_key(record: Mapping[str, Any]) -> str | None:
    """The folder of a record's media: the same bytes sent give the same key, whichever
    run sent them (None: no media sent)."""
    kind = record.get("kind")
    if kind in (None, NO_MEDIA):
        return None
    identity = {
        "kind": kind,
        "media": record.get("media_sha256"),
        "image": record.get("sha256"),
        "frames": record.get("frame_sha256"),
        # without frame hashes (an older record), what chose and shaped the frames
        "times": record.get("timestamps"),
        "settings": record.get("frame_settings"),
        "sent_size": record.get("frame_size_sent"),
        "budget": record.get("byte_budget"),
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"{kind}-{digest[:16]}"


def summary_of(record: Mapping[str, Any]) -> str:
    """What a record says was sent, in one line."""
    kind = record.get("kind")
    if kind == "frames":
        width, height = record.get("frame_size_sent") or record.get("frame_size") or (0, 0)
        line = (
            f"{record['frame_count']} frames of {width}×{height} px, "
            f"{record['effective_fps']:.2f} per second over {record['duration']:.1f} s"
        )
        return line + "".join(f"; {why}" for why in _frames_fitted(record))
    if kind == "image":
        line = f"the image at {record['width']}×{record['height']} px"
        return line + (
            "; re-encoded to fit the provider's limits" if record.get("reencoded") else ""
        )
    if kind == "native_video":
        return f"the clip itself, {record.get('bytes', 0):,} bytes, {record['duration']:.1f} s"
    return "no media (the question alone)"


def _frames_fitted(record: Mapping[str, Any]) -> list[str]:
    fit = record.get("token_fit") or {}
    reasons = []
    if fit.get("thinned_to_fit"):
        reasons.append(f"thinned from {fit.get('frames_planned')} to fit the context window")
    elif record.get("thinned"):
        reasons.append(f"thinned from {record['planned_frames']} to the provider's image cap")
    if fit.get("shrunk_to_fit"):
        reasons.append("shrunk to fit the context window")
    if record.get("shrunk_to_budget"):
        reasons.append("re-encoded smaller to fit the request's byte budget")
    return reasons


def settings_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """The settings and limits that decided the media a record describes, by name: where
    two runs were served different media, the ones that differ say why."""
    kind = record.get("kind")
    limits = record.get("limits") or {}
    if kind == "frames":
        frames = record.get("frame_settings") or {}
        fit = record.get("token_fit") or {}
        return {
            "frames per second": frames.get("fps"),
            "frame cap": frames.get("max_frames"),
            "frame side": frames.get("frame_side"),
            "image cap": frames.get("max_images"),
            "JPEG quality": frames.get("jpeg_quality"),
            "byte budget": record.get("byte_budget"),
            "context window": fit.get("window"),
            "provider": limits.get("provider"),
        }
    if kind == "image":
        return {
            "largest side": limits.get("image_max_side"),
            "byte limit": limits.get("image_max_raw_bytes"),
            "pixel limit": limits.get("image_max_pixels"),
            "provider": limits.get("provider"),
        }
    return {"sent as": kind or NO_MEDIA}


def differing_settings(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of the settings whose values differ between the records."""
    values = [settings_of(r) for r in records]
    names = dict.fromkeys(name for found in values for name in found)
    return [name for name in names if len({json.dumps(v.get(name)) for v in values}) > 1]


def note_of(record: Mapping[str, Any]) -> str:
    """The text the model read before its media, rebuilt from the record."""
    kind = record.get("kind")
    if kind == "frames":
        return prompt.frames_note(
            frame_count=int(record["frame_count"]),
            effective_fps=float(record["effective_fps"]),
            duration=float(record["duration"]),
            timestamps=record["timestamps"],
            thinned_from=int(record["planned_frames"]) if record.get("thinned") else None,
        )
    if kind == "image":
        return prompt.IMAGE_NOTE
    if kind == "native_video":
        return prompt.native_video_note(float(record["duration"]))
    return ""


class MediaShelf:
    """The media sets of the pages under `root/media/`, each rebuilt once; the release of
    each run opened once (`dataset`/`revision`: a copy to use instead of the recorded one)."""

    def __init__(self, root: Path, dataset: str | None = None, revision: str | None = None):
        self.root, self.dataset, self.revision = root, dataset, revision
        self._served: dict[str, Served] = {}
        self._releases: dict[str, Release | str] = {}

    def served(self, sample: ScoredSample, eval_metadata: Mapping[str, Any]) -> Served:
        record = (sample.metadata or {}).get("sent_media")
        if not isinstance(record, dict):
            return _without_files(None, {})
        key = served_key(record)
        if key is None:
            return _without_files(None, record)
        if key not in self._served:
            self._served[key] = self._rebuilt(key, sample, record, eval_metadata)
        return self._served[key]

    def _rebuilt(
        self,
        key: str,
        sample: ScoredSample,
        record: dict[str, Any],
        eval_metadata: Mapping[str, Any],
    ) -> Served:
        folder = self.root / MEDIA_FOLDER / key
        names = _written(folder, record)
        if names is None:
            release = self._release(eval_metadata)
            if isinstance(release, str):
                return _without_files(key, record, release)
            settings = eval_metadata.get("hss_media_settings") or {}
            try:
                names = rebuild(sample, release, folder, settings).files
            except _CANNOT_REBUILD as exc:
                return _without_files(key, record, f"not rebuilt: {exc}")
        files = tuple(f"{MEDIA_FOLDER}/{key}/{name}" for name in names)
        return Served(
            key=key,
            kind=str(record["kind"]),
            files=files,
            labels=_labels(record),
            size=_size(record),
            note=note_of(record),
            summary=summary_of(record),
        )

    def _release(self, eval_metadata: Mapping[str, Any]) -> Release | str:
        """The run's release, or why it cannot be opened (said on the page)."""
        requested = eval_metadata.get("hss_dataset_requested") or {}
        where = json.dumps([requested, eval_metadata.get("hss_dataset_revision")])
        if where not in self._releases:
            self._releases[where] = _opened(
                lambda: release_for(dict(eval_metadata), self.dataset, self.revision)
            )
        return self._releases[where]


def _opened(open_it: Callable[[], Release]) -> Release | str:
    try:
        return open_it()
    except SetupError as exc:
        return f"the release cannot be opened ({exc}); give a copy with --dataset"


def _written(folder: Path, record: Mapping[str, Any]) -> list[str] | None:
    """The files of a set an earlier report rebuilt and checked into `folder`, when its
    manifest (written last) records this very record; else None."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("logged") != record:
        return None
    if record["kind"] == "frames":
        names = [frame_name(i) for i in range(int(record["frame_count"]))]
    else:
        names = sorted(p.name for p in folder.glob("image.*"))
    return names if names and all((folder / n).is_file() for n in names) else None


def _labels(record: Mapping[str, Any]) -> tuple[str, ...]:
    if record.get("kind") != "frames":
        return ()
    return tuple(prompt.frame_label(t) for t in record["timestamps"])


def _size(record: Mapping[str, Any]) -> tuple[int, int] | None:
    kind = record.get("kind")
    if kind == "frames":
        width, height = record.get("frame_size_sent") or record["frame_size"]
        return int(width), int(height)
    if kind == "image":
        return int(record["width"]), int(record["height"])
    return None


def _without_files(
    key: str | None, record: Mapping[str, Any], problem: str | None = None
) -> Served:
    return Served(
        key=key,
        kind=str(record.get("kind") or NO_MEDIA),
        files=(),
        labels=_labels(record) if record else (),
        size=_size(record) if record else None,
        note=note_of(record) if record else "",
        summary=summary_of(record) if record else "the log records no media sent",
        problem=problem,
    )
