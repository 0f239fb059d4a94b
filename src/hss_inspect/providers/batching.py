"""Each provider's batch API (`inspect eval --batch`) as data: the price of a batched token
against the standard price, how much one batch may hold, and how long it may take.

The facts live in the `batch:` section of `task_configs/model_limits.yaml`, with their
sources; this module only reads them. Batching changes what a run costs and how long it
takes, never what a model is sent, so none of it is in the version fingerprint
(`hss_inspect.versioning`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from hss_inspect.core.config import load_yaml
from hss_inspect.providers.limits import as_patterns, matches, service_name


@dataclass(frozen=True)
class BatchRules:
    """One provider's batch API (`batch:` in model_limits.yaml). A field left None is not
    documented; `price_multiplier` None means no batch API that Inspect can use."""

    name: str
    match: tuple[str, ...] = ()
    price_multiplier: float | None = None
    max_requests: int | None = None
    max_batch_bytes: int | None = None
    request_max_bytes: int | None = None
    completion_window_hours: float | None = None
    typical: str = ""
    inline_images: bool = True
    docs: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return self.price_multiplier is not None


NO_BATCH = BatchRules(name="no batch API")


def _optional(entry: dict[str, Any], key: str, kind: type[int] | type[float]) -> Any:
    value = entry.get(key)
    return None if value is None else kind(value)


def _batch_rules(entry: dict[str, Any]) -> BatchRules:
    return BatchRules(
        name=str(entry["name"]),
        match=as_patterns(entry["match"]),
        price_multiplier=_optional(entry, "price_multiplier", float),
        max_requests=_optional(entry, "max_requests", int),
        max_batch_bytes=_optional(entry, "max_batch_bytes", int),
        request_max_bytes=_optional(entry, "request_max_bytes", int),
        completion_window_hours=_optional(entry, "completion_window_hours", float),
        typical=str(entry.get("typical", "")),
        inline_images=bool(entry.get("inline_images", True)),
        docs=tuple(entry.get("docs") or ()),
    )


@cache
def all_batch_rules() -> tuple[BatchRules, ...]:
    """Every `batch:` entry of model_limits.yaml, in the file's order."""
    loaded = load_yaml("task_configs", "model_limits.yaml")
    return tuple(_batch_rules(entry) for entry in loaded.get("batch") or ())


def batch_rules_for(model_name: str) -> BatchRules:
    """The first `batch:` entry matching the model (as the provider rules match it: a
    `google/` model on Vertex AI is matched as `google/vertex/...`), else `NO_BATCH`."""
    name = service_name(model_name)
    for rules in all_batch_rules():
        if matches(name, rules.match):
            return rules
    return NO_BATCH


def batching_requested(batch: object) -> bool:
    """Whether a GenerateConfig's `batch` (`--batch`: True, a size, or a BatchConfig) turns
    batch mode on, as Inspect reads it (None, False and 0 leave it off)."""
    return batch is not None and batch is not False and batch != 0


def images_as_files(model_name: str, batching: bool) -> bool:
    """Whether the model's images must go by Files API reference rather than inline: in
    batch mode, where Inspect's batcher cannot carry an inline image (`inline_images`)."""
    return batching and not batch_rules_for(model_name).inline_images


def batch_refusal(model_name: str, condition: str, batching: bool) -> str | None:
    """Why this run cannot be batched, before any model is called; None when it can."""
    if not batching:
        return None
    rules = batch_rules_for(model_name)
    if rules.match and not rules.available:
        return (
            f"{model_name} with --batch: Inspect cannot batch this provider's requests (it "
            "fails them once the run has started); run without --batch"
        )
    if condition == "agentic" and not rules.inline_images:
        return (
            f"{model_name} with --batch: the agentic tools return frames and crops as inline "
            f"images, which Inspect's batcher for the {rules.name} cannot write (an Inspect "
            "bug: TypeError: Object of type bytes is not JSON serializable, which ends the "
            "eval); run hss_agentic on this model without --batch"
        )
    return None
