"""Entry point of the `inspect_ai` group: importing this registers every HSS component."""

from hss_inspect.metrics import hss_metrics
from hss_inspect.scorer import rubric_judge
from hss_inspect.scripted import ScriptedModel
from hss_inspect.solver import hss_input, oracle_answer
from hss_inspect.task import (
    hss,
    hss_agentic,
    hss_blind,
    hss_demo,
    hss_image,
    hss_oracle,
    hss_video,
)

__all__ = [
    "ScriptedModel",
    "hss",
    "hss_agentic",
    "hss_blind",
    "hss_demo",
    "hss_image",
    "hss_input",
    "hss_metrics",
    "hss_oracle",
    "hss_video",
    "oracle_answer",
    "rubric_judge",
]
