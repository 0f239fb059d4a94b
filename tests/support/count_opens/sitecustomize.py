"""Counts where clips are opened, in any Python process started with this folder on its
PYTHONPATH and HSS_TEST_OPEN_LOG set: each time PyAV opens a file for reading, one line
(process id, file) is appended to that log. The commands' own child processes (prepare's
workers, Inspect's) count too, since they inherit both."""

from __future__ import annotations

import os
from typing import Any

_LOG = os.environ.get("HSS_TEST_OPEN_LOG")

if _LOG:
    import av

    _real_open = av.open

    def _counting_open(file: Any, mode: str | None = None, *args: Any, **kwargs: Any) -> Any:
        if mode is None or mode.startswith("r"):
            with open(_LOG, "a", encoding="utf-8") as log:
                log.write(f"{os.getpid()} {file}\n")
        return _real_open(file, mode, *args, **kwargs)

    av.open = _counting_open
