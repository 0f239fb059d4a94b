"""Results in the Hugging Face hub's eval-results format, from the report's runs.

A model repo carries its scores as `.eval_results/*.yaml`, a list of `{dataset: {id,
task_id, revision}, value, date, notes}`; the hub gathers them into the leaderboards of
the benchmark's dataset repo, one per task id that repo's own eval.yaml declares
(docs/publishing.md shows HSS's and a built split's). Here each run gives one entry per
leaderboard it covers in full: `<name>` (all of the dataset's tasks), `<name>_image` and
`<name>_video` (all of its images, all of its clips), `<name>` being the dataset's own
(`hss` for ScaleAI/HSS, `LogInfo.benchmark`), counted against the size of the dataset the
log ran on (recorded at load), valued on the scale of the paper's Table 1 (percent), from
the row the report's tables print. A run that cannot be published (not on a hub dataset, a
control, unfinished, on part of its dataset) gets one line saying why. Pure: the command
writes the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from hss_inspect.core.errors import InputError
from hss_inspect.core.settings import DEFAULT_EPOCHS, HUMAN_CONDITION
from hss_inspect.data.demo import DEMO_DATASET
from hss_inspect.report.log_header import LogInfo
from hss_inspect.report.tables import Run

RESULTS_FOLDER = ".eval_results"
# Each leaderboard's suffix to the dataset's name and the media type of the tasks it takes
# (None: all).
LEADERBOARDS: tuple[tuple[str, str | None], ...] = (
    ("", None),
    ("_image", "image"),
    ("_video", "video"),
)


def leaderboards(benchmark: str) -> list[tuple[str, str | None]]:
    """A dataset's leaderboards: task id and media type, e.g. `hss`, `hss_image`."""
    return [(benchmark + suffix, media) for suffix, media in LEADERBOARDS]


def results_file(benchmark: str) -> str:
    return f"{RESULTS_FOLDER}/{benchmark}.yaml"


# Conditions whose runs are not a model's score on HSS: the question without its media,
# the reference answers as answers, people's answers.
NOT_SCORES = {
    "blind": "the blind control (the question without its media)",
    "oracle": "the oracle condition (the reference answers graded, no model)",
    HUMAN_CONDITION: "people's answers graded by the judge",
}


@dataclass(frozen=True)
class HubResults:
    """The files to write (a path under the output folder -> its entries) and one line per
    run that cannot be published."""

    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    published: list[LogInfo] = field(default_factory=list)  # the runs the files hold


def hub_results(
    infos: Sequence[LogInfo], runs: Sequence[Run], rows: Sequence[dict[str, Any]]
) -> HubResults:
    """`runs` (one per log) with their leaderboard `rows`, as each model's results file."""
    by_log = {info.log: info for info in infos}
    found = HubResults()
    seen: dict[tuple[str, str], str] = {}  # (file, entry) -> the log that gave it
    for run, row in zip(runs, rows, strict=True):
        info = by_log[run.log]
        why = why_not_published(info, row) or why_not_covered(info, run)
        if why:
            found.refused.append(f"{run.log}: cannot be published: {why}")
            continue
        path = model_folder(info.model) + "/" + results_file(info.benchmark)
        for entry in run_entries(info, run, row):
            key = (path, repr([entry["dataset"], entry["notes"]]))
            if key in seen:
                raise InputError(
                    f"{run.log} and {seen[key]}: two results of {info.model} on "
                    f"{entry['dataset']['task_id']} with the same settings; give one of them"
                )
            seen[key] = run.log
            found.files.setdefault(path, []).append(entry)
        found.published.append(info)
    return found


def model_folder(model: str) -> str:
    """The model's name without Inspect's provider (`vllm/Qwen/X` -> `Qwen/X`): for an
    open-weight model served by vLLM, SGLang or Transformers, its hub repo id."""
    name = model.split("/", 1)[-1]
    if ".." in PurePosixPath(name).parts:
        raise InputError(f"model {model!r}: its name cannot be a folder under --out")
    return name


def why_not_published(info: LogInfo, row: dict[str, Any]) -> str | None:
    if info.dataset == DEMO_DATASET:
        return "it ran on the demo set shipped in the package, a setup check, not HSS"
    if info.dataset_revision is None:
        return (
            f"it ran on a local copy ({info.dataset}), which the hub cannot tie to a "
            "commit of a dataset repo: run it on the hub's dataset (-T dataset=<hub id>)"
        )
    if info.condition in NOT_SCORES:
        return f"it is {NOT_SCORES[info.condition]}, not a model's score on HSS"
    if info.status != "success":
        return f"the run ended {info.status}: complete it with inspect eval-retry"
    if row["pass_at_1"] is None:
        return "no attempt was graded"
    return None


def covered(info: LogInfo, run: Run) -> list[tuple[str, str | None]]:
    """The leaderboards whose every task the run has: all of its dataset, all of the
    dataset's images, all of its clips (none when the log records no size)."""
    size = info.dataset_size
    if size is None:
        return []
    tasks: dict[str, set[str]] = {}
    for record in run.records:
        tasks.setdefault(record.media_type, set()).add(record.task_id)
    whole = {media: len(tasks.get(media, ())) == n for media, n in size.media.items()}
    return [
        (task_id, media)
        for task_id, media in leaderboards(info.benchmark)
        if (all(whole.values()) if media is None else whole[media] and size.media[media])
    ]


def why_not_covered(info: LogInfo, run: Run) -> str | None:
    if covered(info, run):
        return None
    size, name = info.dataset_size, info.benchmark
    if size is None:
        return (
            f"the log records no size of its dataset {info.dataset}: run it again with this "
            "version of hss-inspect, which records it"
        )
    tasks = {r.task_id for r in run.records}
    kinds = {"image": "images", "video": "clips"}
    wholes = [f"all of them ({name})"] + [
        f"all {size.media[media]} {kinds[media]} ({task_id})"
        for task_id, media in leaderboards(name)
        if media is not None and size.media[media]  # a dataset without clips has no such board
    ]
    return (
        f"it has {len(tasks)} of the {size.tasks} tasks of {info.dataset}; a leaderboard "
        f"takes {', '.join(wholes[:-1])} or {wholes[-1]}: run without --limit or filters"
    )


def run_entries(info: LogInfo, run: Run, row: dict[str, Any]) -> list[dict[str, Any]]:
    entries = []
    for task_id, media in covered(info, run):
        value = row["pass_at_1"] if media is None else row[media]
        if value is None:  # no task of that media type graded
            continue
        entries.append(
            {
                "dataset": {
                    "id": info.dataset,
                    "task_id": task_id,
                    "revision": info.dataset_revision,
                },
                "value": round(100 * value, 1),
                "date": info.created[:10],
                "notes": notes(info, row),
            }
        )
    return entries


def notes(info: LogInfo, row: dict[str, Any]) -> str:
    """The settings the value depends on: condition, effort, judge and attempts."""
    run = info.invocation
    epochs = (run.options.get("epochs") if run else None) or DEFAULT_EPOCHS
    effort = f"reasoning effort {info.reasoning_effort}; " if info.reasoning_effort else ""
    version = (
        f"; task version {run.full_version} of hss-inspect" if run and run.full_version else ""
    )
    return (
        f"condition {info.condition}; {effort}judge {row['judge']}; pass@1 over {epochs} "
        f"attempts per task{version}"
    )
