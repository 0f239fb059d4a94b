"""A warning before a run whose `.eval` log would hold more than about 1 GB of images.

Inspect stores a sample's images inside that sample's record, once per sample and
epoch: its log format has no store shared between samples, so the frames of a clip
are written again for every epoch (and every model). A full HSS run logged with images
is tens of GB, more than `inspect view` and `inspect eval-retry` handle well. The
warning names the way out: `--no-log-images`, with `hss-inspect rebuild-frames` to see
any sample's frames again from its log record.
"""

from __future__ import annotations

import logging
from typing import Any

from inspect_ai.hooks import Hooks, TaskStart

from hss_inspect.core.command_line import selected_count
from hss_inspect.hooks.registration import hss_task_spec, register_hook

logger = logging.getLogger(__name__)

WARN_ABOVE_BYTES = 1_000_000_000
# A 768 px JPEG frame of detailed footage at the frame quality, as sent and as logged:
# `python -m benchmarks.log_size` measured 58.6 KB (the log's deflate undoes base64).
FRAME_BYTES_AT_768 = 60_000
_REFERENCE_SIDE = 768
_MEDIA_FREE_CONDITIONS = ("blind", "oracle")


def frame_bytes(frame_side: int) -> float:
    """Typical bytes of one frame: JPEG size grows with the pixel count."""
    return FRAME_BYTES_AT_768 * (frame_side / _REFERENCE_SIDE) ** 2


def clip_bytes(media_settings: dict[str, Any]) -> float:
    """Typical bytes of one clip's frames at these settings, for a clip long enough to
    reach the frame cap (most HSS clips are; Sec. 2 gives a median of 76 s)."""
    frames = media_settings["frames"]
    cap = int(min(frames["max_frames"], frames.get("max_images") or frames["max_frames"]))
    return min(
        cap * frame_bytes(int(frames["frame_side"])), float(media_settings["frame_bytes_budget"])
    )


def share_run(total: int, limit: Any, sample_id: Any) -> float:
    """The share of the selected tasks a `--limit` or `--sample-id` leaves to run."""
    return selected_count(total, limit, sample_id) / total if total > 0 else 0.0


def projected_frame_bytes(metadata: dict[str, Any], epochs: int, share: float) -> float:
    """Bytes of video frames a run of this eval will log, before it starts."""
    if metadata.get("hss_condition") in _MEDIA_FREE_CONDITIONS:
        return 0.0
    videos = metadata["hss_selection"].get("videos", 0)
    return float(videos * share * epochs * clip_bytes(metadata["hss_media_settings"]))


def warning_text(projected: float, videos: int, epochs: int) -> str:
    return (
        f"this run may log up to {projected / 1e9:.1f} GB of video frames: Inspect keeps a "
        f"copy of each clip's frames for every sample and epoch ({videos} clip(s) x {epochs} "
        "epoch(s)), and logs that large are slow to open in `inspect view` and to resume "
        "with `inspect eval-retry`. Add --no-log-images to keep them out of the log; the "
        "frame times and hashes stay in each sample's sent_media, and `hss-inspect "
        "rebuild-frames LOG --sample ID --out DIR` rebuilds any sample's frames from it."
    )


class LogSizeWarning(Hooks):
    async def on_task_start(self, data: TaskStart) -> None:
        spec = hss_task_spec(data)
        if spec is None or spec.config.log_images is False:
            return
        metadata = spec.metadata or {}
        epochs = spec.config.epochs or 1
        selection = metadata["hss_selection"]
        share = share_run(selection.get("tasks", 0), spec.config.limit, spec.config.sample_id)
        projected = projected_frame_bytes(metadata, epochs, share)
        if projected > WARN_ABOVE_BYTES:
            videos = round(selection.get("videos", 0) * share)
            logger.warning(warning_text(projected, videos, epochs))


register_hook(
    LogSizeWarning, "hss_log_size", "Warns before an HSS run that would log >1 GB of images"
)
