"""The functions the HSS task YAMLs name (`!function utils.NAME`, lmms-eval's way): each
hands over to `hss_inspect.lmms`, so the protocol is the Inspect task's code."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from hss_inspect.grading.judge import judge_prompts
from hss_inspect.lmms import judge, results, turn
from hss_inspect.lmms.docs import task_docs
from hss_inspect.lmms.options import run_options


def _process_docs(preset: dict[str, Any]) -> Callable[[Any], Any]:
    """The release's rows in place of the YAML's one-line seed (lmms-eval always loads a
    `datasets` dataset first; the rows come from the package's own loader)."""

    def process_docs(seed: Any) -> Any:
        import datasets

        return datasets.Dataset.from_list(task_docs(run_options(preset)))

    return process_docs


process_docs_hss = _process_docs({})
process_docs_image = _process_docs({"media": "image"})
process_docs_video = _process_docs({"media": "video"})
process_docs_demo = _process_docs({"dataset": "demo"})


# lmms_eval_specific_kwargs: the YAML's entry for the run's model (how it writes images)
def doc_to_messages(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> Any:
    return turn.chat_messages(doc, run_options({}), lmms_eval_specific_kwargs)


def doc_to_visual(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> Any:
    return turn.visuals(doc, run_options({}), lmms_eval_specific_kwargs)


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    return turn.text(doc, run_options({}), lmms_eval_specific_kwargs)


def doc_to_target(doc: dict[str, Any]) -> str:
    return str(doc["golden_response"])


@cache
def _judge_reply() -> judge.Reply:
    return judge.judge_server_reply()


def process_results(doc: dict[str, Any], outputs: Sequence[Any]) -> dict[str, Any]:
    """Every attempt graded by the judge, reduced to the task's outcome; each metric of
    the YAML reads the same record."""
    retries = run_options({}).values["judge_retries"]
    prompts, reply = judge_prompts(), _judge_reply()
    record = results.task_outcome(
        doc,
        results.answers_of(outputs),
        lambda answer: judge.grade(doc, answer, reply, prompts, retries),
    )
    return dict.fromkeys(results.METRIC_KEYS, record)


class AllAttempts:
    """lmms-eval's filter that keeps every repeat (its default keeps the first only)."""

    def apply(self, resps: Any, docs: Any) -> Any:
        return resps


# One aggregation per metric of the YAML: `aggregate_pass_at_1`, `aggregate_image`, ...
for _key in results.METRIC_KEYS:
    globals()[f"aggregate_{_key}"] = results.metric(_key)
