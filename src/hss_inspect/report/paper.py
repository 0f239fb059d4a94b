"""The paper's published rows (Table 1), read from `task_configs/paper_models.yaml` beside
the registry of its models (`providers.paper_models`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hss_inspect.providers.paper_models import deployment, paper_data

PUBLISHED_COLUMNS: tuple[str, ...] = (
    "pass_at_1",
    "ci95",
    "image",
    "video",
    "temporal",
    "physical",
    "social",
    "abstract",
    "think_tokens",
    "answer_tokens",
)


@dataclass(frozen=True)
class PublishedRow:
    """A row of the paper's Table 1; figures in percent (tokens as counts)."""

    label: str
    vendor: str
    kind: str  # human, model or control
    values: dict[str, float | None]


def published_rows() -> list[PublishedRow]:
    """Human baseline, the paper's 25 models and the blind control, in Table 1's order."""
    data = paper_data()
    rows = [PublishedRow("Human baseline", "", "human", _values(data["human"]))]
    for entry in data["models"]:
        label = _label(entry["model"], entry["effort"])
        rows.append(PublishedRow(label, entry["vendor"], "model", _values(entry["table1"])))
    for entry in data["controls"]:
        label = _label(entry["model"], deployment(entry["model"]).effort, entry["condition"])
        rows.append(PublishedRow(label, "Control", "control", _values(entry["table1"])))
    return rows


def human_baseline() -> PublishedRow:
    """Table 1's human baseline: twenty annotators under the models' conditions (Sec. 3.1)."""
    return next(row for row in published_rows() if row.kind == "human")


def table1_row(model: str, condition: str = "standard") -> PublishedRow | None:
    """Table 1's row for one of the paper's models (a Table 5 name, Inspect name or
    endpoint) at its Table 5 effort under `condition`; None where Table 1 has none."""
    try:
        found = deployment(model)
    except ValueError:
        return None
    label = _label(found.name, found.effort, None if condition == "standard" else condition)
    return next((row for row in published_rows() if row.label == label), None)


def _label(model: str, effort: str, condition: str | None = None) -> str:
    return f"{model} ({effort})" + (f" [{condition}]" if condition else "")


def _values(found: dict[str, Any]) -> dict[str, float | None]:
    return {c: None if found.get(c) is None else float(found[c]) for c in PUBLISHED_COLUMNS}
