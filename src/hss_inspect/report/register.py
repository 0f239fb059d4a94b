"""The Inspect Evals register's "Evaluation Report" section, made from the user's logs.

The register asks each eval's README for a section of that name in three parts
(Implementation Details, Results, Reproducibility Information): the results of named
models next to the paper's, the deviations, and what it takes to run them again (samples,
dates, versions, the exact `inspect eval` commands). Here every figure comes from the logs
given and the paper's published rows (`task_configs/paper_models.yaml`); no real-model
result ships with the package. Pure: rows from `tables.leaderboard_row`, headers from
`log_header.LogInfo`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hss_inspect.core.command_line import inspect_eval_command, survives_cli
from hss_inspect.core.errors import InputError
from hss_inspect.core.markdown import table
from hss_inspect.core.names import unknown_text
from hss_inspect.providers.paper_models import (
    deployment,
    generate_settings,
    judge_settings,
    judges,
    request_settings,
)
from hss_inspect.report.bill import shared_names
from hss_inspect.report.log_header import Invocation, LogInfo
from hss_inspect.report.numbers import MISSING, money, points, signed_points, times
from hss_inspect.report.paper import PublishedRow, table1_row

INVALID_SHARE = 0.10  # the register's checklist: at most 10 % invalid samples
# Plain text, not a link: the section is pasted into a README whose headings may change.
KNOWN_DIFFERENCES = 'the section "Known differences from the reference harness" of this README'
PAPER = "the paper's Table 1 (arXiv 2610.08966)"


@dataclass(frozen=True)
class Result:
    """One run (a log and its first rubric scorer) beside the paper's row for its model."""

    info: LogInfo
    row: dict[str, Any]  # tables.leaderboard_row (rates as fractions)
    paper_name: str  # the model's name in Table 5 (its own name unless mapped)
    paper: PublishedRow | None
    why_not_compared: str | None

    @property
    def pass_at_1(self) -> float | None:
        return None if self.row["pass_at_1"] is None else 100 * self.row["pass_at_1"]

    @property
    def ci95(self) -> float | None:
        return None if self.row["ci95"] is None else 100 * self.row["ci95"]

    @property
    def delta(self) -> float | None:
        if self.paper is None or self.pass_at_1 is None:
            return None
        published = self.paper.values["pass_at_1"]
        return None if published is None else self.pass_at_1 - published

    @property
    def covered(self) -> bool | None:
        """Whether the paper's 95 % interval holds this run's pass@1."""
        width = None if self.paper is None else self.paper.values["ci95"]
        return None if self.delta is None or width is None else abs(self.delta) <= width

    @property
    def invalid(self) -> int:
        return int(self.row["grading_failures"]) + int(self.row["model_errors"])


def check_paper_names(infos: Sequence[LogInfo], paper_names: Mapping[str, str]) -> None:
    """Every `--paper-model MODEL=NAME` pairs a model of these logs with a Table 5 name (a
    pair that matched nothing would be dropped unseen)."""
    models = sorted({info.model for info in infos})
    for model, name in paper_names.items():
        if model not in models:
            listed = "the logs hold " + ", ".join(models)
            raise InputError(unknown_text(model, "a model of these logs", models, listed))
        deployment(name)


def results(
    infos: Sequence[LogInfo], rows: Sequence[dict[str, Any]], paper_names: Mapping[str, str] = {}
) -> list[Result]:
    """Each row with its log's header and the paper's row for the model, where Table 1 has
    one at the same effort and condition; `paper_names` maps a log's model to its Table 5
    name when the two differ (a proxy, a dated snapshot)."""
    check_paper_names(infos, paper_names)
    by_log = {info.log: info for info in infos}
    found = []
    for row in rows:
        info = by_log[row["log"]]
        name = paper_names.get(info.model, info.model)
        found.append(Result(info, row, name, *paper_row(info, name)))
    return found


def paper_row(info: LogInfo, name: str) -> tuple[PublishedRow | None, str | None]:
    """Table 1's row for the run, or why it is not compared: an unfinished run, a model the
    table lacks, or an effort other than the table's (a run that recorded none ran at the
    provider's default, which is not the table's effort either)."""
    if info.status != "success":
        return None, f"the run ended {info.status}: complete it with inspect eval-retry"
    published = table1_row(name, info.condition)
    if published is None:
        return None, "not in Table 1"
    effort = deployment(name).effort
    if info.reasoning_effort != effort:
        ran = info.reasoning_effort or "the provider's default effort"
        return None, f"ran at {ran}; Table 1 is at {effort}"
    return published, None


# ---- the section ----------------------------------------------------------------------


def register_markdown(found: Sequence[Result], cost: Mapping[str, Any] | None = None) -> str:
    """The section; `cost` is `bill.bill_summary` of the runs' calls (None: left out)."""
    parts = [
        "## Evaluation Report",
        f"Made by `hss-inspect report --format register` from {len(found)} run(s) in the "
        "logs named under Reproducibility Information. hss-inspect ships no results of real "
        "models: every figure below is from these logs, every paper figure from " + PAPER + ". "
        "The register's own entry (`register/hss/eval.yaml`), with the same runs' pass@1 as "
        "its `evaluation_report`, is written by `hss-inspect register`.",
        "### Implementation Details",
        "\n".join(implementation_details(found)),
        "### Results",
        results_table(found),
        f"_Reference: {PAPER}: pass@1 over 3 attempts, ± its 95 % bootstrap half-width; Δ in "
        "points; \"within\": the paper's interval holds this run's pass@1._",
        "\n\n".join(analysis(found)),
        "### Reproducibility Information",
        "\n".join(reproducibility(found)),
        "```bash\n" + "\n".join(dict.fromkeys(command(r.info) for r in found)) + "\n```",
        *([] if cost is None else cost_lines(cost, [r.info.log for r in found])),
    ]
    return "\n\n".join(parts) + "\n"


def cost_lines(cost: Mapping[str, Any], logs: Sequence[str]) -> list[str]:
    """What each run cost: the model's calls, the judge's, other roles' (the failure-cause
    labeller's), the total, and what caching off would have cost; where the prices came
    from, and which are missing."""
    runs = [run for run in cost["runs"] if run["log"] in logs]
    if not runs:
        return ["Cost: the logs record no model usage."]
    header = ("Run", "Model", "Judge", "Other roles", "Total", "Caching off", "Bill / off")
    body = [
        [
            run["name"],
            _part(run["model"]),
            _part(run["judge"]),
            _part(run["others"]),
            money(run["dollars"]),
            money(run["caching_off"]),
            times(run["ratio"]),
        ]
        for run in runs
    ]
    parties = [p for p in cost["parties"] if p["log"] in logs]
    shared = shared_names(runs)
    notes = [f"runs: {', '.join(shared)}"] if shared else []
    sources = [f"{p['model']}: {_source(p['price_source'])}" for p in parties if p["price_source"]]
    notes += [f"prices: {', '.join(dict.fromkeys(sources))}"] if sources else []
    notes += [m for m in dict.fromkeys(p["missing"] for p in parties) if m]
    return [
        "What these runs cost, in dollars, from the tokens Inspect recorded (caching off: "
        "every input token at the plain input price):",
        table(header, body),
        *([f"_{'; '.join(notes)}._"] if notes else []),
    ]


def _source(source: str) -> str:
    """A price file by its name (the section is pasted elsewhere), other sources as said."""
    return Path(source).name


def _part(part: Mapping[str, Any] | None) -> str:
    return "no calls" if part is None else money(part["dollars"])


def implementation_details(found: Sequence[Result]) -> list[str]:
    lines = [
        f"- Deviations from the paper's harness and known limitations: {KNOWN_DIFFERENCES}.",
    ]
    for r in found:
        for difference in settings_differences(r.info, r.paper_name):
            lines.append(f"- {label(r.info)}: {difference}")
        share = r.invalid / r.row["attempts"] if r.row["attempts"] else 0.0
        if share > INVALID_SHARE:
            lines.append(
                f"- {label(r.info)}: {r.invalid} of {r.row['attempts']} attempts invalid "
                f"(grading failures and model errors), over the register's "
                f"{INVALID_SHARE:.0%}"
            )
    return list(dict.fromkeys(lines))


def label(info: LogInfo) -> str:
    return info.model + ("" if info.condition == "standard" else f" [{info.condition}]")


def settings_differences(info: LogInfo, paper_name: str) -> list[str]:
    """Where a run's condition, generate options, epochs or judge differ from the paper's
    (the generate options only for a model of the paper, `paper_name` in Table 5)."""
    run = info.invocation
    differences = (
        [f"condition {info.condition}"] if info.condition not in ("standard", "blind") else []
    )
    if run is None:
        return differences
    paper_epochs = request_settings()["epochs"]
    if run.options.get("epochs") != paper_epochs:
        differences.append(f"epochs {run.options.get('epochs')} (paper: {paper_epochs})")
    try:
        paper = generate_settings(deployment(paper_name))
    except ValueError:
        paper = {}
    differences += _differing("", run.generate, paper)
    judge = run.roles.get("grader", {})
    differences += _differing("judge ", judge, judge_settings(judges()[0]))
    return differences


def _differing(prefix: str, ran: Mapping[str, Any], paper: Mapping[str, Any]) -> list[str]:
    return [
        f"{prefix}{name} {ran.get(name, 'unset')} (paper: {value})"
        for name, value in paper.items()
        if ran.get(name) != value
    ]


def results_table(found: Sequence[Result]) -> str:
    header = (
        "Model",
        "Effort",
        "Condition",
        "pass@1",
        "Paper pass@1",
        "Δ",
        "Within",
        "Tasks",
        "Invalid attempts",
    )
    return table(header, [_result_cells(r) for r in found])


def _result_cells(r: Result) -> list[str]:
    paper = r.paper.values if r.paper else {}
    published = _interval(paper.get("pass_at_1"), paper.get("ci95")) if r.paper else None
    within = MISSING if r.covered is None else ("yes" if r.covered else "no")
    return [
        r.info.model,
        r.info.reasoning_effort or MISSING,
        r.info.condition,
        _interval(r.pass_at_1, r.ci95),
        published or r.why_not_compared or MISSING,
        signed_points(r.delta),
        within,
        _of_dataset(r),
        f"{r.invalid}/{r.row['attempts']}",
    ]


def _interval(value: float | None, half_width: float | None) -> str:
    if value is None:
        return MISSING
    return points(value) + ("" if half_width is None else f" ± {points(half_width)}")


def analysis(found: Sequence[Result]) -> list[str]:
    compared = [r for r in found if r.delta is not None]
    lines = []
    if compared:
        within = sum(bool(r.covered) for r in compared)
        widest = max(compared, key=lambda r: abs(r.delta or 0.0))
        lines.append(
            f"{within} of the {len(compared)} run(s) compared with the paper lie within its 95 % "
            f"interval; the largest difference is {signed_points(widest.delta)} points "
            f"({widest.info.model})."
        )
    else:
        lines.append(
            "No run here is of a model of Table 1 at its Table 5 effort, so no comparison with "
            "the paper is possible (`--paper-model MODEL=NAME` names a log's model that is one "
            "of the paper's under another name)."
        )
    models = {r.info.model for r in found}
    if len(models) < 2:
        lines.append(
            f"The register asks for results on at least two models; these logs hold {len(models)}."
        )
    return lines


def reproducibility(found: Sequence[Result]) -> list[str]:
    runs = [r.info.invocation for r in found if r.info.invocation is not None]
    lines = list(dict.fromkeys(f"- Samples: {_samples(r)}" for r in found))
    lines += [
        f"- Run dates: {_dates(runs)}",
        f"- Versions: {_versions(runs)}",
        f"- Dataset: {_datasets(found)}",
        f"- Judge: {_judges(runs)}",
        f"- Models: {', '.join(dict.fromkeys(f'`{r.info.model}`' for r in found))}",
        f"- Tokens: {_tokens(runs)}",
        "- Parameters: the paper's settings for each model (Table 5, App. C.1) except where "
        "Implementation Details lists a difference",
        f"- Logs: {', '.join(f'`{Path(r.info.log).name}`' for r in found)}",
        "- Commands:",
    ]
    return lines + [f"  - {note}" for r in runs for note in unwritable_args(r)]


def unwritable_args(run: Invocation) -> list[str]:
    """-T/-M values the command line cannot carry as they were (a comma in a string)."""
    return [
        f"`{option} {name}=...` of `{run.task}` holds a value `inspect eval` would not read "
        f"back as it was (a comma splits it into a list): give it in a --{kind}-config file"
        for option, kind, values in (("-T", "task", run.task_args), ("-M", "model", run.model_args))
        for name, value in values.items()
        if not survives_cli(value)
    ]


def _samples(r: Result) -> str:
    run = r.info.invocation
    epochs = run.options.get("epochs") if run else None
    dataset = f" of `{run.dataset}`" if run and run.dataset else ""
    attempts = f" x {epochs} epochs = {r.row['attempts']} attempts" if epochs else ""
    return (
        f"{label(r.info)}: {r.row['n_tasks']} tasks{dataset}{attempts} "
        f"(the dataset has {_dataset_tasks(r.info)} tasks)"
    )


def _dataset_tasks(info: LogInfo) -> str:
    """The whole dataset's tasks, as the log recorded them at load."""
    return MISSING if info.dataset_size is None else str(info.dataset_size.tasks)


def _of_dataset(r: Result) -> str:
    """The run's tasks, of its dataset's where the log records its size."""
    n = str(r.row["n_tasks"])
    return n if r.info.dataset_size is None else f"{n} of {r.info.dataset_size.tasks}"


def _dates(runs: Sequence[Invocation]) -> str:
    stamps = sorted([r.created for r in runs] + [r.completed for r in runs if r.completed])
    if not stamps:
        return MISSING
    first, last = (datetime.fromisoformat(s) for s in (stamps[0], stamps[-1]))
    span = first.date().isoformat()
    if last.date() != first.date():
        span += f" to {last.date().isoformat()}"
    return f"{span} ({last.strftime('%B %Y')})"


def _versions(runs: Sequence[Invocation]) -> str:
    versions = dict.fromkeys(
        f"eval version {r.task_version}" + (f" ({r.full_version})" if r.full_version else "")
        for r in runs
    )
    packages = dict.fromkeys(f"{name} {v}" for r in runs for name, v in r.packages.items())
    return ", ".join([*versions, *packages]) or MISSING


def _datasets(found: Sequence[Result]) -> str:
    seen = []
    for r in found:
        run = r.info.invocation
        name = (run.dataset if run else None) or "the dataset"
        commit = r.info.dataset_revision
        seen.append(f"`{name}` @ `{commit}`" if commit else f"`{name}` (no commit recorded)")
    return ", ".join(dict.fromkeys(seen))


def _judges(runs: Sequence[Invocation]) -> str:
    judged = []
    for r in runs:
        role = dict(r.roles.get("grader", {}))
        model = role.pop("model", "unknown")
        settings = ", ".join(f"{k} {v}" for k, v in role.items())
        prompt = (
            f", judge prompt sha256 {r.judge_prompt_sha256[:12]}" if r.judge_prompt_sha256 else ""
        )
        judged.append(f"`{model}`" + (f" ({settings})" if settings else "") + prompt)
    return "; ".join(dict.fromkeys(judged)) or MISSING


def _tokens(runs: Sequence[Invocation]) -> str:
    counts = [r.total_tokens for r in runs]
    if not runs or None in counts:
        return MISSING
    return f"{sum(c or 0 for c in counts):,} (models and judge)"


def command(info: LogInfo) -> str:
    """The `inspect eval` command that runs the log's eval again."""
    run = info.invocation
    if run is None:
        return f"# {info.log}: the log records too little to rebuild its command"
    return inspect_eval_command(
        run.task,
        info.model,
        run.generate,
        run.task_args,
        run.roles,
        list(run.options.items()),
        run.model_args,
    )
