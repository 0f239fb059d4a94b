"""Who made a run's calls, and what each used: the model under evaluation and each role,
with the tokens Inspect recorded for them (`bill.Party`, the bill's input)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from inspect_ai.log import EvalLog
from inspect_ai.model import ModelConfig, ModelUsage

from hss_inspect.core.settings import CACHE_PLAN_RECORD
from hss_inspect.report.bill import (
    MODEL,
    OTHER,
    Party,
    Ttl,
    Usage,
    less_roles,
    tokens_of,
    write_ttl,
    written_at_1h,
)
from hss_inspect.report.logs import ScoredSample, single_model_roles


def parties_of(
    log: EvalLog, path: str, run: str, samples: Sequence[ScoredSample] = ()
) -> tuple[Party, ...]:
    """The model under evaluation and each role, with the tokens Inspect recorded for
    them (the log's usage by model and by role); the model's calls are its usage less that
    of the roles bound to the same model. A role bound to several models cannot be split
    from them: its calls stay with each model's, as OTHER where that is not the model under
    evaluation."""
    if log.stats is None:
        return ()
    by_role = log.stats.role_usage
    bound = single_model_roles(log)
    models = {role: config.model for role, config in bound.items()}
    roles = [
        _role_party(path, run, role, bound[role], usage)
        for role, usage in by_role.items()
        if role in bound
    ]
    rest = less_roles(log.stats.model_usage, by_role, models)
    own = [
        _model_party(log, path, run, usage, models, samples)
        for model, usage in rest
        if model == log.eval.model and not usage[0].empty  # the oracle calls no model
    ]
    others = [
        Party(path, run, OTHER, model, tokens, 0, cost)
        for model, (tokens, cost) in rest
        if model != log.eval.model and not tokens.empty
    ]
    return (*own, *roles, *others)


def _model_party(
    log: EvalLog,
    path: str,
    run: str,
    usage: Usage,
    models: dict[str, str],
    samples: Sequence[ScoredSample],
) -> Party:
    """The model under evaluation's calls; its cache writes at the TTL of each sample's
    record, else of its `-M cache_ttl`."""
    model, (tokens, cost) = log.eval.model, usage
    ttl = write_ttl(None, (log.eval.model_args or {}).get("cache_ttl"))
    writes = _sample_writes(model, ttl, models, samples)
    written_1h = written_at_1h(tokens.cache_write or 0, ttl, writes)
    return Party(path, run, MODEL, model, tokens, written_1h, cost, _batched(log))


def _role_party(path: str, run: str, role: str, config: ModelConfig, usage: ModelUsage) -> Party:
    """A role's calls; its cache writes at the TTL of its model's `cache_ttl`."""
    tokens, cost = tokens_of(usage)
    ttl = write_ttl(None, (config.args or {}).get("cache_ttl"))
    written_1h = written_at_1h(tokens.cache_write or 0, ttl, ())
    batched = bool(config.config.batch)  # a role's calls batch by its own options only
    return Party(path, run, role, config.model, tokens, written_1h, cost, batched)


def _sample_writes(
    model: str, model_ttl: Ttl, models: dict[str, str], samples: Sequence[ScoredSample]
) -> Iterator[tuple[Ttl, int]]:
    """The TTL and the model's cache writes (less its roles') of each sample that recorded
    its cache plan (strategy, write_ttl: conditions/cache_plan.py)."""
    roles = [role for role, bound in models.items() if bound == model]
    for sample in samples:
        record = (sample.metadata or {}).get(CACHE_PLAN_RECORD)
        usage = (sample.model_usage or {}).get(model)
        if record is None or usage is None:
            continue
        by_role = sample.role_usage or {}
        judged = sum(by_role[r].input_tokens_cache_write or 0 for r in roles if r in by_role)
        yield write_ttl(record, model_ttl), (usage.input_tokens_cache_write or 0) - judged


def _batched(log: EvalLog) -> bool:
    """Whether the model under evaluation ran in batch mode: the eval's generate options
    (the task's config with the command's) over the model's own, as Inspect merges them."""
    planned = log.plan.config.batch if log.plan else None
    return bool(log.eval.model_generate_config.batch if planned is None else planned)
