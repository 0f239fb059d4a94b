"""A model's price as Inspect would find it: the `--model-cost-config` file's entry of that
name (Inspect puts those over its database), else Inspect's model database. The adapter
beside the pure price rules (`providers.prices`).

What the database says of a name is remembered in the cache folder (`models/`), per Inspect
version: a name the database lacks (a model served at an OpenAI-compatible endpoint, a
fine-tune) makes Inspect load every installed package's hooks and build the provider to
ask it, over a second a report, which the second report on the same models skips.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hss_inspect.core.errors import SetupError
from hss_inspect.core.user_files import read_text
from hss_inspect.providers.context import info_name
from hss_inspect.providers.model_names import recalled, remember
from hss_inspect.providers.prices import Price, priced_by_name, read_cost_config

DATABASE = "Inspect's model database"
PRICES_MEMO = ""  # the memo of each name's entry: inspect-<version>.json


@dataclass(frozen=True)
class Pricing:
    """A model's price as Inspect would find it, and whether its database knows the model
    (`--model-cost-config` refuses an entry for a model it does not know)."""

    model: str
    price: Price | None
    in_database: bool

    def warning(self) -> str | None:
        if self.price is None or self.in_database or self.price.source == DATABASE:
            return None
        return (
            f"{self.model} is not in Inspect's model database, so `inspect eval "
            f"--model-cost-config` stops with \"Model '{self.model}' not found.\"; set "
            f'its price in Python instead: set_model_info("{self.model}", '
            "ModelInfo(cost=ModelCost(...)))"
        )

    def missing(self) -> str:
        listed = "lists it without a price" if self.in_database else "does not list it"
        return f"no price known for {self.model} (Inspect's model database {listed})"


def load_cost_config(path: str | None) -> dict[str, Price]:
    """The prices of a `--model-cost-config` file (none given: no prices)."""
    if not path:
        return {}
    file = Path(path)
    if not file.is_file():
        raise SetupError(f"--model-cost-config {path}: no such file")
    return read_cost_config(read_text(file, f"--model-cost-config {path}"), path)


def inspect_pricing(model: str, prices: Mapping[str, Price]) -> Pricing:
    """The price Inspect would charge `model`: the file's entry of that name, else its
    model database's (a name that is a slip of a known one is refused before it is priced:
    `model_names`)."""
    listed, cost = database_entry(info_name(model))
    price = priced_by_name(prices, model)
    if price is None and cost is not None:
        price = Price(**cost, source=DATABASE)
    return Pricing(model, price, listed)


def database_entry(name: str) -> tuple[bool, dict[str, float] | None]:
    """Whether Inspect's model database lists `name`, and the price it gives, as remembered
    for this Inspect version, else asked of Inspect and remembered."""
    remembered = recalled(PRICES_MEMO)
    if not isinstance(remembered, dict):
        remembered = {}
    if name not in remembered:
        remembered[name] = _ask_inspect(name)
        remember(PRICES_MEMO, remembered)
    entry = remembered[name]
    return bool(entry["listed"]), entry["cost"]


def _ask_inspect(name: str) -> dict[str, Any]:
    from inspect_ai.model import get_model_info

    # A name the database lacks makes Inspect create the provider to ask it: looked up by
    # `info_name`, a provider that could start a server or load weights is never created,
    # and a client's start-up notice goes to stderr, out of the figures (and of --json).
    with contextlib.redirect_stdout(sys.stderr):
        info = get_model_info(name)
    cost = info.cost.model_dump() if info is not None and info.cost is not None else None
    return {"listed": info is not None, "cost": cost}
