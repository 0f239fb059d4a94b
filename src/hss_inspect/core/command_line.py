"""An eval as an `inspect eval` command line: how a recipe prints its runs and how the
register report gives back the commands its logs were run with."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any


def inspect_eval_command(
    task: str,
    model: str,
    generate: Mapping[str, Any] = {},
    task_args: Mapping[str, Any] = {},
    roles: Mapping[str, Mapping[str, Any]] = {},
    options: Sequence[tuple[str, Any]] = (),
) -> str:
    """`inspect eval TASK --model MODEL` with the eval `options` (`("epochs", 3)` gives
    `--epochs 3`), the generate options, `-T` task args and one `--model-role` per role
    (a role as `{model: ..., <generate option>: ...}`)."""
    words = ["inspect", "eval", task, "--model", model]
    for name, value in [*options, *generate.items()]:
        words += [flag(name), str(value)]
    for name, value in task_args.items():
        words += ["-T", f"{name}={value}"]
    for role, spec in roles.items():
        fields = ", ".join(f"{k}: {v}" for k, v in spec.items())
        words += ["--model-role", f"{role}={{{fields}}}"]
    return shlex.join(words)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")
