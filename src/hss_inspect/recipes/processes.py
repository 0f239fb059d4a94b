"""A plan of several models run on every core: each model's runs in its own process, as
its own eval set in a folder of the run's folder (`LOG_DIR/<model>/`), so that one model's
harness work (encoding requests, logging) never waits for another's. One folder of eval
sets is what `hss-inspect report`, `inspect view` and `eval-retry` read as one run, and
running the same command again resumes every model where it stopped.

How many processes at once follows the machine: as many as its available memory holds at
`PROCESS_MEMORY` each (a process holds the requests it has in flight, up to ~40 MB each
for a 500-frame clip, and their copies in its log buffer), and at most `PER_CORE` a core:
a model's process spends most of a run waiting on its provider, so a core serves several.
`--processes` sets it. The rest wait for a free one."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from hss_inspect.media.workers import completed, stopping_on_signals, worker_pool
from hss_inspect.recipes.plans import PlannedRun

# What one model's process may take at a full run's concurrency (see the docstring).
PROCESS_MEMORY = 3 * 1024**3
# Model processes a core serves at once (see the docstring).
PER_CORE = 4


@dataclass(frozen=True)
class ModelShare:
    """One model's runs and the eval-set folder they share."""

    model: str
    runs: tuple[PlannedRun, ...]
    log_dir: str


def model_shares(runs: Sequence[PlannedRun], log_dir: str) -> list[ModelShare]:
    """The plan split by the model each run calls, in plan order, each in its own folder."""
    by_model: dict[str, list[PlannedRun]] = {}
    for run in runs:
        by_model.setdefault(run.model, []).append(run)
    return [
        ModelShare(model, tuple(own), join(log_dir, folder_name(model)))
        for model, own in by_model.items()
    ]


def folder_name(model: str) -> str:
    """A model's folder: its Inspect name with anything but letters, digits, '.', '-' and
    '_' made '_' (`openai/gpt-6-astra` -> `openai_gpt-6-astra`)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", model)


def join(log_dir: str, name: str) -> str:
    """A folder inside a local or remote (`s3://...`) log folder."""
    return f"{log_dir.rstrip('/')}/{name}"


def processes_for(shares: int, cores: int, available_memory: int | None) -> int:
    """How many model processes run at once: what the memory holds, `PER_CORE` a core."""
    by_memory = shares if available_memory is None else available_memory // PROCESS_MEMORY
    return max(1, min(shares, PER_CORE * cores, by_memory))


def available_memory() -> int | None:
    """MemAvailable of Linux's /proc/meminfo, in bytes (None elsewhere)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


@dataclass(frozen=True)
class ShareOutcome:
    """How a model's share ended: its eval set finished, or not (with the error that
    ended its process, if one did)."""

    model: str
    log_dir: str
    finished: bool
    error: str = ""


RunShare = Callable[[ModelShare, Mapping[str, Any], Mapping[str, Any]], bool]


def run_shares(
    shares: Sequence[ModelShare],
    processes: int,
    run_share: RunShare,
    task_args: Mapping[str, Any],
    eval_set_args: Mapping[str, Any],
    report: Callable[[ShareOutcome], None],
) -> list[ShareOutcome]:
    """Each model's share in its own process, `processes` at a time; each outcome reported
    as it comes. Stopped (Ctrl-C, SIGTERM) or killed, no process outlives this one."""
    outcomes: list[ShareOutcome] = []
    with stopping_on_signals(), worker_pool(processes, _quiet_start, fresh=True) as pool:
        futures: dict[Future[bool], ModelShare] = {
            pool.submit(run_share, share, task_args, eval_set_args): share for share in shares
        }
        for future in completed(futures):
            share = futures[future]
            error = future.exception()
            finished = error is None and bool(future.result())
            outcome = ShareOutcome(share.model, share.log_dir, finished, _said(error))
            outcomes.append(outcome)
            report(outcome)
    return outcomes


def _said(error: BaseException | None) -> str:
    """An error that ended a model's process, in one line (the others go on)."""
    from hss_inspect.core.errors import error_said

    return "" if error is None else error_said(error)


def _quiet_start() -> None:
    """A model's process: Inspect's own display off unless asked (the processes would
    write over each other's); the eval set's log folder shows progress."""
    os.environ.setdefault("INSPECT_DISPLAY", "none")
