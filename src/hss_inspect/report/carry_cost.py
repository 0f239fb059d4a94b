"""What carrying a log to a later release will cost, before it runs (`hss-inspect release
carry --estimate`): its judge conversations and candidate attempts, priced at what the log's
own attempts used, beside the whole run again.

The log is read through `logs` (its header and sample summaries): the tokens of a judge
conversation are the judge's tokens per graded attempt, and those of a candidate attempt
the model's own tokens per attempt, each the mean over the log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalSampleSummary

from hss_inspect.core.roles import GRADER_ROLE
from hss_inspect.providers.price_lookup import inspect_pricing, load_cost_config
from hss_inspect.providers.prices import Price, dollars_text
from hss_inspect.report.bill import Tokens, at_price, summed, tokens_of
from hss_inspect.report.logs import read_header, read_summaries, single_model_roles
from hss_inspect.report.pilot import own_tokens


@dataclass(frozen=True)
class CarryCost:
    """The carry's calls and their dollars (None: no price known), beside a run again."""

    judge_conversations: int
    candidate_attempts: int
    judge_dollars: float | None
    candidate_dollars: float | None
    rerun_attempts: int  # every attempt of the log: what running it again would send
    rerun_dollars: float | None

    @property
    def dollars(self) -> float | None:
        if self.judge_dollars is None or self.candidate_dollars is None:
            return None
        return self.judge_dollars + self.candidate_dollars


def carry_cost(
    log: str,
    judge_conversations: int,
    candidate_attempts: int,
    new_attempts: int,
    cost_config: str | None,
) -> CarryCost:
    """The carry's calls priced at the log's own tokens per call, beside running the new
    release again (`new_attempts` candidate attempts, each graded)."""
    header = read_header(log)
    model = str(header.eval.model)
    roles = {role: config.model for role, config in single_model_roles(header).items()}
    samples = [s for s in read_summaries(log) if s.error is None]
    judge_model = roles.get(GRADER_ROLE, "")
    judge = _mean_tokens([_role_tokens(s) for s in samples if GRADER_ROLE in (s.role_usage or {})])
    candidate = _mean_tokens(
        [own_tokens(s, model, roles) for s in samples if model in s.model_usage]
    )
    prices = load_cost_config(cost_config)
    judge_each = _dollars(judge, judge_model, prices)
    candidate_each = _dollars(candidate, model, prices)
    return CarryCost(
        judge_conversations=judge_conversations,
        candidate_attempts=candidate_attempts,
        judge_dollars=_times(judge_each, judge_conversations),
        candidate_dollars=_times(candidate_each, candidate_attempts),
        rerun_attempts=new_attempts,
        rerun_dollars=None
        if judge_each is None or candidate_each is None
        else new_attempts * (judge_each + candidate_each),
    )


def _role_tokens(sample: EvalSampleSummary) -> Tokens:
    return tokens_of((sample.role_usage or {})[GRADER_ROLE])[0]


def _mean_tokens(found: Sequence[Tokens]) -> Tokens | None:
    if not found:
        return None
    whole, n = summed(found), len(found)
    return Tokens(
        fresh_input=round(whole.fresh_input / n),
        cache_write=_mean(whole.cache_write, n),
        cache_read=_mean(whole.cache_read, n),
        output=round(whole.output / n),
        reasoning=_mean(whole.reasoning, n),
    )


def _mean(total: int | None, n: int) -> int | None:
    return None if total is None else round(total / n)


def _dollars(tokens: Tokens | None, model: str, prices: Mapping[str, Price]) -> float | None:
    """Tokens at the model's price: the price file's, else Inspect's model database's."""
    if tokens is None or not model:
        return None
    price = inspect_pricing(model, prices).price
    return None if price is None else at_price(price, tokens)


def _times(each: float | None, count: int) -> float | None:
    if count == 0:
        return 0.0
    return None if each is None else each * count


def money(amount: float | None) -> str:
    return "no price known (--model-cost-config)" if amount is None else dollars_text(amount)


def estimate_text(plan: Mapping[str, Any], cost: CarryCost) -> str:
    """The carry's plan (`recipes.carry.CarryPlan.as_dict`) and what it will cost, as lines."""
    kept = len(plan["kept"]) + len(plan["relabelled"])
    return (
        "\n".join(
            [
                f"Carrying {plan['log']} to {plan['to']} ({plan['epochs']} attempt(s) a task):",
                f"- kept as they are: {kept} task(s), {len(plan['relabelled'])} of them relabelled",
                "- graded again (reference or rubric changed): "
                f"{len(plan['graded_again'])} task(s)",
                f"- answered again (media or prompt changed, or added): "
                f"{len(plan['answered_again'])} task(s)" + _unhashed(plan["media_unknown"]),
                f"- dropped (not in the new release): {len(plan['dropped'])} task(s)",
                f"Sends {cost.judge_conversations} judge conversation(s) and "
                f"{cost.candidate_attempts} candidate attempt(s): {money(cost.dollars)} at the "
                "tokens the log's own attempts used.",
                f"Running it again would send {cost.rerun_attempts} candidate attempts and as many "
                f"judge conversations: {money(cost.rerun_dollars)}.",
            ]
        )
        + "\n"
    )


def _unhashed(tasks: Sequence[str]) -> str:
    """Tasks answered again because their media went unhashed on a side (offline)."""
    if not tasks:
        return ""
    return f", {len(tasks)} of them because their media could not be hashed (offline)"
