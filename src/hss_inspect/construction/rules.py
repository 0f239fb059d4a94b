"""The rules of building a task, read once from `task_configs/construction.yaml`: the
review rounds, the three principles (Sec. 2.3), the verdicts and the reasons to drop."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from hss_inspect.core.config import load_yaml

RULES_FILE = "construction.yaml"
VERDICTS = ("pass", "edit", "drop")
# The reason that needs the reviewer's own words.
OTHER_REASON = "other"


@dataclass(frozen=True)
class Keyed:
    """A text of the rules under its key: a principle (its name as `label`, and its `text`)
    or a reason to drop (its `label`, and the `principle` it stands for, if one)."""

    key: str
    label: str
    text: str = ""
    principle: str | None = None


@dataclass(frozen=True)
class Rules:
    rounds: int
    verdicts: dict[str, str]
    principles: tuple[Keyed, ...]
    drop_reasons: tuple[Keyed, ...]

    def reason(self, key: str) -> Keyed | None:
        return next((r for r in self.drop_reasons if r.key == key), None)


@cache
def rules() -> Rules:
    data = load_yaml("task_configs", RULES_FILE)
    verdicts = {str(k): str(v) for k, v in data["verdicts"].items()}
    if tuple(verdicts) != VERDICTS:
        raise ValueError(f"{RULES_FILE}: verdicts must be {', '.join(VERDICTS)}, in order")
    return Rules(
        rounds=int(data["rounds"]),
        verdicts=verdicts,
        principles=tuple(Keyed(**p) for p in data["principles"]),
        drop_reasons=tuple(Keyed(**r) for r in data["drop_reasons"]),
    )
