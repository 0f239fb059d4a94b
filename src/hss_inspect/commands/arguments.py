"""Flags and words that several `hss-inspect` commands take the same way."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from hss_inspect.core.errors import InputError


def add_cost_config_argument(parser: argparse.ArgumentParser, what: str) -> None:
    """`--model-cost-config FILE`, in Inspect's format and with its default (the variable
    `inspect eval` reads); `what` the prices are for."""
    parser.add_argument(
        "--model-cost-config",
        metavar="FILE",
        default=os.environ.get("INSPECT_EVAL_MODEL_COST_CONFIG"),
        help=f"prices for {what}, as given to inspect eval --model-cost-config (YAML or JSON: "
        "model: {input, output, input_cache_write, input_cache_read} in $ per million "
        "tokens); default: $INSPECT_EVAL_MODEL_COST_CONFIG",
    )


def add_pairs_argument(
    parser: argparse.ArgumentParser, flag: str, dest: str, help: str, form: str = "NAME=VALUE"
) -> None:
    """A repeatable `NAME=VALUE` option (`--as`, `-T`, `--paper-model`), read by
    `named_pairs`."""
    parser.add_argument(flag, dest=dest, action="append", default=[], metavar=form, help=help)


def named_pairs(values: Sequence[str], option: str, form: str = "NAME=VALUE") -> dict[str, str]:
    """The `NAME=VALUE` words of a repeatable option (`--as`, `-T`, `--paper-model`) as a
    mapping; `form` is how the option's help spells a word."""
    pairs = {}
    for value in values:
        name, sep, target = value.partition("=")
        if not sep or not name.strip() or not target.strip():
            raise InputError(f"{option} takes {form}, got {value!r}")
        pairs[name.strip()] = target.strip()
    return pairs


def people_names(given: str, flag: str, prefix: str) -> list[str]:
    """`3` is PREFIX-1 to PREFIX-3; anything else is a comma list of names, each once."""
    if given.strip().isdigit():
        count = int(given)
        if count < 1:
            raise InputError(f"{flag} 0: give at least one")
        return [f"{prefix}-{n}" for n in range(1, count + 1)]
    names = [name.strip() for name in given.split(",") if name.strip()]
    if not names or len(set(names)) != len(names):
        raise InputError(f"{flag} {given}: give a count or a comma list of names, each once")
    return names
