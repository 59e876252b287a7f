"""The forest plot of a pooled estimate, drawn with matplotlib as SVG and PNG.

One row per study (its label, a square sized by its weight on its estimate, its interval as a
line, the numbers written out), the pooled estimate as a diamond, the prediction interval
beneath it, and the line of no effect: 1 on a log axis for ratios, 0 for differences. The
figure is built from ``matplotlib.figure.Figure`` with the Agg canvas, never pyplot, so
drawing leaves no figure or setting behind in the process; SVG text stays text, so the
plot's labels can be searched and read aloud.
"""

from __future__ import annotations

import io

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Polygon
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from hysem_assets.findings.pooling import Pooled, is_ratio

_ROW, _BOTTOM, _TOP = 0.32, 0.8, 0.7  # inches: per row, below the rows (axis and footer), above them (title)
_STUDY_COLOUR, _POOLED_COLOUR = "#1f4e79", "#8b1a1a"


def _number(value: float) -> str:
    """A value as a forest plot writes it: two decimals, fewer significant digits only where they would mislead."""
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.2f}" if abs(value) >= 0.1 or value == 0 else f"{value:.2g}"


def _interval(estimate: float, low: float, high: float) -> str:
    return f"{_number(estimate)} [{_number(low)}, {_number(high)}]"


def _limits(pooled: Pooled) -> tuple[float, float]:
    """The x range holding every interval and the line of no effect, with a margin (multiplicative on a log axis)."""
    values = [v for s in pooled.studies for v in (s.ci_low, s.ci_high)] + [pooled.ci_low, pooled.ci_high]
    values += [v for v in (pooled.prediction_low, pooled.prediction_high) if v is not None]
    if is_ratio(pooled.measure):
        low, high = min([*values, 1.0]), max([*values, 1.0])
        return low / 1.25, high * 1.25
    low, high = min([*values, 0.0]), max([*values, 0.0])
    margin = (high - low) * 0.08 or 1.0
    return low - margin, high + margin


def _row(axes: Axes, y: float, cells: tuple[str, str, str], bold: bool = False) -> None:
    """A row's texts: its label left of the plot, its estimate and weight right of it."""
    style = {
        "fontsize": 8.5,
        "va": "center",
        "transform": axes.get_yaxis_transform(),
        "weight": "bold" if bold else None,
    }
    label, numbers, weight = cells
    axes.text(-0.04, y, label, ha="right", **style)
    axes.text(1.04, y, numbers, ha="left", **style)
    axes.text(1.62, y, weight, ha="right", **style)


def _studies(axes: Axes, pooled: Pooled) -> None:
    """One row per study from y = 0 down: its interval as a line, its estimate as a square whose area follows its
    weight."""
    weights = pooled.weights()
    for row, (study, weight) in enumerate(zip(pooled.studies, weights, strict=True)):
        axes.plot([study.ci_low, study.ci_high], [-row, -row], color=_STUDY_COLOUR, linewidth=1.0)
        size = 4 + 10 * (weight / max(weights)) ** 0.5
        axes.plot([study.estimate], [-row], marker="s", markersize=size, color=_STUDY_COLOUR, linestyle="none")
        _row(axes, -row, (study.label, _interval(study.estimate, study.ci_low, study.ci_high), f"{weight:.1%}"))


def _summary(axes: Axes, pooled: Pooled) -> None:
    """The pooled diamond below the studies, and the prediction interval below it when there is one."""
    y = -(len(pooled.studies) + 0.5)
    diamond = [(pooled.ci_low, y), (pooled.estimate, y + 0.35), (pooled.ci_high, y), (pooled.estimate, y - 0.35)]
    axes.add_patch(Polygon(diamond, closed=True, color=_POOLED_COLOUR))
    _row(axes, y, ("Random effects", _interval(pooled.estimate, pooled.ci_low, pooled.ci_high), "100%"), bold=True)
    if pooled.prediction_low is None or pooled.prediction_high is None:
        return
    below = [[pooled.estimate - pooled.prediction_low], [pooled.prediction_high - pooled.estimate]]
    axes.errorbar([pooled.estimate], [y - 1], xerr=below, fmt="none", ecolor=_POOLED_COLOUR, elinewidth=1.0, capsize=3)
    bounds = f"[{_number(pooled.prediction_low)}, {_number(pooled.prediction_high)}]"
    _row(axes, y - 1, ("Prediction interval", bounds, ""))


def _frame(axes: Axes, pooled: Pooled, rows: int) -> None:
    """The line of no effect, the x axis (log for ratios, ticks at 1, 2 and 5 times powers of ten written as numbers)
    and no y axis."""
    ratio = is_ratio(pooled.measure)
    null = 1.0 if ratio else 0.0
    axes.plot([null, null], [-(rows - 1.5), 0.4], color="#555555", linewidth=0.8, linestyle="--")
    axes.set_xlim(*_limits(pooled))
    if ratio:
        axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_ylim(-(rows - 1.0), 1.2)
    axes.set_yticks([])
    for side in ("left", "right", "top"):
        axes.spines[side].set_visible(False)
    axes.set_xlabel(f"{pooled.measure.capitalize()}{' (log scale)' if ratio else ''}", fontsize=8.5)
    axes.tick_params(axis="x", labelsize=8)


def _draw(pooled: Pooled) -> Figure:
    rows = len(pooled.studies) + 2 + (pooled.prediction_low is not None)
    height = _BOTTOM + _ROW * rows + _TOP
    figure = Figure(figsize=(9.0, height))
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0.3, _BOTTOM / height, 0.42, _ROW * rows / height))
    if is_ratio(pooled.measure):
        axes.set_xscale("log")
    _row(axes, 0.7, ("Study", "Estimate [95% CI]", "Weight"), bold=True)
    _studies(axes, pooled)
    _summary(axes, pooled)
    _frame(axes, pooled, rows)
    intervention, comparator, outcome = pooled.comparison
    measure = pooled.measure.capitalize()
    figure.suptitle(
        f"{intervention} vs {comparator}: {outcome}\n"
        f"{measure}, random effects ({pooled.method}), {len(pooled.studies)} studies",
        fontsize=9.5,
    )
    scale = " (log scale)" if is_ratio(pooled.measure) else ""
    figure.text(0.02, 0.02, f"Heterogeneity: τ² = {pooled.tau2:.3g}{scale}, I² = {pooled.i2:.0%}", fontsize=8)
    return figure


def forest_plot(pooled: Pooled) -> tuple[str, bytes]:
    """The forest plot of ``pooled`` as SVG text and PNG bytes, with no date or software stamp, so the same synthesis
    gives the same files."""
    figure = _draw(pooled)
    svg, png = io.StringIO(), io.BytesIO()
    with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "forest"}):
        figure.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    figure.savefig(png, format="png", dpi=150, metadata={"Software": None})
    return svg.getvalue(), png.getvalue()
