"""A model's Inspect name as the user typed it (`--model`, `--grader`, `--as NAME=MODEL`,
the human study's judge), checked the same way wherever a command takes one.

A name Inspect's model database or the paper's Table 5 knows passes. A name they do not
know but close to one they know is a slip: refused with the closest ("did you mean"),
before anything is priced or sent. A name close to nothing is a model they do not know (a
model served at an OpenAI-compatible endpoint, a fine-tune): it passes, and is priced as
unknown. A name is compared only with the known names of its route (its provider, and any
folder after it: `openai`, `openai-api/meta_ai`), so a model of a route no known name has
(`vllm/...`, `openai-api/my-server/...`) is never taken for a slip.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from hss_inspect.core.errors import InputError
from hss_inspect.core.names import closest
from hss_inspect.media.cache_folder import cache_root
from hss_inspect.providers.paper_models import deployments, judges

# How alike a typed model name and a known one (with the same version numbers) must be to
# be taken for a slip of it (difflib's ratio on the last part of the name). Higher than for
# option names: a new model named like a known one is not a slip, and a dropped, doubled or
# swapped letter still passes.
CLOSE_MODEL = 0.85
# Inspect drops these middle parts when it looks a name up in its database
# (`openai/azure/gpt-4o` is `openai/gpt-4o` there).
SERVICES = ("azure", "bedrock", "vertex")
# What to do for a model newer than Inspect's database, where a command prices it
NEWER_MODEL = "for a model newer than Inspect's database, give its price in --model-cost-config"
# ... and where a run only needs Inspect to know it
NEWER_INSPECT = "for a model newer than this inspect-ai, upgrade it: pip install -U inspect-ai"
NAMES_MEMO = "names"  # the memo of the database's names: inspect-<version>-names.json
# The package's own provider (hss_inspect.scripted) and its one model: any other name of
# its route is refused by the provider, so it is refused here before anything runs.
LOCAL_PROVIDER, LOCAL_MODEL = "hss", "scripted"


@dataclass(frozen=True)
class KnownModels:
    """The Inspect model names Inspect's database and Table 5 know, by their folded form."""

    by_folded: dict[str, str]

    def knows(self, name: str) -> bool:
        return fold(looked_up(name)) in self.by_folded

    def of_route(self, route: str) -> list[str]:
        """The known names under `route` (every known name for a bare name's empty one)."""
        names = self.by_folded.values()
        return [n for n in names if route_of(n) == route] if route else list(names)


def fold(name: str) -> str:
    """A name as Inspect's database compares names: case and `_`/`-` ignored."""
    return name.lower().replace("_", "-")


def looked_up(name: str) -> str:
    """The name Inspect looks up in its database: a service in the middle dropped."""
    parts = name.split("/")
    if len(parts) == 3 and parts[1].lower() in SERVICES:
        return f"{parts[0]}/{parts[2]}"
    return name


def route_of(name: str) -> str:
    """Everything before the model itself: `openai`, `openai-api/meta_ai`; '' for none."""
    return looked_up(name).rpartition("/")[0].lower()


@cache
def known_models() -> KnownModels:
    """Every model name Inspect's model database lists (its keys, aliases and snapshots)
    and every Inspect name of Table 5's models and judges."""
    names = [*database_names(), *(d.inspect_model for d in deployments() + judges())]
    return KnownModels({fold(name): name for name in names})


def database_names() -> list[str]:
    """The names Inspect's model database holds, remembered per Inspect version (reading
    the database takes a sixth of a second)."""
    found = recalled(NAMES_MEMO)
    if isinstance(found, list) and all(isinstance(name, str) for name in found):
        return found
    names = inspect_database_names()
    remember(NAMES_MEMO, names)
    return names


def recalled(memo: str) -> Any:
    """What was remembered for this Inspect version under `memo` (None: nothing)."""
    try:
        return json.loads(_memo_file(memo).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def remember(memo: str, found: Any) -> None:
    """Written whole and renamed into place; a folder that cannot be written only means
    the next command asks Inspect again."""
    file = _memo_file(memo)
    partial = file.with_name(f"{file.name}.{os.getpid()}.partial")
    with contextlib.suppress(OSError):
        file.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(found, sort_keys=True), encoding="utf-8")
        os.replace(partial, file)


def _memo_file(memo: str) -> Path:
    """The cache folder's file of what Inspect said, for this Inspect version."""
    suffix = f"-{memo}" if memo else ""
    return cache_root() / "models" / f"inspect-{version('inspect-ai')}{suffix}.json"


def inspect_database_names() -> list[str]:
    """The names Inspect's model database holds. Inspect has no public way to list them,
    nor to look a name up without its fuzzy match (`get_model_info("openai/gpt-6-astr")`
    returns GPT-6 Astra's entry), so the database is read here; the import is pinned by
    tests/test_model_names.py."""
    # Inspect's own loader of its database: no public list of the names
    from inspect_ai.model._model_info import (
        _get_model_info_db,  # inspect-evals-lint: ignore[private_api_imports] -- see above
    )

    return list(_get_model_info_db())


def check_model_name(
    name: str, option: str, newer: str = NEWER_MODEL, also_known: Iterable[str] = ()
) -> bool:
    """Whether Inspect's database or Table 5 knows `name` (or `also_known` names it: a
    price file's models); a name close to one of theirs is refused, naming the closest.
    `option` is where the name was given (`--model`, `--model-role grader`), `newer` what
    to do for a model newer than Inspect's database."""
    known = known_models()
    if known.knows(name) or name in set(also_known):
        return True
    refuse_if_local(name, option)
    if judged(name):
        refuse_if_close(name, option, newer, known)
    return False


def refuse_if_local(name: str, option: str) -> None:
    """An InputError for a model of the package's own provider other than its one model."""
    route, _, model = name.partition("/")
    if route == LOCAL_PROVIDER and model != LOCAL_MODEL:
        raise InputError(local_model_text(model, option))


def local_model_text(model: str, where: str) -> str:
    """The provider's one model, named where a name of its route is not it."""
    local = f"{LOCAL_PROVIDER}/{LOCAL_MODEL}"
    return (
        f"{LOCAL_PROVIDER}/{model} is not a model of the {LOCAL_PROVIDER} provider ({where}): "
        f"it has one model, {local}"
    )


def refuse_if_close(name: str, option: str, newer: str, known: KnownModels) -> None:
    """An InputError naming the known name of the same route closest to `name`, if one is
    close enough to be what was meant (written with the route as it was typed)."""
    typed = looked_up(name).rpartition("/")[2]
    by_model = {
        model: known_name
        for known_name in known.of_route(route_of(name))
        if _numbers(model := known_name.rpartition("/")[2]) == _numbers(typed)
    }
    found = closest(typed, by_model, CLOSE_MODEL)
    if found is None:
        return
    typed_route = name.rpartition("/")[0]
    meant = f"{typed_route}/{found}" if typed_route else by_model[found]
    raise InputError(
        f"{name} is not a model Inspect's model database or the paper's Table 5 knows "
        f"({option}): did you mean {meant}? ({newer})"
    )


def _numbers(model: str) -> list[str]:
    """The version numbers in a model's name: names that differ in them are different
    models (claude-opus-5-5, claude-opus-5-6), never a slip of each other."""
    return re.findall(r"\d+", model)


def judged(name: str) -> bool:
    """Whether a name can be taken for a slip: not the `none` model, not a fine-tune or
    snapshot named with a colon (`openai/ft:gpt-4o-mini:org::id`), and of a route some
    known name has (a bare name is compared with all of them)."""
    if name == "none" or ":" in name:
        return False
    route = route_of(name)
    return not route or bool(known_models().of_route(route))
