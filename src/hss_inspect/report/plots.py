"""Plots of the report, written as PNG and SVG (matplotlib, the optional `report` extra).

Each plot function takes plain report data and returns a matplotlib Figure; `save`
writes both formats. matplotlib is imported only here and only when a plot is drawn.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hss_inspect.report.paper import PublishedRow, published_rows
from hss_inspect.report.sweep import ALL_TASKS, Sweep
from hss_inspect.report.tables import GROUP_COLUMNS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MISSING = (
    "plots need matplotlib, which is not installed: pip install 'hss-inspect[report]' "
    "(tables are written without it)"
)
DPI = 100
LEADERBOARD_SIZE = (8.0, 5.0)  # inches; at DPI 100 the PNG is 800 x 500 px
HEATMAP_SIZE = (8.0, 5.0)
SWEEP_SIZE = (8.0, 5.0)
SCATTER_SIZE = (5.0, 5.0)


class PlotsUnavailable(RuntimeError):
    pass


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise PlotsUnavailable(MISSING) from exc
    return plt


def _label(row: dict[str, Any]) -> str:
    effort = f" ({row['reasoning_effort']})" if row.get("reasoning_effort") else ""
    condition = f" [{row['condition']}]" if row["condition"] != "standard" else ""
    return f"{row['model']}{effort}{condition}"


def leaderboard_plot(
    rows: Sequence[dict[str, Any]],
    human: float | None,
    paper: Sequence[PublishedRow] = (),
) -> Figure:
    """pass@1 (%) per run with its 95% interval, best on top, and the human baseline;
    the paper's published models in grey when given."""
    plt = _pyplot()
    bars = [
        (_label(r), 100 * (r["pass_at_1"] or 0.0), 100 * (r["ci95"] or 0.0), "#4c72b0")
        for r in rows
    ]
    bars += [
        (f"{p.label} (paper)", p.values["pass_at_1"] or 0.0, p.values["ci95"] or 0.0, "#bbbbbb")
        for p in paper
        if p.kind != "human"
    ]
    bars.sort(key=lambda bar: bar[1])
    height = max(LEADERBOARD_SIZE[1], 0.25 * len(bars) + 1)
    fig: Figure
    fig, ax = plt.subplots(figsize=(LEADERBOARD_SIZE[0], height), dpi=DPI)
    labels, values, errors, colours = zip(*bars, strict=True) if bars else ((), (), (), ())
    ax.barh(list(labels), list(values), xerr=list(errors), color=list(colours), capsize=3)
    if human is not None:
        ax.axvline(human, color="#c44e52", linestyle="--", label=f"human baseline {human:.1f}%")
        ax.legend(loc="lower right")
    ax.set_xlabel("pass@1 (%), 95% bootstrap interval")
    ax.set_xlim(0, 100)
    fig.tight_layout()
    return fig


def heatmap_plot(rows: Sequence[dict[str, Any]]) -> Figure:
    """Runs x (media type, domain): pass@1 (%) in each cell."""
    plt = _pyplot()
    grid = [[_pct(r.get(c)) for c in GROUP_COLUMNS] for r in rows]
    fig: Figure
    fig, ax = plt.subplots(figsize=HEATMAP_SIZE, dpi=DPI)
    shown = [[math.nan if v is None else v for v in line] for line in grid]
    image = ax.imshow(shown, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(GROUP_COLUMNS)), list(GROUP_COLUMNS), rotation=30)
    ax.set_yticks(range(len(rows)), [_label(r) for r in rows])
    for i, line in enumerate(grid):
        for j, value in enumerate(line):
            if value is not None:
                ink = "black" if value > 60 else "white"  # readable on viridis' light end
                ax.text(j, i, f"{value:.0f}", ha="center", va="center", color=ink)
    fig.colorbar(image, ax=ax, label="pass@1 (%)")
    fig.tight_layout()
    return fig


def sweep_plot(sweep: Sweep) -> Figure:
    """One line per model and subdomain over the sweep's levels (all tasks in bold)."""
    plt = _pyplot()
    fig: Figure
    fig, ax = plt.subplots(figsize=SWEEP_SIZE, dpi=DPI)
    positions = range(len(sweep.levels))
    for row in sweep.rows:
        y = [
            math.nan if row.values[lv] is None else 100 * (row.values[lv] or 0.0)
            for lv in sweep.levels
        ]
        bold = row.group == ALL_TASKS
        ax.plot(
            positions,
            y,
            marker="o",
            linewidth=3 if bold else 1,
            label=f"{row.model}: {row.group}",
        )
    ax.set_xticks(list(positions), list(sweep.levels))
    ax.set_xlabel("reasoning effort" if sweep.kind == "effort" else "frame budget (max frames)")
    ax.set_ylabel("pass@1 (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize="x-small", ncol=2, loc="upper left")
    fig.tight_layout()
    return fig


def judge_scatter_plot(scores: dict[str, dict[str, float]], x_judge: str, y_judge: str) -> Figure:
    """Per-model pass@1 under two judges, on the identity line."""
    plt = _pyplot()
    fig: Figure
    fig, ax = plt.subplots(figsize=SCATTER_SIZE, dpi=DPI)
    models = sorted(m for m, s in scores.items() if x_judge in s and y_judge in s)
    xs = [scores[m][x_judge] for m in models]
    ys = [scores[m][y_judge] for m in models]
    ax.plot([0, 100], [0, 100], color="#999", linestyle="--", linewidth=1)
    ax.scatter(xs, ys, color="#4c72b0")
    for model, x, y in zip(models, xs, ys, strict=True):
        ax.annotate(model, (x, y), fontsize="x-small", xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel(f"pass@1 (%) judged by {x_judge}")
    ax.set_ylabel(f"pass@1 (%) judged by {y_judge}")
    fig.tight_layout()
    return fig


def _pct(value: Any) -> float | None:
    return None if value is None else 100 * float(value)


def save(fig: Figure, out: Path, name: str) -> list[Path]:
    """`name.png` and `name.svg` in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in ("png", "svg"):
        path = out / f"{name}.{fmt}"
        fig.savefig(path, format=fmt, dpi=DPI)
        written.append(path)
    _pyplot().close(fig)
    return written


def data_uri(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", dpi=DPI)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode()


def _human_baseline() -> float | None:
    human = next((r for r in published_rows() if r.kind == "human"), None)
    return None if human is None else human.values["pass_at_1"]


def report_figures(
    rows: Sequence[dict[str, Any]],
    out: Path | None,
    paper: Sequence[PublishedRow] = (),
    beside_paper: bool = True,
    suffix: str = "",
) -> dict[str, str]:
    """The leaderboard and heatmap of one release's runs: written under `out` when given
    (names ending in `suffix`), returned as data URIs for the HTML page. The paper's human
    baseline is drawn only `beside_paper`: where the runs measured what the paper did.
    Raises PlotsUnavailable without matplotlib."""
    human = _human_baseline() if beside_paper else None
    figures = {
        "leaderboard": leaderboard_plot(rows, human, paper),
        "heatmap": heatmap_plot(rows),
    }
    baseline = "; dashed line: the paper's human baseline" if human is not None else ""
    captions = {
        "leaderboard": f"pass@1 with 95% intervals{baseline}",
        "heatmap": "pass@1 (%) by media type and domain",
    }
    uris = {}
    for name, fig in figures.items():
        uris[captions[name]] = data_uri(fig)
        if out is not None:
            save(fig, out, name + suffix)
        else:
            _pyplot().close(fig)
    return uris


def sweep_figures(sweep: Sweep, out: Path) -> list[Path]:
    return save(sweep_plot(sweep), out, f"sweep_{sweep.kind}")


def agreement_figures(alignment: dict[str, Any], out: Path) -> list[Path]:
    """One scatter per pair of judges (first judge on x)."""
    judges = alignment["judges"]
    written: list[Path] = []
    for i, a in enumerate(judges):
        for b in judges[i + 1 :]:
            fig = judge_scatter_plot(alignment["model_scores"], a, b)
            written += save(fig, out, f"judges_{_slug(a)}_vs_{_slug(b)}")
    return written


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-")
