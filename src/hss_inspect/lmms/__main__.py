"""`python -m hss_inspect.lmms` prints the folder of the HSS task YAMLs, for lmms-eval's
`--include_path` (lmms-eval 0.7.3 indexes its tasks before it reads LMMS_EVAL_PLUGINS, so
only `--include_path` makes them found)."""

from __future__ import annotations

from pathlib import Path

from hss_inspect.lmms import tasks


def tasks_folder() -> Path:
    return Path(tasks.__file__).parent


if __name__ == "__main__":
    print(tasks_folder())
