"""A plan's models as Ray tasks (`--engine ray`): Ray places each model's share on a node
with a free core and the memory a model's process needs, and starts it again on another
if its worker or node dies (`RETRIES`); each writes its eval set into its folder of the
shared log folder (a network folder or `s3://...`), and a node prepares each media file
once in its own media cache. `ray.init()` joins the cluster `RAY_ADDRESS` names, or starts
one on this machine.

A share started again resumes its eval set: finished samples are not run or judged again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hss_inspect.core.errors import InputError
from hss_inspect.recipes.processes import PROCESS_MEMORY, ModelShare, ShareOutcome

# Times Ray runs a share again after its worker process or node died.
RETRIES = 3
INSTALL_HINT = "--engine ray needs Ray: pip install 'hss-inspect[ray]'"


def run_on_ray(
    shares: Sequence[ModelShare],
    task_args: Mapping[str, Any],
    eval_set_args: Mapping[str, Any],
    report: Callable[[ShareOutcome], None],
) -> list[ShareOutcome]:
    """Each share as a Ray task; each outcome reported as it comes."""
    try:
        import ray
    except ModuleNotFoundError:
        raise InputError(INSTALL_HINT) from None
    ray.init(ignore_reinit_error=True, include_dashboard=False, configure_logging=False)
    task = ray.remote(num_cpus=1, memory=PROCESS_MEMORY, max_retries=RETRIES)(run_share_task)
    refs = {task.remote(share, dict(task_args), dict(eval_set_args)): share for share in shares}
    outcomes: list[ShareOutcome] = []
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            share = refs[ref]
            finished, error = _finished(ray, ref)
            outcome = ShareOutcome(share.model, share.log_dir, finished, error)
            outcomes.append(outcome)
            report(outcome)
    return outcomes


def _finished(ray: Any, ref: Any) -> tuple[bool, str]:
    """Whether the share's eval set finished, and the error Ray gave up on it with."""
    try:
        return bool(ray.get(ref)), ""
    except ray.exceptions.RayError as exc:
        cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) else exc
        first = (str(cause).strip().splitlines() or [""])[0]
        return False, f"{type(cause).__name__}: {first}"


def run_share_task(
    share: ModelShare, task_args: Mapping[str, Any], eval_set_args: Mapping[str, Any]
) -> bool:
    """A Ray worker's job: the share's eval set, without Inspect's display (nobody sees a
    worker's terminal; the log folder shows progress)."""
    from hss_inspect.recipes.run import run_share

    os.environ.setdefault("INSPECT_DISPLAY", "none")
    return run_share(share, task_args, eval_set_args)
