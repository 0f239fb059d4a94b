"""Child process: open a release as the task does; print how it ended and how long it took.

    python -m tests.support.open_dataset DATASET REVISION

The hub client reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when imported, so each case
runs in a fresh process with its own environment.
"""

from __future__ import annotations

import json
import sys
import time

from inspect_ai._util.error import PrerequisiteError

from hss_inspect.release import open_release


def main() -> None:
    started = time.perf_counter()
    outcome: dict[str, object]
    try:
        release = open_release(sys.argv[1], sys.argv[2])
        outcome = {"ok": True, "revision": release.revision}
    except Exception as exc:
        outcome = {
            "ok": False,
            "type": type(exc).__name__,
            "prerequisite": isinstance(exc, PrerequisiteError),
            "message": str(exc),
        }
    outcome["seconds"] = time.perf_counter() - started
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
