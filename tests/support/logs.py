"""Inspect logs with known per-attempt scores, written through Inspect's own log API
(`write_eval_log`), in the shape the HSS task writes them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalSample,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import GenerateConfig, ModelConfig
from inspect_ai.scorer import Score

JUDGE = "anthropic/claude-opus-5"
TAXONOMY = {
    "retrodiction": ("Temporal & Causal Dynamics", "Retrodiction"),
    "extrapolation": ("Temporal & Causal Dynamics", "Extrapolation"),
    "hidden_invisible": ("Physical & Spatial Logic", "Hidden & Invisible"),
    "theory_of_mind": ("Social Understanding", "Theory of Mind"),
    "patterns_pareidolia": ("Abstract & Contextual Inference", "Patterns & Pareidolia"),
    "Telepathy": ("Abstract & Contextual Inference", "Telepathy"),  # outside the paper's eleven
}


@dataclass(frozen=True)
class Try:
    """One attempt: passed or not (None: grading failure), tokens, verdicts."""

    passed: bool | None
    rubric: float | None = None
    no_answer: bool = False
    model_error: bool = False
    refusal: bool = False  # a policy refusal (also a no answer)
    output_tokens: int = 100
    reasoning_tokens: int | None = None
    verdicts: tuple[bool, ...] | None = None  # per criterion; default: all equal to passed
    judge: str | None = None
    error_message: str | None = None  # written to metadata, as the scorer does for no answer
    justification: str = "test"

    def score(self, legacy: bool = False) -> Score:
        failed = self.passed is None or self.model_error
        verdicts = self.verdicts if self.verdicts is not None else (bool(self.passed),)
        usage = {"output_tokens": self.output_tokens, "reasoning_tokens": self.reasoning_tokens}
        if legacy and self.passed is None:
            return Score(value=math.nan, metadata={"grading_failure": True, "answer_usage": usage})
        rubric = self.rubric if self.rubric is not None else float(bool(self.passed))
        value: dict[str, Any] = {
            "pass": math.nan if failed else int(bool(self.passed)),
            "rubric": math.nan if failed else rubric,
        }
        if not legacy:
            value |= {
                "no_answer": int(self.no_answer),
                "grading_failure": int(self.passed is None and not self.model_error),
                "model_error": int(self.model_error),
                "refusal": int(self.refusal),
            }
        metadata: dict[str, Any] = {"answer_usage": usage, "no_answer": self.no_answer}
        if self.error_message:
            metadata["model_error"] = self.error_message
        if not self.no_answer and not self.model_error:
            metadata["judge_model"] = self.judge or JUDGE
            metadata["verdicts"] = [
                {"id": f"c{i + 1}", "met": met, "justification": self.justification}
                for i, met in enumerate(verdicts)
            ]
        return Score(value=value, metadata=metadata)


@dataclass(frozen=True)
class Item:
    task_id: str
    subdomain: str  # a key of TAXONOMY
    media_type: str
    tries: tuple[Try, ...]
    extra: dict[str, tuple[Try, ...]] = field(default_factory=dict)  # scorer -> tries


def write_log(
    path: Path,
    items: list[Item],
    model: str = "openai/gpt-test",
    condition: str = "standard",
    effort: str | None = "high",
    max_frames: int = 500,
    judge: str = JUDGE,
    legacy: bool = False,
    task_id: str = "",
    eval_id: str = "",
    created: str = "2026-11-29T20:00:00+00:00",
    status: str = "success",
    metadata: dict[str, Any] | None = None,
    task: str = "hss_inspect/hss",
) -> str:
    """`metadata` adds to (or replaces) the eval's metadata: the dataset and version records."""
    samples = []
    for item in items:
        domain, subdomain = TAXONOMY[item.subdomain]
        for epoch, attempt in enumerate(item.tries, start=1):
            scores = {"rubric_judge": attempt.score(legacy)}
            for scorer, tries in item.extra.items():
                scores[scorer] = tries[epoch - 1].score(legacy)
            samples.append(
                EvalSample(
                    id=item.task_id,
                    epoch=epoch,
                    input="question",
                    target="reference",
                    uuid=f"{path.stem}-{item.task_id}-{epoch}",
                    metadata={
                        "task_id": item.task_id,
                        "media_type": item.media_type,
                        "domain": domain,
                        "subdomain": subdomain,
                        # the row as the task records it (what the judge was given)
                        "prompt": f"What happens in {item.task_id}?",
                        "golden_response": "reference",
                        "criteria": [
                            {"id": f"c{i + 1}", "title": f"criterion {i + 1}", "weight": None}
                            for i in range(_criteria(item))
                        ],
                    },
                    scores=scores,
                )
            )
    log = EvalLog(
        status=status,  # type: ignore[arg-type]
        eval=EvalSpec(
            created=created,
            task_id=task_id or path.stem,
            eval_id=eval_id or path.stem,
            task=task,
            dataset=EvalDataset(
                name="hss", samples=len(items), sample_ids=[item.task_id for item in items]
            ),
            model=model,
            model_generate_config=GenerateConfig(reasoning_effort=effort),  # type: ignore[arg-type]
            model_roles={"grader": ModelConfig(model=judge)},
            config=EvalConfig(epochs=max(len(item.tries) for item in items)),
            metadata={
                "hss_condition": condition,
                "hss_media_settings": {"frames": {"max_frames": max_frames}},
                **(metadata or {}),
            },
        ),
        samples=samples,
    )
    write_eval_log(log, str(path))
    return str(path)


def _criteria(item: Item) -> int:
    """As many criteria as the item's attempts have verdicts (one at the least)."""
    return max([len(t.verdicts or ()) for t in item.tries] + [1])
