"""The requests of a run, sized before anything is sent.

Each selected sample's user turn is built exactly as the task builds it for the model
(`conditions.turn.user_turn_for`: the same limits, token budget, frames and re-encoding,
filling the same cache), so the figures are those of the requests the run will send. Image
tokens follow the model family's or the provider's formula (`image_tokens` in
task_configs/model_limits.yaml); the window is found as the run finds it
(`providers.context`). It also says how much of that media was already prepared, and what
building the requests had to decode, with the time that took.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from hss_inspect.core.settings import MediaSettings
from hss_inspect.data.release import Release
from hss_inspect.data.rows import TaskRow
from hss_inspect.estimate.costs import CostEstimate, TaskCost
from hss_inspect.media.activity import Activity, activity
from hss_inspect.providers.fit import DoesNotFit, TokenBudget
from hss_inspect.providers.limits import TokenRule, provider_rules
from hss_inspect.providers.prices import text_tokens


@dataclass
class RequestEstimate:
    task_id: str
    kind: str
    images: int
    request_bytes: int
    image_tokens: int | None
    sizes: list[tuple[int, int]]
    estimated_tokens: int | None = None
    frames_planned: int | None = None
    frames_sent: int | None = None
    frame_side: int | None = None
    # "thinned", "shrunk", "thinned+shrunk", None, or why the clip cannot fit (the sample
    # then fails before anything is sent)
    fit: str | None = None
    text_bytes: int = 0
    sent: bool = True  # False: the clip cannot fit, and the run fails it before sending

    def task_cost(self, media_type: str) -> TaskCost:
        """The request as the bill counts it: its user turn, all shared by its attempts
        (images by the formula, text at a typical rate; None when images are not counted)."""
        prefix = (
            None if self.image_tokens is None else self.image_tokens + text_tokens(self.text_bytes)
        )
        return TaskCost(media_type, self.kind, prefix, self.text_bytes)


@dataclass(frozen=True)
class PreparedMedia:
    """How much of the run's media was in the cache before the estimate, and what building
    its requests had to decode (the run reads it from the cache now, if it could be kept)."""

    clips: int
    clips_prepared: int
    images: int
    images_prepared: int
    clips_decoded: int
    frames_decoded: int
    decode_seconds: float
    stored: bool


@dataclass
class RunEstimate:
    """A run's requests in all: what `hss-inspect estimate` prints, and its JSON."""

    model: str
    provider: str
    tasks: int
    epochs: int
    requests: int
    images: int
    payload_bytes: int
    largest_request_bytes: int
    largest_request_task: str | None
    request_max_bytes: int | None
    image_tokens: int | None
    image_token_formula: str | None
    image_token_rule: dict[str, Any] | None
    token_budget: TokenBudget
    per_task: list[RequestEstimate]
    media: PreparedMedia | None = None
    cost: CostEstimate | None = None

    def as_dict(self) -> dict[str, Any]:
        found = {name: getattr(self, name) for name in self.__dataclass_fields__}
        found["token_budget"] = self.token_budget.as_dict()
        found["per_task"] = [asdict(e) for e in self.per_task]
        found["media"] = None if self.media is None else asdict(self.media)
        found["cost"] = None if self.cost is None else self.cost.as_dict()
        return {k: v for k, v in found.items() if k not in ("media", "cost") or v is not None}


def estimate_request(record: dict[str, Any], task_id: str) -> RequestEstimate:
    """A request as the sample's media record describes it."""
    from hss_inspect.conditions.turn import sent_image_sizes

    tokens = record.get("token_fit") or {}
    changed = [
        w
        for w, key in (("thinned", "thinned_to_fit"), ("shrunk", "shrunk_to_fit"))
        if tokens.get(key)
    ]
    return RequestEstimate(
        task_id=task_id,
        kind=record["kind"],
        images=record["payload"]["images"],
        request_bytes=record["payload"]["estimated_request_bytes"],
        image_tokens=tokens.get("estimated_image_tokens"),
        sizes=sent_image_sizes(record),
        estimated_tokens=tokens.get("estimated_tokens"),
        frames_planned=tokens.get("frames_planned"),
        frames_sent=tokens.get("frames_sent"),
        frame_side=tokens.get("frame_side"),
        fit="+".join(changed) or None,
        text_bytes=record["payload"]["text_bytes"],
    )


async def size_requests(
    release: Release,
    rows: list[TaskRow],
    media: MediaSettings,
    model: str,
    base_url: str | None,
    max_tokens: int | None,
) -> tuple[TokenBudget, list[RequestEstimate], PreparedMedia]:
    """Each row's request built as the run builds it, the token budget it was fitted to,
    and what of the media was prepared before."""
    from hss_inspect.conditions.turn import user_turn_for
    from hss_inspect.providers.context import budget_for_name

    budget = await budget_for_name(
        model, media.context_window, media.output_reserve, base_url, max_tokens
    )
    estimates = []
    sent: list[tuple[str, str]] = []
    before = activity()
    for row in rows:
        try:
            _, record = await user_turn_for(release, media, model, row.sample_metadata(), budget)
        except DoesNotFit as exc:  # the run would fail this sample before sending it
            estimates.append(
                RequestEstimate(row.task_id, "frames", 0, 0, 0, [], fit=str(exc), sent=False)
            )
            continue
        estimates.append(estimate_request(record, row.task_id))
        sent.append((record["kind"], record["media_sha256"]))
    return budget, estimates, prepared_media(sent, activity().since(before))


def prepared_media(sent: list[tuple[str, str]], work: Activity) -> PreparedMedia:
    clips = {digest for kind, digest in sent if kind == "frames"}
    images = {digest for kind, digest in sent if kind == "image"}
    decoded = {digest: frames for digest, frames in work.clips.items() if digest in clips}
    return PreparedMedia(
        clips=len(clips),
        clips_prepared=len(clips - decoded.keys()),
        images=len(images),
        images_prepared=len(images - work.images.keys()),
        clips_decoded=len(decoded),
        frames_decoded=sum(decoded.values()),
        decode_seconds=round(work.decode_seconds, 3),
        stored=work.not_stored == 0,
    )


def run_estimate(
    estimates: list[RequestEstimate],
    epochs: int,
    model: str,
    budget: TokenBudget,
    rule: TokenRule | None,
) -> RunEstimate:
    """The run's requests in all, over its epochs."""
    rules = provider_rules(model)
    tokens = [e.image_tokens for e in estimates]
    largest = max(estimates, key=lambda e: e.request_bytes, default=None)
    return RunEstimate(
        model=model,
        provider=rules.name,
        tasks=len(estimates),
        epochs=epochs,
        requests=sum(e.sent for e in estimates) * epochs,
        images=sum(e.images for e in estimates) * epochs,
        payload_bytes=sum(e.request_bytes for e in estimates) * epochs,
        largest_request_bytes=largest.request_bytes if largest else 0,
        largest_request_task=largest.task_id if largest else None,
        request_max_bytes=rules.request_max_bytes,
        image_tokens=None if None in tokens else sum(t or 0 for t in tokens) * epochs,
        image_token_formula=rule.formula.get("formula") if rule else None,
        image_token_rule=rule.as_dict() if rule else None,
        token_budget=budget,
        per_task=estimates,
    )
