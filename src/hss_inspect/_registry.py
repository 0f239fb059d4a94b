"""Entry point of the `inspect_ai` group: importing this registers every HSS component."""

from hss_inspect.audit.scorer import audit_metrics, audit_sum, judge_audit
from hss_inspect.audit.solver import audit_answer
from hss_inspect.labeler import failure_cause
from hss_inspect.metrics import hss_mean, hss_metrics
from hss_inspect.scorer import rubric_judge
from hss_inspect.scripted import ScriptedModel
from hss_inspect.solver import hss_input, oracle_answer
from hss_inspect.task import PRESET_TASKS, hss, hss_judge_audit

globals().update(PRESET_TASKS)

__all__ = [
    "audit_answer",
    "audit_metrics",
    "audit_sum",
    "hss_judge_audit",
    "judge_audit",
    "failure_cause",
    "hss",
    "hss_input",
    "hss_mean",
    "hss_metrics",
    "oracle_answer",
    "rubric_judge",
    "ScriptedModel",
    *PRESET_TASKS,
]
