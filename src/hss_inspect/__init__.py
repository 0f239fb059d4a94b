"""Humanity's Sixth Sense (HSS) for Inspect AI.

The tasks are `hss_inspect/hss` and its presets (see `hss_inspect.task`); the
`hss-inspect` command is `hss_inspect.cli`. Importing the package itself stays light so
that the command starts quickly.
"""

from typing import Any

__all__ = ["hss"]


def __getattr__(name: str) -> Any:
    if name == "hss":
        from hss_inspect.task import hss

        return hss
    raise AttributeError(name)
