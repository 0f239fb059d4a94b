"""Humanity's Sixth Sense (HSS) for Inspect AI.

The tasks are `hss_inspect/hss` and its presets (`hss_inspect.task`); the `hss-inspect`
command is `hss_inspect.commands.cli`. The tasks are imported on first use, so that the command
and `import hss_inspect` stay light.
"""

from typing import Any

__all__ = [
    "hss",
    "hss_agentic",
    "hss_blind",
    "hss_demo",
    "hss_image",
    "hss_judge_audit",
    "hss_oracle",
    "hss_video",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from hss_inspect import task

        return getattr(task, name)
    raise AttributeError(name)
