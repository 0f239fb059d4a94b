"""The HSS options of an lmms-eval run. lmms-eval hands a task no arguments, so they come
from the environment, as its own tasks take their judge's settings:

    HSS_TASK_ARGS       a JSON object of the Inspect task's `-T` options (selection,
                        frames, images, judge re-asks), checked by the same declarations
    HSS_MODEL           the model under evaluation as Inspect names it, whose documented
                        limits (images per request, bytes, sides) the media are fitted to
    HSS_MODEL_BASE_URL  its server, asked for its context window (vLLM, SGLang, Ollama)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from hss_inspect.core import options as opt
from hss_inspect.core.errors import InputError
from hss_inspect.core.names import unknown_name
from hss_inspect.core.settings import MediaSettings

TASK_ARGS_VARIABLE = "HSS_TASK_ARGS"
MODEL_VARIABLE = "HSS_MODEL"
BASE_URL_VARIABLE = "HSS_MODEL_BASE_URL"
# A model of no documented provider: no provider limit lowers the task's media options.
DEFAULT_MODEL = "lmms-eval/model"

# The options lmms-eval can honour: the rest (condition, agentic, labeller, cache plan,
# model errors) belong to Inspect's solvers, which lmms-eval's loop does not have.
ACCEPTED = (
    *opt.SELECTION_OPTIONS,
    *opt.FRAME_OPTIONS,
    *opt.MEDIA_OPTIONS,
    "judge_retries",
)


@dataclass(frozen=True)
class RunOptions:
    values: dict[str, Any]
    media: MediaSettings
    model: str
    base_url: str | None


def run_options(preset: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> RunOptions:
    """The run's options: the defaults, the preset's values, then HSS_TASK_ARGS."""
    given = task_args(environ.get(TASK_ARGS_VARIABLE, ""))
    chosen = {name: opt.DEFAULTS[name] for name in ACCEPTED} | dict(preset) | given
    values = opt.checked(chosen)
    if values["native_video"] == "true":
        raise InputError(
            f"{TASK_ARGS_VARIABLE}: native_video=true cannot be honoured in lmms-eval (its "
            "models decode a whole clip themselves); leave native_video out"
        )
    # lmms-eval's models are sent the frames: a whole clip would be decoded by the model's
    # own sampler, not the protocol's.
    media = replace(opt.media_settings(values), native_video="false")
    model = environ.get(MODEL_VARIABLE) or DEFAULT_MODEL
    return RunOptions(values, media, model, environ.get(BASE_URL_VARIABLE) or None)


def task_args(text: str) -> dict[str, Any]:
    """HSS_TASK_ARGS read: a JSON object of accepted option names."""
    if not text.strip():
        return {}
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{TASK_ARGS_VARIABLE} is not JSON ({exc.msg}); give an object such as "
            '\'{"fps": 1, "max_frames": 64}\''
        ) from None
    if not isinstance(loaded, dict):
        raise InputError(f"{TASK_ARGS_VARIABLE} must be a JSON object of HSS task options")
    for name in loaded:
        if name not in ACCEPTED:
            what = f"an HSS option lmms-eval can honour (in {TASK_ARGS_VARIABLE})"
            listed = "docs/lmms-eval.md lists them"
            raise unknown_name(name, what, ACCEPTED, listed)
    return loaded
