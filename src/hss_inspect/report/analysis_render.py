"""The analyses rendered as Markdown: a sweep (`sweep.Sweep`), the judges' agreement
(`agreement.judge_alignment`) and a paired comparison (`compare.compare_runs`); their JSON
is `render.json_report`."""

from __future__ import annotations

from typing import Any

from hss_inspect.core.markdown import table
from hss_inspect.data.fingerprints import CONSEQUENCE, ReleaseDiff
from hss_inspect.report.human import HumanFigures
from hss_inspect.report.numbers import percent, points, signed_percent, signed_points
from hss_inspect.report.releases import diff_summary
from hss_inspect.report.sweep import Sweep


def sweep_markdown(sweep: Sweep) -> str:
    header = ["model", "group", *sweep.levels, "Δ last − first"]
    body = [
        [
            row.model,
            row.group,
            *(percent(row.values[level]) for level in sweep.levels),
            signed_percent(row.delta),
        ]
        for row in sweep.rows
    ]
    title = "reasoning effort" if sweep.kind == "effort" else "frame budget"
    return f"## Sweep over {title} (pass@1, %)\n\n{table(header, body)}\n"


def agreement_markdown(alignment: dict[str, Any]) -> str:
    pairs = [
        [
            p["a"],
            p["b"],
            percent(p["criterion_agreement"]),
            _kappa(p["criterion_kappa"]),
            str(p["n_criteria"]),
            percent(p["item_agreement"]),
            _kappa(p["item_kappa"]),
            str(p["n_items"]),
        ]
        for p in alignment["pairs"]
    ]
    header = ["judge A", "judge B", "criterion agr. %", "criterion κ", "criteria"]
    header += ["item agr. %", "item κ", "items"]
    judges = alignment["judges"]
    scores = [
        [model, *(points(per_judge.get(j)) for j in judges)]
        for model, per_judge in sorted(alignment["model_scores"].items())
    ]
    lenient = [[j, signed_points(alignment["leniency"][j])] for j in judges]
    parts = [
        "## Judge agreement",
        "",
        table(header, pairs),
        "",
        "## pass@1 (%) by judge",
        "",
        table(["model", *judges], scores),
        "",
        "## Leniency (points above the mean of the other judges)",
        "",
        table(["judge", "leniency"], lenient),
    ]
    if alignment["correlations"]:
        corr = [
            [c["a"], c["b"], str(c["n_models"]), _kappa(c["spearman"]), _kappa(c["pearson"])]
            for c in alignment["correlations"]
        ]
        parts += ["", "## Correlation of per-model scores", ""]
        parts.append(table(["judge A", "judge B", "models", "Spearman ρ", "Pearson r"], corr))
    if alignment["self_preference"]:
        own = [
            [s["judge"], s["model"], signed_points(s["residual"])]
            for s in alignment["self_preference"]
        ]
        parts += ["", "## Same-vendor residuals (points, after leniency)", ""]
        parts.append(table(["judge", "model", "residual"], own))
    return "\n".join(parts) + "\n"


def _kappa(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def compare_markdown(result: dict[str, Any]) -> str:
    header = ["group", "tasks", "A %", "B %", "Δ B−A", "A only", "B only", "McNemar p"]

    def line(name: str, s: dict[str, Any]) -> list[str]:
        return [
            name,
            str(s["n_tasks"]),
            percent(s["a_pass"]),
            percent(s["b_pass"]),
            signed_percent(s["delta"]),
            str(s["a_only"]),
            str(s["b_only"]),
            f"{s['mcnemar_p']:.3g}",
        ]

    body = [line("all", result)]
    body += [line(name, s) for name, s in result["by_domain"].items()]
    body += [line(name, s) for name, s in result["by_subdomain"].items()]
    return (
        f"## Paired comparison, first attempts\n\nA: {result['a']} ({result['a_log']})  \n"
        f"B: {result['b']} ({result['b_log']})\n\n{table(header, body)}\n"
        + _left_out(result["unpaired_tasks"])
        + _changed(result.get("changed_tasks") or {})
    )


def _left_out(unpaired: int) -> str:
    """The shared tasks left out of the pairs (a first attempt not graded), if any."""
    return f"\n{unpaired} shared task(s) left out: first attempt not graded.\n" if unpaired else ""


def _changed(changed: dict[str, int]) -> str:
    """The shared tasks left out because the two releases differ there, by what it costs."""
    if not changed:
        return ""
    kinds = ", ".join(f"{n} to {kind}" for kind, n in changed.items())
    return (
        f"\n{sum(changed.values())} shared task(s) left out: they differ between the releases "
        f"the two runs read ({kinds}).\n"
    )


def with_percent(fraction: float | None) -> str:
    """A rate in a sentence, with its sign: `60.0%` (n/r: not reported)."""
    return "n/r" if fraction is None else f"{percent(fraction)}%"


def human_lines(log: str, figures: HumanFigures) -> list[str]:
    """A human study's figures: confidence, pass@1 sure and unsure, per annotator, time."""
    unsure = with_percent(figures.unsure_share)
    seconds = "n/r" if figures.median_seconds is None else f"{figures.median_seconds:.1f}"
    rows = [[a.annotator, str(a.answers), percent(a.pass_at_1)] for a in figures.annotators]
    return [
        f"## Human study ({log})",
        "",
        f"- answers: {figures.answers}; unsure: {unsure} of the answers that say how sure",
        f"- pass@1 where sure: {with_percent(figures.pass_sure)}; where unsure: "
        f"{with_percent(figures.pass_unsure)}",
        f"- median seconds from a task shown to its answer: {seconds}",
        "",
        table(["annotator", "answers", "pass@1 (%)"], rows),
    ]


def release_diff_markdown(diff: ReleaseDiff, old: str, new: str) -> str:
    """Two releases task by task: each task added, removed or changed, what differs, and
    what that costs the results measured on the older."""
    body = [
        [c.task_id, c.change.value, ", ".join(c.parts), CONSEQUENCE[c.change]] for c in diff.changed
    ]
    body += [[t, "added", "", "new: the model answers it"] for t in diff.added]
    body += [[t, "removed", "", "gone: left out of the results"] for t in diff.removed]
    unknown = (
        f"\nThe media of {len(diff.unknown_media)} shared task(s) could not be hashed on one "
        "side (offline, not in the cache): their media are not compared.\n"
        if diff.unknown_media
        else ""
    )
    listing = (
        f"\n{table(['task', 'change', 'differs', 'for existing results'], body)}\n" if body else ""
    )
    return (
        f"## Release diff\n\nOld: {old}  \nNew: {new}\n\n{diff_summary(diff)}; "
        f"{len(diff.unchanged)} unchanged.\n{listing}{unknown}"
    )
