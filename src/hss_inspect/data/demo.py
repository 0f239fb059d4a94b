"""The demo set: eight small HSS-format tasks shipped in the package.

`-T dataset=demo` (and the `hss_demo` task) reads the copy under `demo_data/`
(`data/test.jsonl` + `media/`, the release's own layout). Every picture and clip is a
simple scene drawn by this project (`data.demo_maker`), so the set is free of any licence
and each question can be answered from what the media shows.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DEMO_DATASET = "demo"
DEMO_FOLDER = "demo_data"


def demo_root() -> Path:
    """The demo copy inside the installed package (or the source tree when editable)."""
    return Path(str(files("hss_inspect.data"))) / DEMO_FOLDER
