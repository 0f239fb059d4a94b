"""The Inspect Evals register's entry for HSS (`register/hss/eval.yaml`), made from logs.

The register lists an eval kept in its own repository as one `eval.yaml`: a pointer to the
repository at a pinned commit, one task per entry, the task's human baseline, and an
`evaluation_report` of results (inspect_evals.metadata.ExternalEvalMetadata, which
tests/test_publish.py validates the entry with). Built here as plain data from the package's
metadata (src/hss_inspect/eval.yaml), the paper's human baseline and `register.results`, the
rows the report's tables print: one result per model, of the task `hss` under the standard
condition. Which runs make results, which are left out and what the notes say is decided
here; the command only reads logs, calls `register_entry` and writes.

An entry is of one dataset: HSS, or another dataset in its format (a split made with
`hss-inspect build`, run as `hss_inspect/hss -T dataset=<id>`). Its task is named by the
dataset's own name (`LogInfo.benchmark`), its samples are the dataset's size as the logs
recorded it, and HSS's description and human baseline belong to HSS's entry only. HSS's
task is the package's own `hss` in src/hss_inspect/task.py; a split's is a task file of
its own (`SplitTask`), which `register` writes for the user to commit, so that the
register's run form, `inspect eval <task_path>@<name>` from a clone, runs the split at the
commit its results read.
"""

from __future__ import annotations

import json
import keyword
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from hss_inspect.core.config import FULL_COMMIT, comparable_part, eval_metadata, release_commit
from hss_inspect.core.errors import InputError
from hss_inspect.core.settings import DEFAULT_DATASET
from hss_inspect.data.demo import DEMO_DATASET
from hss_inspect.data.rows import DatasetSize
from hss_inspect.report.log_header import LogInfo
from hss_inspect.report.paper import human_baseline
from hss_inspect.report.register import Result, command

TASK = "hss"
TASK_PATH = "src/hss_inspect/task.py"  # relative to the repository's root
COMMON_TITLE = "HSS"
PAPER_TITLE = "Humanity's Sixth Sense: Benchmarking Intuitive Visual Reasoning in Multimodal Models"
HUMAN_BASELINE_SOURCE = "https://arxiv.org/html/2610.08966#S3.SS1"  # Sec. 3.1, Table 1
RESULT_CONDITION = "standard"
METRIC = "pass_at_1"
INTERVAL = "pass_at_1_ci95"
_URL = re.compile(r"^https?://[^/\s]+/\S+$")


@dataclass(frozen=True)
class Source:
    """Where the register finds the eval: its repository at a pinned commit, and the commit
    the reported runs were made with (the same unless the pin has moved since)."""

    repository_url: str
    repository_commit: str
    report_commit: str
    maintainers: tuple[str, ...] = ()  # GitHub users; none: the register names the owner


def source(
    url: str, commit: str, report_commit: str | None = None, maintainers: Sequence[str] = ()
) -> Source:
    """The flags checked: an http(s) address of a repository and full commit ids."""
    if not _URL.match(url):
        raise InputError(
            f"--repository-url {url!r} is not the address of a repository; give it as "
            "https://github.com/OWNER/NAME"
        )
    for flag, value in (("--repository-commit", commit), ("--report-commit", report_commit)):
        if value is not None and not FULL_COMMIT.match(value):
            raise InputError(
                f"{flag} {value!r} is not a full commit id; give the 40 hex digits that "
                "`git rev-parse HEAD` prints in the repository"
            )
    return Source(url, commit, report_commit or commit, tuple(maintainers))


@dataclass(frozen=True)
class Selection:
    """The runs the entry reports (one per model), and a line for each run left out."""

    results: list[Result]
    left_out: list[str] = field(default_factory=list)


def select(found: Sequence[Result], package_version: str) -> Selection:
    """One finished standard-condition run per model. A run of another comparability
    version N is refused (its results are not this eval's); a run of another condition,
    unfinished or never graded is left out with a line saying why."""
    chosen: dict[str, list[Result]] = {}
    left_out = []
    for r in found:
        why = why_left_out(r)
        if why:
            left_out.append(f"{r.info.log}: {why}; left out")
        else:
            refuse_other_version(r, package_version)
            chosen.setdefault(r.info.model, []).append(r)
    names = {r.info.benchmark: r.info.log for runs in chosen.values() for r in runs}
    if len(names) > 1:
        ran = ", ".join(f"{log} ran on {name}" for name, log in names.items())
        raise InputError(f"an entry reports one dataset, but {ran}: give the logs of one dataset")
    for model, runs in chosen.items():
        if len(runs) > 1:
            logs = ", ".join(r.info.log for r in runs)
            raise InputError(
                f"{model}: {len(runs)} logs give a result of {runs[0].info.benchmark} "
                f"({logs}); the register reports one result per model: give one of them"
            )
    return Selection([runs[0] for runs in chosen.values()], left_out)


def refuse_other_version(r: Result, package_version: str) -> None:
    ran = run_version(r)
    if comparable_part(ran) != comparable_part(package_version):
        raise InputError(
            f"{r.info.log}: task version {ran}, not comparable with this package's "
            f"{package_version}: run it again with this version, or leave the log out"
        )


def run_version(r: Result) -> str:
    """The task version a log was run at: `N-X` where recorded, else Inspect's N."""
    run = r.info.invocation
    return "unknown" if run is None else run.full_version or run.task_version


def why_left_out(r: Result) -> str | None:
    if r.info.condition != RESULT_CONDITION:
        return (
            f"condition {r.info.condition}: the register's results are of "
            f"{r.info.benchmark} under the {RESULT_CONDITION} condition"
        )
    if r.info.status != "success":
        return f"the run ended {r.info.status}: complete it with inspect eval-retry"
    if r.pass_at_1 is None:
        return "no attempt was graded"
    return None


# ---- a split's task file -------------------------------------------------------------------

# The last line of a task file's docstring: a file holding it was written by `register`
# and may be written again.
WRITTEN_BY = "Written by `hss-inspect register`; written again by it when the entry is."
# Names the task file defines besides the task: a task may not take one of them.
_FILE_NAMES = {"Any", "Task", "task", "hss"}


@dataclass(frozen=True)
class SplitTask:
    """A split's task as the register runs it: the file at `path` (from the repository's
    root) defining the @task `name`, which is the package's `hss` on `dataset` at the commit
    `revision`."""

    name: str
    dataset: str
    revision: str
    path: str

    @property
    def run_form(self) -> str:
        return f"inspect eval {self.path}@{self.name}"

    def text(self) -> str:
        """The file's Python source: one @task, `hss` with the split and its commit as
        defaults (any other option of `hss` is still given with -T)."""
        return _TASK_FILE.format(
            name=self.name,
            dataset=self.dataset,
            revision=self.revision,
            run_form=self.run_form,
            written_by=WRITTEN_BY,
            dataset_literal=json.dumps(self.dataset),
            revision_literal=json.dumps(self.revision),
        )


_TASK_FILE = '''"""{dataset}: tasks in the format of Humanity's Sixth Sense (HSS), at
commit {revision}, run with hss-inspect's task hss as the Inspect Evals register's
entry {name} runs them:

    {run_form} --model <model> --model-role grader=<judge>

{written_by}
"""

from typing import Any

from inspect_ai import Task, task

from hss_inspect.task import hss

DATASET = {dataset_literal}
# the commit of DATASET the register's results read
REVISION = {revision_literal}


@task
def {name}(**kwargs: Any) -> Task:
    """The split at the commit its results read; -T takes any option of hss."""
    return hss(**{{"dataset": DATASET, "revision": REVISION, **kwargs}})
'''


def task_file_path(value: str) -> str:
    """`--task-file` as the entry's `task_path`: a .py file inside the repository, given
    from its root (where the command is run)."""
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or path.suffix != ".py":
        raise InputError(
            f"--task-file {value!r}: give the .py file's path from the repository's root, "
            "e.g. evals/my_split.py (the entry's task_path; run the command from the root)"
        )
    return str(path)


def split_task(found: Sequence[Result], task_file: str | None) -> SplitTask | None:
    """The task file of a split's entry (None for HSS, whose task is the package's own):
    the dataset the runs read, at the one commit they read."""
    info = found[0].info
    if info.benchmark == TASK:
        if task_file is not None:
            raise InputError(
                f"--task-file {task_file}: the logs ran on {info.dataset or DEFAULT_DATASET}, "
                f"whose entry runs the package's own task {TASK} ({TASK_PATH}); leave "
                "--task-file out"
            )
        return None
    name = info.benchmark
    if task_file is None:
        raise InputError(
            f"the logs ran on {info.dataset}, whose entry needs a task file of its own: give "
            f"--task-file PATH (from the repository's root, e.g. evals/{name}.py), which "
            "this command writes for you to commit"
        )
    if not name.isidentifier() or keyword.iskeyword(name) or name in _FILE_NAMES:
        raise InputError(
            f"{info.dataset}: its name {name} cannot name a Python function, which the "
            "register's task must be: push the split to a repo whose name starts with a letter"
        )
    return SplitTask(name, str(info.dataset), the_commit_read(found), task_file_path(task_file))


def the_commit_read(found: Sequence[Result]) -> str:
    """The one commit of the split the runs read: the commit its task file pins."""
    local = [r.info for r in found if r.info.dataset_revision is None]
    if local:
        raise InputError(
            f"{local[0].log}: run on a local copy ({local[0].dataset}), which a clone of the "
            "repository cannot read: run it on the pushed split (-T dataset=<hub id> "
            "-T revision=<commit>)"
        )
    commits: dict[str, str] = {}
    for r in found:
        commits.setdefault(str(r.info.dataset_revision), r.info.log)
    if len(commits) > 1:
        read = ", ".join(f"{commit} ({log})" for commit, log in commits.items())
        raise InputError(
            f"the runs read {len(commits)} commits of {found[0].info.dataset}: {read}; "
            "an entry's task runs one: give the logs of one commit"
        )
    return next(iter(commits))


# ---- the entry ---------------------------------------------------------------------------


def register_entry(
    found: Sequence[Result],
    where: Source,
    package_version: str,
    gated: str | None = None,
    split: SplitTask | None = None,
) -> dict[str, Any]:
    """The entry (for `register/<name>/eval.yaml`) reporting `found`, the runs `select`
    kept (all of one dataset); `gated` (`auto`, `manual`): how the dataset's hub repo
    grants access; `split`: the task file of a dataset other than HSS (`split_task`)."""
    meta = eval_metadata()
    info = found[0].info
    if split is None and info.benchmark != TASK:
        raise ValueError("the entry of a split needs its task file (split_task)")
    state = asset_state(info) if split is None else split_state(split)
    assets = [dict(a) for a in meta["external_assets"]] if split is None else [split_asset(split)]
    if gated:
        assets = [{**asset, "gated": gated} for asset in assets]
    return {
        "full_title": meta["title"] if split is None else f"{info.dataset}: tasks in HSS's format",
        "common_title": COMMON_TITLE if split is None else split.name,
        "paper_title": PAPER_TITLE,
        "description": description(meta) if split is None else split_description(info, split),
        "arxiv": meta["arxiv"],
        "contributors": list(meta["contributors"]),
        "tags": list(meta["tags"]),
        "metadata": {
            "requires": dict(meta["metadata"]["requires"]),
            "extras": {**meta["metadata"]["extras"], "external_assets": assets},
        },
        "tasks": [task_entry(info, state, split)],
        "source": {
            "repository_url": where.repository_url,
            "repository_commit": where.repository_commit,
            **({"maintainers": list(where.maintainers)} if where.maintainers else {}),
        },
        "evaluation_report": evaluation_report(found, where, package_version, state),
    }


def description(meta: Mapping[str, Any]) -> str:
    """The package's description on one line (the register renders it unwrapped), then the
    package's other tasks, which the register lists under this one entry."""
    others = [t["name"] for t in meta["tasks"] if t["name"] != TASK]
    return (
        " ".join(str(meta["description"]).split())
        + f" This entry is the task {TASK}; the package also has its presets and companion "
        + "tasks "
        + ", ".join(others)
        + " (the repository's README describes each)."
    )


def split_description(info: LogInfo, split: SplitTask) -> str:
    """Another dataset in HSS's format: what it holds, and how it is run."""
    size = known_size(info)
    return (
        f"{size.tasks} tasks ({size.media['image']} images, {size.media['video']} clips) in "
        "the format of Humanity's Sixth Sense (HSS, arXiv 2610.08966): free-form questions "
        "about images and video clips, each graded by an LLM judge against atomic rubric "
        "criteria; an attempt passes only when every criterion is met. Run with "
        f"{split.run_form} (the package's task hss on the dataset {split.dataset} at commit "
        f"{split.revision}); pass@1 over 3 attempts with a 95% bootstrap interval."
    )


def split_asset(split: SplitTask) -> dict[str, Any]:
    """The dataset of a split as the register's external asset: pinned by its task file."""
    return {
        "type": "huggingface",
        "source": split.dataset,
        "fetch_method": "hf_hub_download",
        "state": "pinned",
        "comment": split_state(split),
    }


def split_state(split: SplitTask) -> str:
    return (
        f"The dataset {split.dataset} is pinned: {split.run_form} reads commit "
        f"{split.revision} (the task hss with -T dataset={split.dataset} "
        f"-T revision={split.revision}); every log records the commit it read."
    )


def known_size(info: LogInfo) -> DatasetSize:
    if info.dataset_size is None:
        raise InputError(
            f"{info.log}: the log records no size of its dataset {info.dataset}: run it "
            "again with this version of hss-inspect, which records it"
        )
    return info.dataset_size


def task_entry(info: LogInfo, state: str, split: SplitTask | None) -> dict[str, Any]:
    baseline = {
        "metric": METRIC,
        "score": human_baseline().values[METRIC],
        "source": HUMAN_BASELINE_SOURCE,
    }
    return {
        "name": TASK if split is None else split.name,
        "task_path": TASK_PATH if split is None else split.path,
        "dataset_samples": known_size(info).tasks,
        **({"human_baseline": baseline} if split is None else {}),
        "comment": state,
    }


def asset_state(info: LogInfo) -> str:
    """Whether HSS's dataset is pinned: by the release commit the package names."""
    pinned = release_commit()
    if pinned:
        return (
            f"The dataset {DEFAULT_DATASET} is pinned: runs read commit {pinned} unless "
            "given -T revision=; every log records the commit it read."
        )
    return (
        f"The dataset {DEFAULT_DATASET} floats: runs read its branch main unless given "
        "-T revision=<commit>; every log records the commit it read (each result names it)."
    )


def evaluation_report(
    found: Sequence[Result], where: Source, package_version: str, state: str
) -> dict[str, Any]:
    versions = sorted({run_version(r) for r in found})
    commands = {template(r) for r in found}
    return {
        "commit": where.report_commit,
        "version": versions[0] if len(versions) == 1 else package_version,
        **({"command": commands.pop()} if len(commands) == 1 else {}),
        "notes": report_notes(found, versions, state),
        "results": [result_entry(r) for r in found],
    }


def template(r: Result) -> str:
    """The result's command with its model as `<model>`: one line for a table of models."""
    return command(r.info).replace(f"--model {shlex.quote(r.info.model)}", "--model <model>", 1)


def result_entry(r: Result) -> dict[str, Any]:
    """A row of the register's results table, with what the register leaves to each eval
    (extra fields): the settings, the judge, the dataset commit read and the command."""
    info, run = r.info, r.info.invocation
    interval = [] if r.ci95 is None else [{"key": INTERVAL, "value": round(r.ci95, 1)}]
    entry = {
        "model": info.model,
        "task": info.benchmark,
        "metrics": [{"key": METRIC, "value": round(r.pass_at_1 or 0.0, 1)}, *interval],
        "provider": info.model.split("/")[0],
        "date": info.created[:10],
        "reasoning_effort": info.reasoning_effort,
        "judge": r.row["judge"],
        "tasks": int(r.row["n_tasks"]),
        "attempts": int(r.row["attempts"]),
        "dataset": info.dataset,
        "dataset_revision": info.dataset_revision,
        "command": command(info),
        "log": Path(info.log).name,
        "task_version": run.full_version if run else None,
    }
    return {name: value for name, value in entry.items() if value is not None}


def report_notes(found: Sequence[Result], versions: Sequence[str], state: str) -> list[str]:
    notes = [
        f"Values in percent, on the scale of the paper's Table 1: {METRIC} is pass@1 (the "
        "mean over tasks of the share of attempts passing every rubric criterion) and "
        f"{INTERVAL} the half-width of its 95% bootstrap interval over tasks.",
        state,
    ]
    if len(versions) > 1:
        notes.append(
            f"The runs were made at task versions {', '.join(versions)} (comparable: one N)."
        )
    return notes + [note for r in found for note in result_notes(r)]


def result_notes(r: Result) -> list[str]:
    """What a reader of a result must know: a run not on the benchmark, not pinned, or not
    on every task."""
    info, notes = r.info, []
    if info.dataset == DEMO_DATASET:
        notes.append(
            f"{info.model}: run on the demo set shipped in the package, a check of the "
            "installation, not a result on HSS"
        )
    elif info.dataset_revision is None:
        notes.append(
            f"{info.model}: run on a local copy ({info.dataset}), which records no commit of "
            "a hub dataset"
        )
    elif not info.dataset_pinned:
        notes.append(
            f"{info.model}: run with -T revision={info.requested_revision} (not pinned), "
            f"which resolved to commit {info.dataset_revision}"
        )
    size = known_size(info)
    if r.row["n_tasks"] != size.tasks:
        notes.append(f"{info.model}: {r.row['n_tasks']} of the dataset's {size.tasks} tasks")
    return notes
