"""Registering the package's Inspect hooks, except where no eval runs, and the opening
step every hook shares: is the task starting one of ours?

Inspect announces every registered hook on stderr ("hooks enabled: ...") when it first
builds a model. `hss-inspect estimate` and `prepare --model` build one to read its limits
and run no eval, so there the hooks have nothing to do and the banner would be the only
line not the command's own: the command marks its process (`NO_EVAL_ENV`) and the hooks
are left unregistered.
"""

from __future__ import annotations

import os

from inspect_ai.hooks import Hooks, TaskStart, hooks
from inspect_ai.log import EvalSpec

from hss_inspect.core.settings import NO_EVAL_ENV


def register_hook(hook: type[Hooks], name: str, description: str) -> None:
    """Register `hook` with Inspect under `name`, unless this process runs no eval."""
    if not os.environ.get(NO_EVAL_ENV):
        hooks(name=name, description=description)(hook)


def hss_task_spec(data: TaskStart) -> EvalSpec | None:
    """The spec of the task starting, when it is an HSS task with media settings (the judge
    audit and other packages' tasks are not)."""
    spec = data.spec
    return spec if "hss_media_settings" in (spec.metadata or {}) else None
