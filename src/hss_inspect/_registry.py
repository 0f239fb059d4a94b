"""Entry point of the `inspect_ai` group: importing this registers every HSS component."""

from hss_inspect.labeler import failure_cause
from hss_inspect.metrics import hss_mean, hss_metrics
from hss_inspect.scorer import rubric_judge
from hss_inspect.scripted import ScriptedModel
from hss_inspect.solver import hss_input, oracle_answer
from hss_inspect.task import PRESET_TASKS, hss

globals().update(PRESET_TASKS)

__all__ = [
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
