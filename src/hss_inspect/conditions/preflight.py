"""The checks made before any model is called, in one place: the task makes them when
Inspect builds it, and `hss-inspect estimate` makes the same before it sizes a run, so a
setting one refuses the other refuses too, in the same words."""

from __future__ import annotations

import logging

from hss_inspect.core.errors import SetupError
from hss_inspect.core.roles import ROLES
from hss_inspect.core.settings import MediaSettings
from hss_inspect.media.cache_folder import CacheFolderError, check_cache_folder
from hss_inspect.providers.batching import batch_refusal
from hss_inspect.providers.limits import (
    AppliedLimits,
    applied_limits,
    clamp_warnings,
    native_video_refusal,
    user_token_rules,
)
from hss_inspect.providers.model_names import NEWER_INSPECT, check_model_name
from hss_inspect.providers.tokens import check_rule

logger = logging.getLogger(__name__)

# The conditions that send media; the blind control and the oracle send none.
MEDIA_CONDITIONS = ("standard", "agentic")


def check_before_run(
    media: MediaSettings, model: str | None, condition: str, batching: bool = False
) -> AppliedLimits | None:
    """Refuse what cannot run (a SetupError naming the option and the remedy); warn of
    options a provider's limits lower; the limits the run's media will obey (None where no
    model is known or the condition sends no media)."""
    check_token_rules(media.token_rules)
    if model is not None:
        refusal = batch_refusal(model, condition, batching)
        if refusal is not None:
            raise SetupError(refusal)
    if condition not in MEDIA_CONDITIONS:
        return None
    check_media_cache()
    return None if model is None else model_limits(media, model)


def check_role_models() -> None:
    """The model bound to each role HSS uses, checked as every command checks a model
    name: a slip of a model Inspect or Table 5 knows (`--model-role grader=anthropic/
    claude-opsu-5`) stops the run before any model is called, naming the closest."""
    from inspect_ai.model import model_roles

    for role, model in model_roles().items():
        if role in ROLES:
            check_model_name(str(model), f"--model-role {role}", NEWER_INSPECT)


def check_token_rules(path: str | None) -> None:
    """Every rule of a -T token_rules file can be used, whichever model it is for: a rule
    is otherwise found broken only when a model (or a server's checkpoint) matches it."""
    if path is None:
        return
    try:
        for rule in user_token_rules(path):
            check_rule(rule)
    except ValueError as exc:
        raise SetupError(str(exc)) from None


def check_media_cache() -> None:
    """A cache path that is not a folder stops the run here, before any model is called,
    rather than failing every sample (a full or read-only cache only warns)."""
    try:
        check_cache_folder()
    except CacheFolderError as exc:
        raise SetupError(str(exc)) from None


def model_limits(media: MediaSettings, model: str) -> AppliedLimits:
    """The provider's limits over the media settings: native video it cannot take and a
    token rule that cannot be used are refused; an option set above a limit is warned of."""
    refusal = native_video_refusal(media, model)
    if refusal is not None:
        raise SetupError(refusal)
    try:
        limits = applied_limits(media, model)
        if limits.token_rule is not None:
            check_rule(limits.token_rule)
    except ValueError as exc:  # a -T token_rules file or rule that cannot be used
        raise SetupError(str(exc)) from None
    for warning in clamp_warnings(limits):
        logger.warning(warning)
    return limits
