"""The cache plan: whether one request should write its shared prefix to the provider's
prompt cache, read an entry an earlier request left, or do neither, and at which TTL.

A cache write costs more than plain input (Anthropic: 1.25x for 5 minutes, 2x for an hour)
and pays only when a later request reads the entry (0.1x) while it lives. An HSS request
is read again by the next attempt of the same sample (epoch-major scheduling puts it about
one epoch's wall time later) and, in the agentic condition, by the next step of the
conversation (seconds later). The plan writes only where such a read is expected within a
TTL the provider offers, at the TTL whose expected saving is largest; it never decides what
the model is sent. The rules are `caching:` of task_configs/model_limits.yaml; everything
here is arithmetic over them and over the run's pace.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any, Literal

from hss_inspect.core.config import load_yaml
from hss_inspect.providers.limits import as_patterns, matches

Mechanism = Literal["breakpoints", "explicit", "retention", "implicit", "none"]
Action = Literal["write", "read", "none"]
# mechanisms under which the plan decides something; the others leave caching as it is
PLANNED: tuple[Mechanism, ...] = ("breakpoints", "explicit", "retention")


@dataclass(frozen=True)
class Ttl:
    """A cache life the provider offers: seconds from the last use, and the price of a
    written token relative to plain input (1.0 for a provider that bills no premium)."""

    name: str
    seconds: float
    write: float


@dataclass(frozen=True)
class CacheRules:
    """One provider's caching rules, with the model's own minimum and read price applied."""

    name: str
    mechanism: Mechanism
    ttls: tuple[Ttl, ...] = ()
    read: float = 1.0
    min_tokens: int = 0
    batch_ttl: str | None = None
    marks_need_direct: bool = False
    retention_24h: tuple[str, ...] = ()
    docs: tuple[str, ...] = ()

    def ttl(self, name: str) -> Ttl | None:
        return next((t for t in self.ttls if t.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "mechanism": self.mechanism,
            "ttls": {t.name: {"seconds": t.seconds, "write": t.write} for t in self.ttls},
            "read": self.read,
            "min_tokens": self.min_tokens,
        }


@cache
def _caching_file() -> tuple[float, tuple[dict[str, Any], ...]]:
    loaded = load_yaml("task_configs", "model_limits.yaml")
    return float(loaded["cache_safety"]), tuple(loaded["caching"])


def cache_safety() -> float:
    """The share of an entry's life a predicted gap may use (a miss costs a write)."""
    return _caching_file()[0]


def caching_rules_for(model_name: str) -> CacheRules:
    """The caching rules of the first entry matching the model (the last entry matches all)."""
    for entry in _caching_file()[1]:
        if matches(model_name, as_patterns(entry["match"])):
            return _rules(entry, model_name)
    raise ValueError(f"task_configs/model_limits.yaml: no caching entry matches {model_name}")


def _rules(entry: dict[str, Any], model_name: str) -> CacheRules:
    own: dict[str, Any] = next(
        (m for m in entry.get("models") or () if matches(model_name, as_patterns(m["match"]))), {}
    )
    ttls = tuple(
        Ttl(str(name), float(ttl["seconds"]), float(ttl["write"]))
        for name, ttl in (entry.get("ttls") or {}).items()
    )
    return CacheRules(
        name=str(entry["name"]),
        mechanism=entry["mechanism"],
        ttls=ttls,
        read=float(own.get("read", entry.get("read", 1.0))),
        min_tokens=int(own.get("min_tokens", entry.get("min_tokens", 0))),
        batch_ttl=entry.get("batch_ttl"),
        marks_need_direct=bool(entry.get("marks_need_direct", False)),
        retention_24h=as_patterns(entry.get("retention_24h")),
        docs=as_patterns(entry.get("docs")),
    )


def write_rate(rules: CacheRules, ttl: str) -> float:
    """The price of a write at `ttl` against a price file's `input_cache_write`, which holds
    the rate of the provider's first (default) TTL, as Inspect's ModelCost keeps it:
    Anthropic's 1-hour write is 2.0 / 1.25 of the 5-minute rate, as Inspect bills it."""
    found = rules.ttl(ttl)
    if found is None or not rules.ttls:
        return 1.0
    return found.write / rules.ttls[0].write


def offered_ttls(rules: CacheRules, model_name: str, pinned: str | None = None) -> list[Ttl]:
    """The TTLs the plan may choose for this model: a TTL the user pinned (Anthropic's
    `-M cache_ttl`) is the only one; 24-hour retention only on the models that offer it."""
    ttls = list(rules.ttls)
    if pinned is not None:
        ttls = [t for t in ttls if t.name == pinned]
    if rules.mechanism == "retention" and not matches(model_name, rules.retention_24h):
        ttls = [t for t in ttls if t.name != "24h"]
    return ttls


# ---- the run's pace -------------------------------------------------------------------


@dataclass(frozen=True)
class Gap:
    """The expected seconds from this request to the next request that could read its
    prefix, and where the figure comes from."""

    seconds: float | None
    source: str


UNKNOWN_GAP = Gap(None, "not known yet: no attempt of this run has finished")


@dataclass(frozen=True)
class Pace:
    """What the run has shown so far: sample-epochs per epoch, how many are running, and
    how long the finished ones took (seconds)."""

    samples: int | None
    running: int
    durations: tuple[float, ...] = ()

    def typical_duration(self) -> float | None:
        """The median sample-epoch's seconds (the first ones also pay the run's start-up)."""
        return statistics.median(self.durations) if self.durations else None

    def epoch_seconds(self) -> float | None:
        """One epoch's wall time at the pace so far: each sample-epoch starts when another
        finishes, so the same sample's next attempt starts `samples` finishes later, and
        `running` sample-epochs finish per typical duration (Little's law)."""
        typical = self.typical_duration()
        if not self.samples or typical is None or self.running < 1:
            return None
        return self.samples * typical / self.running


@dataclass(frozen=True)
class Previous:
    """The same sample's previous attempt, as this process saw it: when its request went,
    how long it took (None while it is still out), and the TTL it marked (None: no mark)."""

    sent: float
    duration: float | None
    ttl: str | None


def next_attempt_gap(pace: Pace, previous: Previous | None, later_started: bool, now: float) -> Gap:
    """When the same sample's next attempt will read this prefix. The provider may process
    a request as late as its answer comes back (a batch), so a request's duration is added."""
    if later_started:
        return Gap(previous.duration if previous and previous.duration else 0.0, "running now")
    if previous is not None:
        since = now - previous.sent
        return Gap(since + (previous.duration or 0.0), "the gap since this sample's last attempt")
    epoch, typical = pace.epoch_seconds(), pace.typical_duration()
    if epoch is None or typical is None:
        return UNKNOWN_GAP
    return Gap(epoch + typical, "one epoch at the pace so far")


def live_entry(
    previous: Previous | None, rules: CacheRules, now: float, safety: float
) -> str | None:
    """The TTL of the entry the previous attempt marked, while it should still be alive (or
    while that attempt is still out, so that its entry is about to exist)."""
    if previous is None or previous.ttl is None:
        return None
    ttl = rules.ttl(previous.ttl)
    if previous.duration is None or ttl is None:
        return previous.ttl
    return previous.ttl if now - previous.sent <= ttl.seconds * safety else None


# ---- the decision -----------------------------------------------------------------------


@dataclass(frozen=True)
class Reuse:
    """Who will read this request's shared prefix: the sample's later attempts (None when
    the run's epochs are not known), when the next one comes, an entry that should still be
    alive, and (agentic) another step of the same conversation seconds later."""

    later_attempts: int | None
    gap: Gap
    live_ttl: str | None = None
    next_step: bool = False


# the next step of a conversation follows within this many seconds (tool calls are local)
NEXT_STEP_SECONDS = 60.0


def reuse_for(
    rules: CacheRules,
    attempts: tuple[int, int] | None,
    previous: Previous | None,
    later_started: bool,
    pace: Pace,
    now: float,
    next_step: bool = False,
) -> Reuse:
    """Who reads this request's prefix: for attempt `e` of `n` (`attempts`, None when the
    run's epochs are not known), the `n - e` later attempts and when the next comes."""
    if attempts is None:
        return Reuse(None, UNKNOWN_GAP, None, next_step)
    epoch, epochs = attempts
    return Reuse(
        later_attempts=max(0, epochs - epoch),
        gap=next_attempt_gap(pace, previous, later_started, now),
        live_ttl=live_entry(previous, rules, now, cache_safety()),
        next_step=next_step,
    )


@dataclass(frozen=True)
class CacheDecision:
    action: Action
    ttl: str | None
    reason: str
    expected_reads: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Option:
    ttl: Ttl
    reads: int
    saving: float = field(compare=False)


def decide(
    rules: CacheRules,
    ttls: list[Ttl],
    prefix_tokens: int | None,
    reuse: Reuse,
    safety: float,
) -> CacheDecision:
    """Write, read or neither for one request's shared prefix, in units of that prefix's
    plain input price: a write at TTL t costs `t.write - 1` more, and each read while it
    lives saves `1 - read`."""
    if rules.mechanism not in PLANNED:
        return CacheDecision("none", None, f"{rules.name}: nothing to plan ({rules.mechanism})")
    if prefix_tokens is not None and prefix_tokens < rules.min_tokens:
        return CacheDecision(
            "none", None, f"{prefix_tokens:,} tokens: under the {rules.min_tokens:,} cached"
        )
    if reuse.live_ttl is not None and any(t.name == reuse.live_ttl for t in ttls):
        return CacheDecision(
            "read", reuse.live_ttl, "the previous attempt's entry should still be alive", 1
        )
    options = [_value(t, reuse, rules.read, safety) for t in ttls]
    worth = [o for o in options if o.saving > 0]
    if not worth:
        return CacheDecision("none", None, _why_not(reuse))
    best = max(worth, key=lambda o: (o.saving, -o.ttl.seconds))
    return CacheDecision("write", best.ttl.name, _why(best, reuse), best.reads)


def _value(ttl: Ttl, reuse: Reuse, read: float, safety: float) -> _Option:
    life = ttl.seconds * safety
    reads = 0
    gap = reuse.gap.seconds
    if reuse.later_attempts and gap is not None and gap <= life:
        reads += reuse.later_attempts
    if reuse.next_step and life >= NEXT_STEP_SECONDS:
        reads += 1
    return _Option(ttl, reads, reads * (1 - read) - (ttl.write - 1))


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _why(best: _Option, reuse: Reuse) -> str:
    readers = []
    if reuse.later_attempts and best.reads > (1 if reuse.next_step else 0):
        gap = reuse.gap.seconds or 0.0
        readers.append(
            f"{reuse.later_attempts} later attempt(s), the next in about {_minutes(gap)} "
            f"({reuse.gap.source})"
        )
    if reuse.next_step:
        readers.append("the conversation's next step")
    return f"read by {' and '.join(readers)}: a {best.ttl.name} entry saves most"


def _why_not(reuse: Reuse) -> str:
    if reuse.later_attempts == 0:
        return "the last attempt: no later request reads it"
    if reuse.later_attempts is None:
        return "the run's epochs are not known: no later read can be counted on"
    if reuse.gap.seconds is None:
        return f"the next attempt's time is {reuse.gap.source}"
    return (
        f"the next attempt comes in about {_minutes(reuse.gap.seconds)} ({reuse.gap.source}): "
        "no TTL offered outlives it at a saving"
    )


# ---- a whole task's attempts, before a run (hss-inspect estimate) ------------------------


def planned_attempts(
    rules: CacheRules, ttls: list[Ttl], prefix: int | None, epochs: int, gap: Gap, paced: bool
) -> list[CacheDecision]:
    """The plan's decision for each attempt of one task whose attempts come `gap` apart, as
    the run would take them; `paced` False: its first attempt goes before any sample-epoch
    of the run has finished (the first wave), so its pace is not known yet."""
    safety = cache_safety()
    decisions: list[CacheDecision] = []
    previous: Previous | None = None
    for epoch in range(1, epochs + 1):
        since = gap.seconds or 0.0
        live = live_entry(previous, rules, since, safety) if previous else None
        known = gap if paced or epoch > 1 else UNKNOWN_GAP
        decision = decide(rules, ttls, prefix, Reuse(epochs - epoch, known, live), safety)
        decisions.append(decision)
        previous = Previous(0.0, 0.0, decision.ttl if decision.action != "none" else None)
    return decisions


def default_attempts(
    rules: CacheRules, ttl: Ttl | None, prefix: int | None, epochs: int, gap: Gap
) -> list[Action]:
    """What Inspect's own caching does with one task's attempts `gap` apart: every request
    written at `ttl` (a provider that writes every prompt itself: at its own), read while
    the previous attempt's entry lives; nothing under the provider's minimum is cached.
    None `ttl`: nothing is cached."""
    short = prefix is not None and prefix < rules.min_tokens
    if ttl is None or gap.seconds is None or short:
        return ["none"] * epochs
    later: Action = "read" if gap.seconds <= ttl.seconds else "write"
    return ["write", *[later] * (epochs - 1)]


def inspect_default_ttl(rules: CacheRules, pinned: str | None = None) -> Ttl | None:
    """The TTL Inspect's default caching writes at: Anthropic's 5 minutes (or a pinned
    `-M cache_ttl`), the life OpenAI gives every prompt; None where no cache is billed or
    its life is not documented (Gemini's implicit caching)."""
    if rules.mechanism in ("implicit", "none") or not rules.ttls:
        return None
    if pinned is not None and rules.ttl(pinned) is not None:
        return rules.ttl(pinned)
    return rules.ttls[0]
