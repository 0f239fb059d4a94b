"""The task version (eval.yaml, register style `N-X`) and fingerprints of everything that
changes results, so that a change to one of them cannot ship without a version bump."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from inspect_ai.tool import ToolDef

from hss_inspect.audit.kinds import KINDS
from hss_inspect.audit.variants import audit_data
from hss_inspect.conditions import prompt
from hss_inspect.conditions.agentic.loop import CONVERSATION_TEXT_BYTES, CONVERSATION_TEXT_TOKENS
from hss_inspect.conditions.agentic.tools import AgentMedia, inspection_tools
from hss_inspect.core.config import comparable_part, eval_metadata
from hss_inspect.core.settings import (
    DEFAULT_AGENT,
    DEFAULT_EPOCHS,
    DEFAULT_FRAMES,
    DEFAULT_JUDGE_RETRIES,
    DEFAULT_LABELER_RETRIES,
    DEFAULT_MEDIA,
    DEFAULT_MODEL_ERRORS,
    DEFAULT_PERTURBER_RETRIES,
)
from hss_inspect.grading.causes import labeler_prompts, taxonomy
from hss_inspect.grading.judge import judge_prompts
from hss_inspect.grading.metrics import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, VALUE_KEYS
from hss_inspect.media.frame_cache import FRAME_ALGORITHM_VERSION
from hss_inspect.media.image_cache import IMAGE_ALGORITHM_VERSION
from hss_inspect.providers.fit import FIT_ALGORITHM_VERSION
from hss_inspect.providers.limits import TokenRule, rules_file
from hss_inspect.providers.tokens import image_tokens


def register_entry() -> dict[str, Any]:
    """The package's eval.yaml."""
    return eval_metadata()


def task_version() -> str:
    """`N-X`: N changes when results stop being comparable, X when the interface changes."""
    return str(register_entry()["version"])


def comparability_version() -> int:
    """N of `N-X`: what Task(version=...) carries; logs with the same N are comparable."""
    return int(comparable_part(task_version()))


def _sha256(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def agentic_inputs() -> dict[str, Any]:
    """What the agentic condition adds to the standard turn: its system message, each
    tool's name, signature and description (the text the model reads), and its limits."""
    tools = {}
    for media_type in ("image", "video"):
        media = AgentMedia(
            media_type,
            Path(media_type),
            DEFAULT_FRAMES,
            DEFAULT_AGENT,
            DEFAULT_AGENT.max_tool_images,
        )
        tools[media_type] = [_tool_text(ToolDef(t)) for t in inspection_tools(media)]
    return {
        "system_messages": [prompt.agent_system_message(m) for m in ("image", "video")],
        "tools": tools,
        "limits": DEFAULT_AGENT.as_dict(),
        "conversation_text_bytes": CONVERSATION_TEXT_BYTES,
        "conversation_text_tokens": CONVERSATION_TEXT_TOKENS,
    }


def _tool_text(tool: ToolDef) -> list[Any]:
    return [tool.name, tool.description, tool.parameters.model_dump(exclude_none=True)]


def provider_rules_inputs() -> dict[str, Any]:
    """task_configs/model_limits.yaml's payload rules as they decide what a model is sent:
    without the documentation links, and without the image-token rules and fitting
    constants, which `token_fit` covers."""
    rules = dataclasses.asdict(rules_file())
    del rules["token_rules"], rules["fit"]
    for provider in rules["providers"]:
        del provider["docs"], provider["image_tokens"]
    return rules


def labeler_inputs() -> dict[str, Any]:
    """The failure-cause labeller's prompt, its taxonomy and its re-asks."""
    return {
        "prompt": labeler_prompts().sha256,
        "taxonomy": dataclasses.asdict(taxonomy()),
        "retries": DEFAULT_LABELER_RETRIES,
    }


def result_fingerprints() -> dict[str, str]:
    """A digest of each input that changes the numbers a run reports."""
    sample_times = [0.0, 0.5, 1.0, 1.5]
    return {
        "judge_prompt": judge_prompts().sha256,
        "media_notes": _sha256(
            [
                prompt.IMAGE_NOTE,
                prompt.frames_note(4, 2.0, 2.0, sample_times, None),
                prompt.frames_note(4, 2.0, 2.0, sample_times, 8),
                prompt.native_video_note(2.0),
                prompt.frame_label(1.5),
                prompt.question_text("Q"),
            ]
        ),
        "blind_system_message": _sha256(prompt.BLIND_SYSTEM_MESSAGE),
        "sampling_defaults": _sha256(
            {
                # the time limit decides whether a sample runs, not what it is sent
                "media": {k: v for k, v in DEFAULT_MEDIA.as_dict().items() if k != "media_timeout"},
                "frame_algorithm": FRAME_ALGORITHM_VERSION,
                "image_algorithm": IMAGE_ALGORITHM_VERSION,
            }
        ),
        "token_fit": _sha256(token_fit_inputs()),
        "judge_audit": _sha256(
            {
                "texts": audit_data(),
                "kinds": [[k.name, k.made_by.value, k.expectation.value] for k in KINDS],
                "perturber_retries": DEFAULT_PERTURBER_RETRIES,
            }
        ),
        "scoring": _sha256(
            {
                "epochs": DEFAULT_EPOCHS,
                "judge_retries": DEFAULT_JUDGE_RETRIES,
                "bootstrap": [BOOTSTRAP_SEED, BOOTSTRAP_RESAMPLES],
                "value_keys": VALUE_KEYS,
                # which attempts a finished run holds: failed and retried, or left out
                "model_errors": DEFAULT_MODEL_ERRORS,
            }
        ),
        "agentic": _sha256(agentic_inputs()),
        "provider_rules": _sha256(provider_rules_inputs()),
        "labeler": _sha256(labeler_inputs()),
    }


def token_fit_inputs() -> dict[str, Any]:
    """What decides how many frames fit a model's window: the image-token rules (model
    families and providers), the fitting constants and the fitting rule's version."""
    rules = rules_file()
    return {
        "families": [{**r.as_dict(), "match": list(r.match)} for r in rules.token_rules],
        "providers": {p.name: p.image_tokens for p in rules.providers if p.image_tokens},
        # what each formula's code makes of a few sizes, so a change to the code shows
        "costs": {
            r.name: [image_tokens(r, w, h) for w, h in TOKEN_SAMPLE_SIZES]
            for r in _all_token_rules()
        },
        "constants": dataclasses.asdict(rules.fit),
        "algorithm": FIT_ALGORITHM_VERSION,
    }


# Frames and images of the sizes HSS sends, from the floor's up to a large photograph.
TOKEN_SAMPLE_SIZES = ((128, 72), (432, 768), (768, 432), (1280, 720), (1800, 2400), (4096, 3072))


def _all_token_rules() -> list[TokenRule]:
    rules = rules_file()
    from_providers = [
        TokenRule(p.name, dict(p.image_tokens), "provider")
        for p in rules.providers
        if p.image_tokens
    ]
    return [*rules.token_rules, *from_providers]
