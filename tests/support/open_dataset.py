"""Child process: open a release as the task does; print how it ended and how long it took.

    python -m tests.support.open_dataset DATASET REVISION [MEDIA_PATH]

With MEDIA_PATH it then fetches that media file as a sample would, timed on its own.

The hub client reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when imported, so each case
runs in a fresh process with its own environment.
"""

from __future__ import annotations

import json
import sys
import time

from hss_inspect.core.errors import SetupError
from hss_inspect.data.release import Release, open_release


def fetch_media(release: Release, media_path: str) -> dict[str, object]:
    started = time.perf_counter()
    try:
        release.media_file(media_path, "task-x")
        result: dict[str, object] = {"media_error": None}
    except Exception as exc:
        result = {"media_error": str(exc)}
    result["media_seconds"] = time.perf_counter() - started
    return result


def main() -> None:
    started = time.perf_counter()
    outcome: dict[str, object]
    try:
        release = open_release(sys.argv[1], sys.argv[2])
        outcome = {"ok": True, "revision": release.revision}
        if len(sys.argv) > 3:
            outcome.update(fetch_media(release, sys.argv[3]))
    except Exception as exc:
        outcome = {
            "ok": False,
            "type": type(exc).__name__,
            "prerequisite": isinstance(exc, SetupError),  # printed without a traceback
            "message": str(exc),
        }
    outcome["seconds"] = time.perf_counter() - started
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
