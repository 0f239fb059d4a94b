"""The model roles HSS uses besides the model under evaluation, and the checks that a role a
run needs is bound (Inspect would otherwise fall back to the model under evaluation)."""

from __future__ import annotations

import contextvars

from inspect_ai.model import model_roles

from hss_inspect.core.errors import SetupError

GRADER_ROLE = "grader"
LABELER_ROLE = "labeler"
PERTURBER_ROLE = "perturber"

NO_GRADER_MESSAGE = (
    "HSS grades every answer with a judge model, and no model is bound to the role "
    f"'{GRADER_ROLE}'. Add --model-role {GRADER_ROLE}=<provider/model> to the command "
    "(the paper's primary judge is Claude Opus 5 at high reasoning effort). To let the "
    "model under evaluation grade itself, bind it explicitly to that role."
)
NO_LABELER_MESSAGE = (
    f"The failure-cause labeller needs a model bound to the role '{LABELER_ROLE}'. Add "
    f"--model-role {LABELER_ROLE}=<provider/model> (the paper labelled with Claude Opus 5)."
)


ROLES = (GRADER_ROLE, LABELER_ROLE, PERTURBER_ROLE)


def check_role_names() -> None:
    """A role bound under a name close to one HSS uses (`grder`) is a typo, refused: the role
    meant stays unbound. Other roles may be another task's, in an eval set: they pass."""
    from hss_inspect.core.names import closest, unknown_name

    for role in model_roles():
        if role not in ROLES and closest(role, ROLES) is not None:
            listed = "HSS uses " + ", ".join(ROLES)
            raise unknown_name(role, "a role of HSS", ROLES, listed, form="--model-role {}")


def role_bound(role: str) -> bool:
    return model_roles().get(role) is not None


def require_role(role: str, message: str) -> None:
    """Refuse to go on without `role`: the message names the role and how to bind it."""
    if not role_bound(role):
        raise SetupError(message)


def require_grader() -> None:
    """Refuse to run without a judge, rather than silently grading with the model under test."""
    require_role(GRADER_ROLE, NO_GRADER_MESSAGE)


def require_labeler() -> None:
    """Refuse to label without a labeller (checked when each sample starts, too, before the
    model under evaluation is called, when -T labeler=true asks for labels)."""
    require_role(LABELER_ROLE, NO_LABELER_MESSAGE)


def require_roles(labeler: bool) -> None:
    """Refuse to start a sample, before any model is called, without the models its
    scorers need: the judge, and the labeller when -T labeler=true."""
    require_grader()
    if labeler:
        require_labeler()


def roles_resolved() -> bool:
    """Whether Inspect bound the eval's model roles before building the task (`inspect eval`,
    `eval()`, `eval-set`, `eval-retry` do), so a missing role is known while it is built. A
    task built by other means (Inspect Flow, a recipe, `task_with`) gets its roles after,
    and is checked when each sample starts, before any model is called. (`eval_set` leaves
    its roles in its caller's context: the recipe calls it in a copy of the context.)"""
    # Private: no public API tells a task being built whether the roles are known yet
    # (`model_roles()` is documented for running solvers only). Pinned by tests/test_errors.py.
    from inspect_ai.model._model import (
        _model_roles,  # inspect-evals-lint: ignore[private_api_imports] -- see above
    )

    return _model_roles in contextvars.copy_context()
