"""The `inspect` command with the release datum set, as a maintainer sets it in
task_configs/release.yaml (docs/publishing.md#pinning-the-release):

    python -m tests.support.released_inspect COMMIT <inspect arguments>

The datum is read once, when the task options are declared, so it is set here before
Inspect loads the package; then Inspect's own command line runs (the `inspect` console
script's entry point).
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

from hss_inspect.core import config


def main() -> None:
    commit = config.commit_in({"commit": sys.argv.pop(1)}, "the test's release datum")
    config.release_commit = lambda: commit  # type: ignore[assignment]
    (inspect,) = entry_points(group="console_scripts", name="inspect")
    sys.argv[0] = "inspect"
    sys.exit(inspect.load()())


if __name__ == "__main__":
    main()
