"""What the model under evaluation accepts in one request, and what the media may use.

The facts live in `task_configs/model_limits.yaml` (provider payload rules with their
sources, the paper's Table 5 caps, image-token rules of open-weight model families and the
constants of fitting frames to a context window). Everything here is pure arithmetic over
them: which rules apply to a model, the limits the media must then respect, and the size
of an encoded request.
"""

from __future__ import annotations

import fnmatch
import math
import os
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from hss_inspect.core.config import load_yaml
from hss_inspect.core.errors import InputError
from hss_inspect.core.options import spell
from hss_inspect.core.settings import DEFAULT_MEDIA, FrameSettings, MediaSettings
from hss_inspect.core.user_files import parse_yaml_or_json, read_text

Counted = Literal["raw", "base64"]

# JSON around each image part and its label part, and around the whole request, as the
# providers' SDKs write it; measured on the wire in the tests, rounded up.
PART_OVERHEAD_BYTES = 200
REQUEST_OVERHEAD_BYTES = 16_000


@dataclass(frozen=True)
class ProviderRules:
    """One provider's payload rules (`providers:` in model_limits.yaml)."""

    name: str
    match: tuple[str, ...] = ()
    image_max_bytes: int | None = None
    image_bytes_counted: Counted = "raw"
    image_max_side: int | None = None
    image_max_pixels: int | None = None
    many_images_over: int | None = None
    many_images_max_side: int | None = None
    images_per_request: int | None = None
    request_max_bytes: int | None = None
    image_tokens: dict[str, Any] = field(default_factory=dict)
    native_video: bool = False
    video_max_bytes: int | None = None
    docs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelLimits:
    """The paper's Table 5 facts for one model (`models:` in model_limits.yaml)."""

    max_images: int | None = None
    native_video: bool = False


NO_RULES = ProviderRules(name="no published limits")


def encoded_size(raw_bytes: int) -> int:
    """Length of the base64 text of `raw_bytes` bytes (padding included)."""
    return 4 * math.ceil(raw_bytes / 3)


def raw_for_encoded(encoded_bytes: int) -> int:
    """The most raw bytes whose base64 text fits in `encoded_bytes`."""
    return max(0, encoded_bytes // 4 * 3)


def matches(model_name: str, patterns: tuple[str, ...]) -> bool:
    name = model_name.lower()
    return any(fnmatch.fnmatch(name, p.lower()) for p in patterns)


def as_patterns(value: Any) -> tuple[str, ...]:
    return (str(value),) if isinstance(value, str) else tuple(str(v) for v in value or ())


def _provider_rules(entry: dict[str, Any]) -> ProviderRules:
    many = entry.get("many_images") or {}
    return ProviderRules(
        name=str(entry["name"]),
        match=as_patterns(entry["match"]),
        image_max_bytes=entry.get("image_max_bytes"),
        image_bytes_counted=entry.get("image_bytes_counted", "raw"),
        image_max_side=entry.get("image_max_side"),
        image_max_pixels=entry.get("image_max_pixels"),
        many_images_over=many.get("over"),
        many_images_max_side=many.get("max_side"),
        images_per_request=entry.get("images_per_request"),
        request_max_bytes=entry.get("request_max_bytes"),
        image_tokens=dict(entry.get("image_tokens") or {}),
        native_video=bool(entry.get("native_video", False)),
        video_max_bytes=entry.get("video_max_bytes"),
        docs=tuple(entry.get("docs") or ()),
    )


@dataclass(frozen=True)
class TokenRule:
    """How many input tokens an image costs a model: a formula of providers/tokens.py and
    its constants (`image_tokens` of model_limits.yaml, or of a provider entry)."""

    name: str
    formula: dict[str, Any]
    source: str
    match: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.formula, "source": self.source}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TokenRule:
        """The rule back from `as_dict` (as a sample's `token_fit` records it)."""
        formula = {k: v for k, v in record.items() if k not in ("name", "source")}
        return cls(str(record["name"]), formula, str(record.get("source", "")))


@dataclass(frozen=True)
class FitConstants:
    """`token_fit` of model_limits.yaml: what fitting frames to a window keeps free, and the
    floor below which a clip fails before anything is sent."""

    margin: float
    template_tokens: int
    label_extra_tokens: int
    floor_frames: int
    floor_side: int


def _token_rule(entry: Any, where: str) -> TokenRule:
    if not isinstance(entry, dict):
        raise ValueError(
            f"{where}: each image_tokens entry is a mapping (name, match, formula and its "
            f"constants), not {entry!r}"
        )
    formula = {k: v for k, v in entry.items() if k not in ("match", "name", "source")}
    if "formula" not in formula:
        raise ValueError(f"{where}: an image_tokens entry needs a `formula`")
    return TokenRule(
        name=str(entry.get("name", formula["formula"])),
        formula=formula,
        source=str(entry.get("source", where)),
        match=as_patterns(entry.get("match", ())),
    )


@dataclass(frozen=True)
class RulesFile:
    request_margin: float
    providers: tuple[ProviderRules, ...]
    models: tuple[tuple[tuple[str, ...], ModelLimits], ...]
    token_rules: tuple[TokenRule, ...]
    fit: FitConstants


@cache
def rules_file() -> RulesFile:
    loaded = load_yaml("task_configs", "model_limits.yaml")
    models = tuple(
        (
            as_patterns(entry["match"]),
            ModelLimits(entry.get("max_images"), bool(entry.get("native_video", False))),
        )
        for entry in loaded.get("models", [])
    )
    fit = loaded.get("token_fit") or {}
    return RulesFile(
        request_margin=float(loaded.get("request_margin", 0.05)),
        providers=tuple(_provider_rules(e) for e in loaded.get("providers", [])),
        models=models,
        token_rules=tuple(
            _token_rule(e, "task_configs/model_limits.yaml") for e in loaded.get("image_tokens", [])
        ),
        fit=FitConstants(
            margin=float(fit["margin"]),
            template_tokens=int(fit["template_tokens"]),
            label_extra_tokens=int(fit["label_extra_tokens"]),
            floor_frames=int(fit["floor_frames"]),
            floor_side=int(fit["floor_side"]),
        ),
    )


@cache
def user_token_rules(path: str) -> tuple[TokenRule, ...]:
    """The `image_tokens:` list of a user's rules file (-T token_rules=FILE)."""
    where = spell("token_rules", path)
    try:
        text = read_text(Path(path), where)
    except OSError as exc:
        raise InputError(f"{where}: cannot read it ({exc.strerror})") from None
    remedy = "fix it: a list under `image_tokens:`, fields as in task_configs/model_limits.yaml"
    loaded = parse_yaml_or_json(text, where, remedy)
    entries = loaded.get("image_tokens") if isinstance(loaded, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{spell('token_rules', path)}: expected a list under `image_tokens:`")
    return tuple(_token_rule(e, path) for e in entries)


def token_rule_for(
    model_name: str, served_root: str | None = None, user_rules: str | None = None
) -> TokenRule | None:
    """The image-token rule of a model: the user's file, then the model families (by the
    Inspect name, then by the checkpoint the server serves), then the provider's formula."""
    families = (*(user_token_rules(user_rules) if user_rules else ()), *rules_file().token_rules)
    for name in (model_name, served_root):
        for rule in families:
            if name and matches(name, rule.match):
                return rule
    provider = provider_rules(model_name)
    if provider.image_tokens:
        return TokenRule(provider.name, provider.image_tokens, ", ".join(provider.docs))
    return None


def service_name(model_name: str) -> str:
    """The model name the rules are matched against.

    Inspect's google provider goes to Vertex AI when GOOGLE_GENAI_USE_VERTEXAI=true even
    without a `vertex/` in the name; the rules must follow the service really used.
    """
    parts = model_name.split("/")
    vertex = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() == "true"
    if parts[0].lower() == "google" and len(parts) == 2 and vertex:
        return f"google/vertex/{parts[1]}"
    return model_name


def provider_rules(model_name: str) -> ProviderRules:
    """The first provider entry matching the model, else no limits."""
    name = service_name(model_name)
    for rules in rules_file().providers:
        if matches(name, rules.match):
            return rules
    return NO_RULES


def limits_for(model_name: str) -> ModelLimits:
    """The first Table 5 entry matching the model, else no per-model facts."""
    for patterns, limits in rules_file().models:
        if matches(model_name, patterns):
            return limits
    return ModelLimits()


def _smallest(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


@dataclass(frozen=True)
class Clamp:
    """A task setting lowered to respect a provider limit."""

    option: str
    requested: int
    applied: int
    reason: str
    user_set: bool


@dataclass(frozen=True)
class AppliedLimits:
    """The limits media preparation obeys for one model: task options and provider rules."""

    model: str
    provider: str
    image_max_side: int
    image_max_pixels: int | None
    image_max_raw_bytes: int
    max_images: int | None
    request_max_bytes: int | None
    request_margin: float
    many_images_over: int | None
    many_images_max_side: int | None
    frame_bytes_budget: int
    native_video: bool
    video_max_bytes: int
    clamps: tuple[Clamp, ...]
    docs: tuple[str, ...]
    # image tokens of this model (None: no formula known, frames are not fitted to a window)
    token_rule: TokenRule | None
    fit: FitConstants

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def request_budget(self) -> int | None:
        """Encoded bytes a request may carry, the safety margin taken off."""
        if self.request_max_bytes is None:
            return None
        return int(self.request_max_bytes * (1 - self.request_margin))

    def frame_side_for(self, count: int, frame_side: int) -> int:
        """A frame's longest side when `count` images go in one request."""
        side = min(frame_side, self.image_max_side)
        if self.many_images_over is not None and count > self.many_images_over:
            side = min(side, self.many_images_max_side or side)
        return side

    def media_raw_budget(self, images: int, text_bytes: int) -> int:
        """Raw bytes all `images` media of one request may total, text and JSON included."""
        budget = self.request_budget()
        if budget is None:
            return self.frame_bytes_budget
        spare = budget - REQUEST_OVERHEAD_BYTES - images * PART_OVERHEAD_BYTES - text_bytes
        return min(self.frame_bytes_budget, raw_for_encoded(spare))


def _image_raw_limit(rules: ProviderRules) -> int | None:
    if rules.image_max_bytes is None:
        return None
    if rules.image_bytes_counted == "base64":
        return raw_for_encoded(rules.image_max_bytes)
    return int(rules.image_max_bytes)


def applied_limits(media: MediaSettings, model_name: str) -> AppliedLimits:
    """The task's media settings lowered where the model's provider documents a stricter limit."""
    rules = provider_rules(model_name)
    table5 = limits_for(model_name)
    clamps: list[Clamp] = []

    where = f"{rules.name} limit"

    def user_set(option: str) -> bool:
        """Whether the user chose the value (a default is lowered silently)."""
        if option == "max_images":
            return media.frames.max_images is not None
        return bool(getattr(media, option) != getattr(DEFAULT_MEDIA, option))

    def clamp(option: str, requested: int, limit: int | None, reason: str = where) -> int:
        if limit is None or requested <= limit:
            return requested
        clamps.append(Clamp(option, requested, limit, reason, user_set(option)))
        return limit

    single_request = rules.request_max_bytes
    single_image_room = (
        None
        if single_request is None
        else raw_for_encoded(
            int(single_request * (1 - rules_file().request_margin)) - REQUEST_OVERHEAD_BYTES
        )
    )
    image_raw = clamp(
        "image_max_bytes",
        media.image_max_bytes,
        _smallest(_image_raw_limit(rules), single_image_room),
        f"{where}: {rules.image_max_bytes or single_request} bytes "
        f"({rules.image_bytes_counted if rules.image_max_bytes else 'base64'})",
    )
    side = clamp("image_max_side", media.image_max_side, rules.image_max_side)
    requested_images = media.frames.max_images or table5.max_images
    max_images = (
        clamp("max_images", requested_images, rules.images_per_request)
        if requested_images is not None
        else rules.images_per_request
    )
    video_bytes = clamp(
        "native_video_max_bytes", media.native_video_max_bytes, rules.video_max_bytes
    )
    return AppliedLimits(
        model=model_name,
        provider=rules.name,
        image_max_side=side,
        image_max_pixels=rules.image_max_pixels,
        image_max_raw_bytes=image_raw,
        max_images=max_images,
        request_max_bytes=rules.request_max_bytes,
        request_margin=rules_file().request_margin,
        many_images_over=rules.many_images_over,
        many_images_max_side=rules.many_images_max_side,
        frame_bytes_budget=media.frame_bytes_budget,
        native_video=rules.native_video,
        video_max_bytes=video_bytes,
        clamps=tuple(clamps),
        docs=rules.docs,
        token_rule=token_rule_for(model_name, None, media.token_rules),
        fit=rules_file().fit,
    )


def frame_settings_for(media: MediaSettings, limits: AppliedLimits) -> FrameSettings:
    """The task's frame settings under the model's image cap and side limits."""
    frames = media.frames
    cap = limits.max_images
    count = min(frames.max_frames, cap) if cap is not None else frames.max_frames
    side = limits.frame_side_for(count, frames.frame_side)
    if cap == frames.max_images and side == frames.frame_side:
        return frames
    return FrameSettings(**{**frames.as_dict(), "max_images": cap, "frame_side": side})


def clamp_warnings(limits: AppliedLimits) -> list[str]:
    """One line per option the user set above a provider limit (defaults are lowered silently
    and recorded in the log)."""
    return [
        f"{spell(c.option, c.requested)} exceeds the {c.reason} for {limits.model}; "
        f"using {c.applied} (sources: {', '.join(limits.docs) or 'task_configs/model_limits.yaml'})"
        for c in limits.clamps
        if c.user_set
    ]


def native_video_refusal(media: MediaSettings, model_name: str) -> str | None:
    """Why `native_video=true` cannot work for this model, or None when it can."""
    if media.native_video != "true":
        return None
    rules = provider_rules(model_name)
    if rules.native_video:
        return None
    return (
        f"native_video=true, but {model_name} ({rules.name}) cannot take a video through "
        f"Inspect's provider; use {spell('native_video', 'auto')} or false to send frames"
    )
