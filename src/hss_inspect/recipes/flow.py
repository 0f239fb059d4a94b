"""A recipe's plan as an Inspect Flow spec (`hss-inspect recipe NAME --flow OUT.py|OUT.yaml`).

The spec is Flow's own data (what `flow config` prints): one task per planned run, with
the fields every task shares written once under `defaults`. Two placements keep a Flow
run's logs identical to the recipe's:

- the generate options go on the task's `config`, not on a `FlowModel`: that is where the
  recipe's `task_with(config=...)` puts them, so the eval's task identifier is the same and
  `flow check` recognises a recipe's log (and the recipe resumes Flow's);
- every task carries all its `args`, since Flow fills a field from `defaults.task` only
  when the task leaves it out (it does not merge two `args` mappings).

Rendering is pure and imports neither Inspect nor Flow; only `load_with_flow` imports
Inspect Flow (an optional extra).
"""

from __future__ import annotations

import copy
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hss_inspect.providers.paper_models import paper_data
from hss_inspect.recipes.plans import RECIPES, PlannedRun

INSTALL_HINT = "pip install 'hss-inspect[flow]'"
# Fields of a task that `defaults.task` carries when every task has the same value.
SHARED_TASK_FIELDS = ("model_roles", "epochs")
_LINE = 88


def spec_data(tasks: Sequence[Mapping[str, Any]], log_dir: str) -> dict[str, Any]:
    """The spec as Flow's YAML form; with several tasks, the generate options and task
    fields they all share move to `defaults` (Flow merges them back into each task)."""
    own: list[dict[str, Any]] = [copy.deepcopy(dict(t)) for t in tasks]
    defaults: dict[str, Any] = {}
    if len(own) > 1:
        config = _shared_items([t.get("config", {}) for t in own])
        if config:
            defaults["config"] = config
            for t in own:
                t["config"] = {k: v for k, v in t["config"].items() if k not in config}
        defaults["task"] = _shared_items(
            [{k: t[k] for k in SHARED_TASK_FIELDS if k in t} for t in own]
        )
        for t in own:
            for name in defaults["task"]:
                del t[name]
    for t in own:
        if not t.get("config", True):
            del t["config"]
    defaults = {k: v for k, v in defaults.items() if v}
    return {"log_dir": log_dir, **({"defaults": defaults} if defaults else {}), "tasks": own}


def _shared_items(mappings: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The items every mapping has, with the same value."""
    first = mappings[0]
    return {k: v for k, v in first.items() if all(k in m and m[k] == v for m in mappings)}


def spec_text(data: Mapping[str, Any], path: Path, header: str) -> str:
    """The spec file for `path`: Python (Flow runs it and takes its last expression) or YAML."""
    if path.suffix == ".py":
        return python_text(data, header)
    if path.suffix in (".yaml", ".yml"):
        return yaml_text(data, header)
    from hss_inspect.core.errors import SetupError

    raise SetupError(f"--flow {path}: Inspect Flow reads .py or .yaml specs; name the file so")


def yaml_text(data: Mapping[str, Any], header: str) -> str:
    comment = "".join(f"# {line}".rstrip() + "\n" for line in header.splitlines())
    return comment + yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True)


# ---- Python ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A constructor call in the written spec, e.g. `FlowTask(name=..., epochs=3)`."""

    name: str
    fields: dict[str, Any]


def python_text(data: Mapping[str, Any], header: str) -> str:
    spec = _spec_call(data)
    used = sorted(_names_used(spec))
    flow_names = [n for n in used if n.startswith("Flow")]
    imports = ["from inspect_ai.model import GenerateConfig"] if "GenerateConfig" in used else []
    imports.append(f"from inspect_flow import {', '.join(flow_names)}")
    return f'"""{header}\n"""\n\n' + "\n".join(imports) + "\n\n" + _render(spec, 0) + "\n"


def _spec_call(data: Mapping[str, Any]) -> Call:
    fields: dict[str, Any] = {"log_dir": data["log_dir"]}
    defaults = data.get("defaults")
    if defaults:
        shared: dict[str, Any] = {}
        if "config" in defaults:
            shared["config"] = _config_call(defaults["config"])
        if "task" in defaults:
            shared["task"] = _task_call(defaults["task"])
        fields["defaults"] = Call("FlowDefaults", shared)
    fields["tasks"] = [_task_call(t) for t in data["tasks"]]
    return Call("FlowSpec", fields)


def _task_call(task: Mapping[str, Any]) -> Call:
    fields = dict(task)
    if "config" in fields:
        fields["config"] = _config_call(fields["config"])
    if "model_roles" in fields:
        fields["model_roles"] = {
            role: Call("FlowModel", _model_fields(model))
            for role, model in fields["model_roles"].items()
        }
    return Call("FlowTask", fields)


def _model_fields(model: Mapping[str, Any]) -> dict[str, Any]:
    fields = dict(model)
    if "config" in fields:
        fields["config"] = _config_call(fields["config"])
    return fields


def _config_call(config: Mapping[str, Any]) -> Call:
    return Call("GenerateConfig", dict(config))


def _names_used(value: Any) -> set[str]:
    if isinstance(value, Call):
        return {value.name}.union(*(_names_used(v) for v in value.fields.values()))
    if isinstance(value, dict):
        return set().union(*(_names_used(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_names_used(v) for v in value))
    return set()


def _render(value: Any, indent: int) -> str:
    """`value` as Python source: on one line when it fits, else one item a line."""
    flat = _flat(value)
    if len(flat) + indent <= _LINE or not isinstance(value, Call | dict | list):
        return flat
    pad, inner = " " * indent, " " * (indent + 4)
    if isinstance(value, Call):
        items = [f"{inner}{k}={_render(v, indent + 4)}," for k, v in value.fields.items()]
        return f"{value.name}(\n" + "\n".join(items) + f"\n{pad})"
    if isinstance(value, dict):
        items = [f"{inner}{_flat(k)}: {_render(v, indent + 4)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{_render(v, indent + 4)}," for v in value]
    return "[\n" + "\n".join(items) + f"\n{pad}]"


def _flat(value: Any) -> str:
    if isinstance(value, Call):
        return (
            f"{value.name}(" + ", ".join(f"{k}={_flat(v)}" for k, v in value.fields.items()) + ")"
        )
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    raise TypeError(f"no Python literal for {type(value).__name__} {value!r} in a Flow spec")


# ---- Inspect Flow itself --------------------------------------------------------------


def load_with_flow(path: Path) -> Any:
    """The spec as Inspect Flow's own loader reads it (defaults folded into every task);
    nothing is imported from the spec's tasks and nothing runs."""
    from hss_inspect.core.errors import SetupError

    try:
        from inspect_flow.api import init, load_spec
    except ModuleNotFoundError:
        raise SetupError(f"Inspect Flow is not installed: {INSTALL_HINT}") from None
    init(display="none", dotenv_base_dir=None)
    return load_spec(str(path))


def flow_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("inspect_flow") is not None


@dataclass(frozen=True)
class FlowOrigin:
    """The `hss-inspect recipe NAME --flow OUT` command a spec is written by: the recipe,
    the spec's path, the eval set's folder, the models chosen and the repeated options
    (`--as`, `-T`) as given."""

    name: str
    out: Path
    log_dir: str
    models: str | None
    options: tuple[tuple[str, str], ...]


def write_spec(runs: Sequence[PlannedRun], origin: FlowOrigin) -> int | None:
    """Write the runs as a Flow spec at `origin.out`; the tasks Flow's own loader reads
    back, or None when Inspect Flow is not installed (nothing is read back)."""
    data = spec_data([r.flow_task() for r in runs], _log_dir_seen_from(origin))
    text = spec_text(data, origin.out, spec_header(origin))
    origin.out.parent.mkdir(parents=True, exist_ok=True)
    origin.out.write_text(text, encoding="utf-8")
    return len(load_with_flow(origin.out).tasks) if flow_installed() else None


def _log_dir_seen_from(origin: FlowOrigin) -> str:
    """Flow reads a relative `log_dir` from the spec's folder; the recipe's is the cwd's."""
    if Path(origin.log_dir).is_absolute():
        return origin.log_dir
    return os.path.relpath(Path(origin.log_dir).resolve(), origin.out.resolve().parent)


def _flow_subject(name: str) -> str:
    if name == "judges":
        count = len(paper_data()["sweeps"]["judges"]["models"])
        return f"the runs whose answers App. I re-grades: {count} models at their Table 1 settings"
    return RECIPES[name]


def _same_runs_as(origin: FlowOrigin) -> str:
    """The recipe command that makes the spec's runs."""
    if origin.name != "judges":
        return f"hss-inspect recipe {origin.name}"
    models = origin.models or ",".join(paper_data()["sweeps"]["judges"]["models"])
    return f"hss-inspect recipe table1 --models {models}"


def spec_header(origin: FlowOrigin) -> str:
    """The spec's opening comment: what it runs, the command that wrote it, how to run it."""
    out, name = origin.out, origin.name
    words = ["hss-inspect", "recipe", name, "--flow", str(out), "--log-dir", origin.log_dir]
    words += ["--models", origin.models] if origin.models else []
    for option, value in origin.options:
        words += [option, value]
    lines = [
        f"Inspect Flow spec of the HSS recipe `{name}` — {_flow_subject(name)}.",
        "",
        f"Written by: {shlex.join(words)}",
        f"The runs are those `{_same_runs_as(origin)}` makes with the same options",
        "(tasks, task options, generate options, epochs, judge), so the logs are the same",
        "and either finishes a log folder the other started.",
        "",
        f"Run:   flow run {out.name}     (needs: {INSTALL_HINT})",
        f"Check: flow check {out.name}   (which tasks the log folder has complete)",
    ]
    if name == "judges":
        lines += [
            "These runs give the answers; App. I grades them again with the other judges:",
            "       hss-inspect recipe judges <the log_dir below>",
        ]
    return "\n".join(lines)
