"""The failure tables as Markdown (the `hss-inspect failures` command's output)."""

from __future__ import annotations

from typing import Any

from hss_inspect.core.markdown import table
from hss_inspect.grading.causes import FAMILIES, NO_ANSWER_FAMILY, Taxonomy
from hss_inspect.grading.labeler import UNLABELLED
from hss_inspect.report.numbers import percent, signed_percent


def _counts_line(shares: dict[str, Any]) -> str:
    return (
        f"{shares['failures']} failed first attempts: {shares['labelled']} labelled, "
        f"{shares['unlabelled']} unlabelled (unreadable labeller replies), "
        f"{shares['not_labelled']} not labelled (no failure_cause score)."
    )


def shares_table(shares: dict[str, Any], causes: Taxonomy) -> str:
    rows = []
    for cause in causes.all:
        found = shares["causes"].get(cause.id)
        if found:
            rows.append([cause.family, cause.name, str(found["count"]), percent(found["share"])])
    for family in (*FAMILIES, NO_ANSWER_FAMILY):
        found = shares["families"].get(family)
        if found:
            rows.append([f"**{family}**", "all", str(found["count"]), percent(found["share"])])
    return table(["family", "cause", "n", "share %"], rows)


def grouped_table(groups: dict[str, dict[str, Any]], causes: Taxonomy) -> str:
    """Groups as rows, causes as columns (share % of the group's labelled failures)."""
    used = [c for c in causes.all if any(c.id in g["causes"] for g in groups.values())]
    rows = [
        [name, str(g["labelled"]), *(percent(g["causes"].get(c.id, {}).get("share")) for c in used)]
        for name, g in groups.items()
    ]
    return table(["group", "labelled", *(c.id for c in used)], rows)


def consensus_lines(consensus: dict[str, Any]) -> str:
    n = consensus["tasks"]
    if not n:
        return f"No task is failed by {consensus['min_models']} or more labelled models."
    return (
        f"On {n} task(s) failed by {consensus['min_models']} or more models: a median "
        f"{percent(consensus['median_same_cause'])}% of them fail for the same cause "
        f"({percent(consensus['median_same_family'])}% for the same family); on "
        f"{percent(consensus['all_same_cause'])}% of these tasks every failure has one cause "
        f"({percent(consensus['all_same_family'])}% one family)."
    )


def agentic_section(agentic: dict[str, Any], causes: Taxonomy) -> list[str]:
    if not agentic["pairs"]:
        return ["No agentic log has a single-call log of the same model and judge beside it."]
    names = {c.id: c.name for c in causes.all} | {UNLABELLED: UNLABELLED, "all": "**all**"}
    cause_rows = [
        [names[c], str(r["before"]), str(r["after"]), percent(r["fixed_share"])]
        for c, r in agentic["causes"].items()
    ]
    passes = agentic["pass"]
    sub_rows = [
        [
            name,
            str(s["n_tasks"]),
            percent(s["a_pass"]),
            percent(s["b_pass"]),
            signed_percent(s["delta"]),
        ]
        for name, s in agentic["by_subdomain"].items()
    ]
    cost_rows = [
        [name, str(c["attempts"]), _num(c["median_steps"]), _num(c["mean_thinking_tokens"])]
        for name, c in agentic["agent_cost"].items()
    ]
    return [
        f"{len(agentic['pairs'])} model pair(s), {agentic['paired_attempts']} paired first "
        f"attempts. pass@1 single-call {percent(passes['a_pass'])}%, agentic "
        f"{percent(passes['b_pass'])}% ({signed_percent(passes['delta'])} points); fixed "
        f"{passes['b_only']}, broken {passes['a_only']}; McNemar exact p = "
        f"{passes['mcnemar_p']:.3g}.",
        "",
        "### Failures per cause, single-call → agentic (Table 7)",
        "",
        table(["cause", "single-call", "agentic", "fixed %"], cause_rows),
        "",
        "### pass@1 by subdomain (Table 8)",
        "",
        table(["subdomain", "n", "single-call %", "agentic %", "Δ"], sub_rows),
        "",
        "### Agent cost (Table 2)",
        "",
        table(["agentic attempts", "n", "median steps", "mean thinking tokens"], cost_rows),
    ]


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def failures_markdown(result: dict[str, Any], causes: Taxonomy) -> str:
    overall = result["overall"]
    parts = [
        "## Failure causes of single-call runs, first attempts (Fig. 3, Table 6)",
        "",
        _counts_line(overall),
        "",
        shares_table(overall, causes),
        "",
        "### By subdomain (share % of each subdomain's labelled failures)",
        "",
        grouped_table(result["by_subdomain"], causes),
        "",
        "### By media type",
        "",
        grouped_table(result["by_media"], causes),
        "",
        "### The cause follows the task",
        "",
        consensus_lines(result["consensus"]),
        "",
        "## Agentic against single-call on the same tasks (Tables 2, 7, 8)",
        "",
        *agentic_section(result["agentic"], causes),
    ]
    return "\n".join(parts) + "\n"
