"""Entry point of the `inspect_ai` group: importing this registers every HSS component."""

from hss_inspect import __all__ as TASKS
from hss_inspect.audit.scorer import audit_metrics, audit_sum, judge_audit
from hss_inspect.audit.solver import audit_answer
from hss_inspect.conditions.solver import hss_input, human_answer, oracle_answer
from hss_inspect.grading.labeler import failure_cause
from hss_inspect.grading.metrics import hss_metrics
from hss_inspect.grading.scorer import rubric_judge
from hss_inspect.hooks.log_size import LogSizeWarning
from hss_inspect.hooks.run_pace import RunPace
from hss_inspect.scripted import ScriptedModel
from hss_inspect.task import (  # noqa: F401 (exported through TASKS, the package's list)
    hss,
    hss_agentic,
    hss_blind,
    hss_demo,
    hss_human,
    hss_image,
    hss_judge_audit,
    hss_oracle,
    hss_video,
)

__all__ = [
    "LogSizeWarning",
    "RunPace",
    "ScriptedModel",
    "audit_answer",
    "audit_metrics",
    "audit_sum",
    "failure_cause",
    "human_answer",
    "hss_input",
    "hss_metrics",
    "judge_audit",
    "oracle_answer",
    "rubric_judge",
    *TASKS,
]
