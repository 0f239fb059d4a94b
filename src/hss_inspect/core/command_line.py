"""An eval as an `inspect eval` command line: how a recipe prints its runs, how the
register report gives back the commands its logs were run with, and how many samples an
eval's `--limit` or `--sample-id` selects."""

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
    model_args: Mapping[str, Any] = {},
) -> str:
    """`inspect eval TASK --model MODEL` with the eval `options` (`("epochs", 3)` gives
    `--epochs 3`), the generate options, `-T` task args, `-M` model args and one
    `--model-role` per role (a role as `{model: ..., <generate option>: ...}`)."""
    words = ["inspect", "eval", task, "--model", model]
    for name, value in [*options, *generate.items()]:
        words += [flag(name), str(value)]
    for option, pairs in (("-T", task_args), ("-M", model_args)):
        for name, value in pairs.items():
            words += [option, f"{name}={cli_value(value)}"]
    return shlex.join(words + role_words(roles))


def inspect_score_command(log: str, scorer: str, roles: Mapping[str, Mapping[str, Any]]) -> str:
    """`inspect score LOG --scorer SCORER` with one `--model-role` per role, appending its
    scores to the log in place (as `hss-inspect recipe judges` does)."""
    words = ["inspect", "score", log, "--scorer", scorer, *role_words(roles)]
    return shlex.join([*words, "--action", "append", "--overwrite"])


def role_words(roles: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One `--model-role` per role, a role as `{model: ..., <generate option>: ...}`."""
    words = []
    for role, spec in roles.items():
        fields = ", ".join(f"{k}: {v}" for k, v in spec.items())
        words += ["--model-role", f"{role}={{{fields}}}"]
    return words


def prepare_command(values: Mapping[str, Any], extra: Sequence[tuple[str, Any]] = ()) -> str:
    """`hss-inspect prepare` with the options among `values` that are not their defaults, as
    its flags, and the `extra` flags that are set: it prepares the media of that run."""
    from hss_inspect.core.options import OPTIONS, PREPARE_OPTIONS

    words = ["hss-inspect", "prepare"]
    for name in PREPARE_OPTIONS:
        value = values.get(name, OPTIONS[name].default)
        if value is not None and value != OPTIONS[name].default:
            words += [flag(name), cli_value(value)]
    for name, value in extra:
        if value is not None:
            words += [name, str(value)]
    return shlex.join(words)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def cli_value(value: Any) -> str:
    """A -T/-M value as Inspect reads it back: YAML, a comma list for a list."""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def survives_cli(value: Any) -> bool:
    """Whether `inspect eval` reads the written value back as this value: it splits a
    string at its commas and reads `a: b` as a mapping (a string it reads as a scalar of
    the same text, `false` or `10`, the tasks take alike)."""
    import yaml

    text = cli_value(value)
    try:
        read = yaml.safe_load(text)
    except yaml.YAMLError:
        return False
    if isinstance(read, str) and "," in read:
        read = read.split(",")
    expected = list(value) if isinstance(value, tuple) else value
    if read == expected:
        return True
    scalar = not isinstance(read, dict | list)
    return isinstance(value, str) and scalar and str(read).lower() == value.lower()


def selected_count(total: int, limit: Any, sample_id: Any) -> int:
    """How many of `total` samples `inspect eval --limit N | --limit A-B | --sample-id`
    leaves to run."""
    if total <= 0:
        return 0
    if sample_id is not None:
        chosen = len(sample_id) if isinstance(sample_id, list) else 1
    elif isinstance(limit, int):
        chosen = limit
    elif isinstance(limit, list | tuple) and len(limit) == 2:
        chosen = int(limit[1]) - int(limit[0]) + 1
    else:
        return total
    return min(total, chosen)
