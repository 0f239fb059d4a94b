"""The error types media preparation raises, and its time limit; callers add the task id."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from hss_inspect.core.options import spell


class MediaError(Exception):
    """A media file that cannot be read, decoded or brought within the limits."""

    @property
    def remedy(self) -> str:
        return "check or replace the file"


class MediaTimeout(MediaError):
    """Preparing one media file took longer than its time limit."""

    @property
    def remedy(self) -> str:
        return self.remedy_with("hss-inspect prepare")

    def remedy_with(self, prepare: str) -> str:
        """The remedy, naming the `hss-inspect prepare` command that fills the cache."""
        return (
            f"raise the limit ({spell('media_timeout', 'SECONDS')}) or fill the cache ahead "
            f"of the run with `{prepare}`"
        )


class MediaCancelled(MediaError):
    """Nobody waits for this preparation any more (every sample that needed it stopped)."""


@dataclass(frozen=True)
class Deadline:
    """A time limit on preparing one media file, checked between units of work.

    Decoding runs in threads, which cannot be stopped from outside; checking between
    packets stops the work itself, not only the wait for it. `cancelled`, when set,
    stops it the same way.
    """

    seconds: float | None
    cancelled: threading.Event | None = None
    started: float = field(default_factory=time.monotonic)

    def check(self, path: Path) -> None:
        if self.cancelled is not None and self.cancelled.is_set():
            raise MediaCancelled(f"{path}: preparation stopped, nothing waits for it")
        if self.seconds is not None and time.monotonic() - self.started > self.seconds:
            raise MediaTimeout(
                f"{path}: preparing it took longer than the {self.seconds:g} s media time limit"
            )


NO_DEADLINE = Deadline(None)
