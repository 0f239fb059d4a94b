"""Prices in dollars per million tokens and what a run's tokens cost at them, as pure
arithmetic. A price has the four fields of Inspect's `ModelCost`, the format of the file
given to `inspect eval --model-cost-config`; looking a model up in Inspect's model
database is `hss-inspect estimate`'s adapter, not this module's."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hss_inspect.core.errors import InputError
from hss_inspect.core.user_files import parse_yaml_or_json

COST_FIELDS = ("input", "output", "input_cache_write", "input_cache_read")
COST_FORMAT = "Inspect's format, model: {" + ", ".join(COST_FIELDS) + "} in $ per million tokens"
# A rule of thumb for English text with the tokenizers of the paper's models, used only to
# price text (no tokenizer is at hand offline). providers/fit.py counts a byte a token,
# a bound for fitting a window; a price needs the typical count instead.
TEXT_BYTES_PER_TOKEN = 4
Rate = Literal["input", "output"]


@dataclass(frozen=True)
class Price:
    """$ per million tokens (Inspect's `ModelCost` fields) and where it was found."""

    input: float
    output: float
    input_cache_write: float
    input_cache_read: float
    source: str

    def per_million(self, rate: Rate) -> float:
        return self.input if rate == "input" else self.output


def read_cost_config(text: str, source: str) -> dict[str, Price]:
    """The prices of a `--model-cost-config` file by model name, read as Inspect reads it:
    JSON when the text starts with `{`, else YAML; each model with all four fields."""
    remedy = f"fix it: {COST_FORMAT}"
    data = parse_yaml_or_json(text, f"--model-cost-config {source}", remedy)
    if not isinstance(data, dict):
        raise InputError(f"{source}: not a mapping of model names to prices")
    return {str(model): _price(fields, f"{source}: {model}") for model, fields in data.items()}


def _price(fields: Any, where: str) -> Price:
    if not isinstance(fields, dict):
        raise InputError(f"{where}: give {', '.join(COST_FIELDS)} ($ per million tokens)")
    missing = [f for f in COST_FIELDS if f not in fields]
    unknown = [f for f in fields if f not in COST_FIELDS]
    if missing or unknown:
        wrong = "missing " + ", ".join(missing) if missing else "unknown " + ", ".join(unknown)
        raise InputError(f"{where}: {wrong} (Inspect's ModelCost has {', '.join(COST_FIELDS)})")
    try:
        values = {f: float(fields[f]) for f in COST_FIELDS}
    except (TypeError, ValueError):
        raise InputError(f"{where}: each of {', '.join(COST_FIELDS)} is a number") from None
    return Price(**values, source=where.split(": ")[0])


def dollars(tokens: int, per_million: float) -> float:
    return tokens * per_million / 1_000_000


def text_tokens(utf8_bytes: int) -> int:
    return math.ceil(utf8_bytes / TEXT_BYTES_PER_TOKEN)


@dataclass(frozen=True)
class Charge:
    """Tokens of one kind for one model, billed at one of its rates. `tokens` is None when
    they cannot be counted, `price` None when no price is known: then no dollars."""

    what: str
    model: str
    rate: Rate
    tokens: int | None
    price: Price | None

    @property
    def dollars(self) -> float | None:
        if self.tokens is None or self.price is None:
            return None
        return dollars(self.tokens, self.price.per_million(self.rate))

    def as_dict(self) -> dict[str, Any]:
        price = None if self.price is None else self.price.per_million(self.rate)
        return {
            "what": self.what,
            "model": self.model,
            "rate": self.rate,
            "tokens": self.tokens,
            "price_per_million": price,
            "price_source": None if self.price is None else self.price.source,
            "dollars": self.dollars,
        }


def total_dollars(charges: Sequence[Charge]) -> float | None:
    return sum_or_none(c.dollars for c in charges)


def sum_or_none(amounts: Iterable[float | None]) -> float | None:
    """The sum, or None when any amount is not known (a partial sum would read as the
    whole)."""
    found = list(amounts)
    return None if any(a is None for a in found) else sum(a or 0.0 for a in found)


def dollars_text(amount: float) -> str:
    """Cents from a dollar up; below it two significant figures, so that a small cost
    never prints as $0.00."""
    if amount == 0 or amount >= 1:
        return f"${amount:,.2f}"
    decimals = 1 - math.floor(math.log10(amount))
    return f"${amount:.{decimals}f}"


def price_text(per_million: float) -> str:
    return f"${per_million:,.2f}/M"


def priced_by_name(prices: Mapping[str, Price], model: str) -> Price | None:
    """A file's price applies to the model of exactly that name: Inspect keys each entry
    by the name as written and finds it by the model's own name."""
    return prices.get(model)


# ---- input split by how it is billed, and each caching strategy's bill -----------------


@dataclass(frozen=True)
class InputSplit:
    """Input tokens by how they are billed: plain, written to the cache (by TTL), read."""

    fresh: int = 0
    written: tuple[tuple[str, int], ...] = ()
    read: int = 0

    def __add__(self, other: InputSplit) -> InputSplit:
        written = dict(self.written)
        for ttl, tokens in other.written:
            written[ttl] = written.get(ttl, 0) + tokens
        return InputSplit(
            self.fresh + other.fresh, tuple(sorted(written.items())), self.read + other.read
        )

    @property
    def written_tokens(self) -> int:
        return sum(tokens for _, tokens in self.written)

    @property
    def total(self) -> int:
        return self.fresh + self.written_tokens + self.read


def attempts_split(
    prefix: int, attempts: Sequence[tuple[str, str | None]], free: Sequence[str] = ()
) -> InputSplit:
    """How one task's attempts bill its `prefix` tokens: each (action, TTL) writes, reads
    or neither; a write at a TTL in `free` costs no more than plain input."""
    split = InputSplit()
    for action, ttl in attempts:
        if action == "read":
            split = split + InputSplit(read=prefix)
        elif action == "write" and ttl is not None and ttl not in free:
            split = split + InputSplit(written=((ttl, prefix),))
        else:
            split = split + InputSplit(fresh=prefix)
    return split


def input_dollars(split: InputSplit, price: Price, write_rate: Mapping[str, float]) -> float:
    """The input at `price`; a write at TTL t costs `write_rate[t]` times the price file's
    `input_cache_write` (the provider's default TTL's rate, as Inspect's ModelCost keeps it:
    Anthropic's 1-hour writes are 2.0 / 1.25 of it)."""
    written = sum(
        dollars(tokens, price.input_cache_write * write_rate.get(ttl, 1.0))
        for ttl, tokens in split.written
    )
    return dollars(split.fresh, price.input) + dollars(split.read, price.input_cache_read) + written
