"""What a run cost, as pure arithmetic over the tokens Inspect recorded.

A run's calls are split by who made them (`Party`): the model under evaluation, the judge
(the `grader` role) and any other role (`labeler`, `perturber`). Each party's tokens are
counted by kind (fresh input, cache write, cache read, output, reasoning) and priced at
the first price known: the `--model-cost-config` file, else the cost Inspect recorded in
the log, else Inspect's model database. Beside the bill stands what the same tokens would
cost with caching off (every input token at the plain input price), and a batched party's
bill carries the provider's batch discount, which Inspect's recorded cost does not apply.

Reading the logs is `logs`, and `parties` builds the parties; finding the prices is the command's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.providers.caching import caching_rules_for, write_rate
from hss_inspect.providers.prices import Price, dollars, sum_or_none

if TYPE_CHECKING:
    from inspect_ai.model import ModelUsage

MODEL = "model"  # the party of the model under evaluation; the others are named by role
OTHER = "other"  # calls of a model no single role accounts for
RECORDED = "the cost Inspect recorded"

Ttl = Literal["5m", "1h"]
TTLS: tuple[Ttl, ...] = ("5m", "1h")


@dataclass(frozen=True)
class Tokens:
    """Tokens by kind as Inspect counts them: fresh input leaves out the cache's tokens,
    output includes the reasoning. None: the provider reported none of that kind."""

    fresh_input: int = 0
    cache_write: int | None = None
    cache_read: int | None = None
    output: int = 0
    reasoning: int | None = None

    @property
    def input(self) -> int:
        """Every input token, as billed with caching off."""
        return self.fresh_input + (self.cache_write or 0) + (self.cache_read or 0)

    @property
    def empty(self) -> bool:
        return self.input == 0 and self.output == 0

    def __add__(self, other: Tokens) -> Tokens:
        return self._combined(other, 1)

    def __sub__(self, other: Tokens) -> Tokens:
        return self._combined(other, -1)

    def _combined(self, other: Tokens, sign: int) -> Tokens:
        return Tokens(
            fresh_input=self.fresh_input + sign * other.fresh_input,
            cache_write=_reported(self.cache_write, other.cache_write, sign),
            cache_read=_reported(self.cache_read, other.cache_read, sign),
            output=self.output + sign * other.output,
            reasoning=_reported(self.reasoning, other.reasoning, sign),
        )

    def as_dict(self) -> dict[str, int | None]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


TOKEN_KINDS = tuple(f.name for f in fields(Tokens))


def _reported(a: int | None, b: int | None, sign: int) -> int | None:
    """A sum or difference of two counts of a kind; None when neither was reported. What
    is left at 0 once another party's calls are taken away (a model that judged itself)
    cannot be told from none reported, so it reads as not reported rather than as 0."""
    if a is None and b is None:
        return None
    found = (a or 0) + sign * (b or 0)
    return None if sign < 0 and found == 0 and b else found


Usage = tuple[Tokens, float | None]  # tokens and Inspect's recorded cost


def tokens_of(usage: ModelUsage) -> Usage:
    """Inspect's usage record as tokens by kind, with the cost Inspect recorded."""
    tokens = Tokens(
        fresh_input=usage.input_tokens,
        cache_write=usage.input_tokens_cache_write,
        cache_read=usage.input_tokens_cache_read,
        output=usage.output_tokens,
        reasoning=usage.reasoning_tokens,
    )
    return tokens, usage.total_cost


def less_roles(
    by_model: Mapping[str, ModelUsage],
    by_role: Mapping[str, ModelUsage],
    bound: Mapping[str, str],
) -> list[tuple[str, Usage]]:
    """Each model's usage less that of the roles bound to it (`bound`: role -> model):
    Inspect counts a role's calls under its model too, so a model that also judged has the
    judge's tokens in its own (a log's totals, or one sample's)."""
    found = []
    for model, usage in by_model.items():
        tokens, cost = tokens_of(usage)
        for role, role_model in bound.items():
            if role_model == model and role in by_role:
                role_tokens, role_cost = tokens_of(by_role[role])
                tokens -= role_tokens
                cost = None if cost is None else cost - (role_cost or 0.0)
        found.append((model, (tokens, cost)))
    return found


def summed(tokens: Iterable[Tokens]) -> Tokens:
    total = Tokens()
    for each in tokens:
        total += each
    return total


@dataclass(frozen=True)
class Party:
    """One model's calls in one run: the model under evaluation (`MODEL`) or a role's."""

    log: str
    run: str  # the run's label (model, effort, condition)
    who: str  # MODEL, a role name, or OTHER
    model: str
    tokens: Tokens
    written_1h: int = 0  # of tokens.cache_write, the tokens written at the 1-hour TTL
    recorded_cost: float | None = None  # Inspect's total_cost, when it had prices
    batched: bool = False


# ---- the TTL of the cache writes ------------------------------------------------------


def write_ttl(record: Any, model_ttl: Any) -> Ttl:
    """The TTL a sample's cache writes were made at: the one its cache plan recorded
    (`write_ttl`), else the model's `-M cache_ttl`, else the default 5 minutes. Inspect's
    `auto` starts at 5 minutes; its switch of one sample to 1 hour after a gap of over 5
    minutes is not in the log, so such writes are priced at 5 minutes."""
    planned = record.get("write_ttl") if isinstance(record, Mapping) else None
    for ttl in (planned, model_ttl):
        if ttl in TTLS:
            return cast(Ttl, ttl)
    return "5m"


def written_at_1h(total: int, model_ttl: Ttl, samples: Iterable[tuple[Ttl, int]]) -> int:
    """Of a party's `total` cache-write tokens, those written at 1 hour: every write at
    the model's TTL, except the writes of the samples (TTL, tokens) that made theirs at
    the other TTL."""
    shift = sum(
        written if ttl == "1h" else -written for ttl, written in samples if ttl != model_ttl
    )
    at_model_ttl = total if model_ttl == "1h" else 0
    return min(max(at_model_ttl + shift, 0), total)


# ---- dollars --------------------------------------------------------------------------


def hour_write_rate(model: str) -> float:
    """A 1-hour cache write against the 5-minute write price, for `model`'s provider
    (Anthropic: 2x the input price against 1.25x; `caching:` of model_limits.yaml)."""
    return write_rate(caching_rules_for(model), "1h")


def at_price(price: Price, tokens: Tokens, written_1h: int = 0, hour_rate: float = 1.0) -> float:
    """Dollars as Inspect computes them: each kind at its rate, a 1-hour cache write at
    the 5-minute write rate times `hour_rate` (reasoning is in output)."""
    written_5m = (tokens.cache_write or 0) - written_1h
    return (
        dollars(tokens.fresh_input, price.input)
        + dollars(tokens.output, price.output)
        + dollars(written_5m, price.input_cache_write)
        + dollars(written_1h, price.input_cache_write * hour_rate)
        + dollars(tokens.cache_read or 0, price.input_cache_read)
    )


def caching_off(price: Price, tokens: Tokens) -> float:
    """The same tokens with caching off: every input token at the plain input price."""
    return dollars(tokens.input, price.input) + dollars(tokens.output, price.output)


@dataclass(frozen=True)
class PartyBill:
    """A party's dollars: `listed` at the price found, `dollars` after a batch discount;
    `caching_off` the same tokens without caching, under the same discount. A figure is
    None when it is not known, and `missing` says why."""

    party: Party
    source: str | None
    listed: float | None
    dollars: float | None
    caching_off: float | None
    batch_discount: float | None = None
    missing: str | None = None


def party_bill(
    party: Party,
    file_price: Price | None,
    database_price: Price | None,
    batch_discount: float | None = None,
) -> PartyBill:
    """The party's bill at the first price known; caching off at the rates of the file or
    the database. `batch_discount` multiplies a batched party's prices (None: not known,
    so no figure)."""
    listed, source = listed_dollars(party, file_price, database_price)
    rates = file_price or database_price
    off = None if rates is None else caching_off(rates, party.tokens)
    missing = None if listed is not None else f"no price known for {party.model}"
    if not party.batched:
        return PartyBill(party, source, listed, listed, off, None, missing)
    if batch_discount is None:
        why = f"run in batch mode and the batch discount for {party.model} is not known"
        return PartyBill(party, source, listed, None, None, None, missing or why)
    billed, off = _times(listed, batch_discount), _times(off, batch_discount)
    return PartyBill(party, source, listed, billed, off, batch_discount, missing)


def listed_dollars(
    party: Party, file_price: Price | None, database_price: Price | None
) -> tuple[float | None, str | None]:
    """Dollars at list prices and where they come from: the price file, else the cost
    Inspect recorded (which has no batch discount), else Inspect's model database."""
    rate = hour_write_rate(party.model)
    if file_price is not None:
        return at_price(file_price, party.tokens, party.written_1h, rate), file_price.source
    if party.recorded_cost is not None:
        return party.recorded_cost, RECORDED
    if database_price is not None:
        return at_price(database_price, party.tokens, party.written_1h, rate), database_price.source
    return None, None


def _times(amount: float | None, factor: float) -> float | None:
    return None if amount is None else amount * factor


# ---- totals ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Total:
    """Several parties' bills together; a sum is None when one of its parts is (a partial
    sum would read as the whole)."""

    tokens: Tokens
    dollars: float | None
    caching_off: float | None

    @property
    def saved(self) -> float | None:
        if self.dollars is None or self.caching_off is None:
            return None
        return round(self.caching_off - self.dollars, 9)  # no float dust where they agree

    @property
    def ratio(self) -> float | None:
        """The bill as a share of caching off (below 1: caching saved)."""
        if self.dollars is None or not self.caching_off:
            return None
        return self.dollars / self.caching_off

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens.as_dict(),
            "dollars": self.dollars,
            "caching_off": self.caching_off,
            "saved": self.saved,
            "ratio": self.ratio,
        }


def total(bills: Sequence[PartyBill]) -> Total:
    return Total(
        summed(b.party.tokens for b in bills),
        sum_or_none(b.dollars for b in bills),
        sum_or_none(b.caching_off for b in bills),
    )


def bill_summary(bills: Sequence[PartyBill]) -> dict[str, Any]:
    """Every party's bill, each run's total, each model's over all runs, and the whole."""
    runs: dict[str, list[PartyBill]] = {}
    models: dict[str, list[PartyBill]] = {}
    for bill in bills:
        runs.setdefault(bill.party.log, []).append(bill)
        models.setdefault(bill.party.model, []).append(bill)
    names = run_names([(log, found[0].party.run) for log, found in runs.items()])
    return {
        "parties": [{"name": names[b.party.log], **_party_row(b)} for b in bills],
        "runs": [{"name": names[log], **_run_row(log, found)} for log, found in runs.items()],
        "models": [
            {"model": model, "who": sorted({b.party.who for b in found}), **total(found).as_dict()}
            for model, found in models.items()
        ],
        "total": total(bills).as_dict() if bills else None,  # no usage is not $0
        "missing": list(dict.fromkeys(m for b in bills for m in missing_figures(b))),
    }


def missing_figures(bill: PartyBill) -> list[str]:
    """Why a figure of the bill is not known: no price, an unknown batch discount, or (the
    bill being the cost Inspect recorded) no rates to price caching off at."""
    if bill.missing:
        return [bill.missing]
    if bill.caching_off is None:
        model = bill.party.model
        return [f"caching off for {model} needs its prices (--model-cost-config)"]
    return []


def run_names(runs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Each run's name by its log: its label, numbered (#1, #2, ...) where runs share one."""
    labels = [label for _, label in runs]
    names, seen = {}, dict.fromkeys(labels, 0)
    for log, label in runs:
        if labels.count(label) > 1:
            seen[label] += 1
            label = f"{label} #{seen[label]}"
        names[log] = label
    return names


def shared_names(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """`name: log file` for each run numbered apart from others of its label."""
    return [f"{r['name']}: {Path(r['log']).name}" for r in runs if r["name"] != r["run"]]


def _run_row(log: str, bills: Sequence[PartyBill]) -> dict[str, Any]:
    """A run's total, and apart those of the model under evaluation, the judge and the
    other roles (None: no such calls)."""
    parts = {
        "model": [b for b in bills if b.party.who == MODEL],
        "judge": [b for b in bills if b.party.who == GRADER_ROLE],
        "others": [b for b in bills if b.party.who not in (MODEL, GRADER_ROLE)],
    }
    return {
        "log": log,
        "run": bills[0].party.run,
        **total(bills).as_dict(),
        **{name: total(found).as_dict() if found else None for name, found in parts.items()},
    }


def _party_row(bill: PartyBill) -> dict[str, Any]:
    party = bill.party
    return {
        "log": party.log,
        "run": party.run,
        "who": party.who,
        "model": party.model,
        **total([bill]).as_dict(),
        "written_1h": party.written_1h,
        "price_source": bill.source,
        "listed": bill.listed,
        "recorded_cost": party.recorded_cost,
        "batched": party.batched,
        "batch_discount": bill.batch_discount,
        "missing": bill.missing,
    }
