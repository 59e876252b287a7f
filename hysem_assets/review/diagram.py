"""The PRISMA 2020 flow diagram, drawn with matplotlib from a flow table.

The layout is the statement's template for new reviews of databases: main boxes
down the left (identified, screened, sought, assessed, included), the records that
leave the flow on the right beside the box they leave from, each with its reasons.
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from hysem_assets.review.flow import LABELS  # noqa: E402

#: (the boxes of the main box, the boxes of its side box, y of the row's centre) from top to bottom.
_ROWS = (
    (("identified", "identified_other"), ("duplicates_removed", "automation_excluded"), 86.0),
    (("screened",), ("excluded",), 64.0),
    (("sought",), ("not_retrieved",), 44.0),
    (("assessed",), ("not_parsed", "fulltext_excluded"), 24.0),
    (("included", "included_reports"), (), 5.0),
)
_STAGES = (("Identification", 76.0, 96.0), ("Screening", 15.0, 74.0), ("Included", 0.0, 13.0))
_MAIN_X, _SIDE_X, _WIDTH = 32.0, 77.0, 38.0
_LINE = 2.4  # height of one text line, in the drawing's units (0-100)
#: Characters of a reason line that fit a box; longer reasons wrap onto indented lines.
_CHARS = 46


@dataclass(frozen=True)
class FlowDiagram:
    """The diagram as SVG text and PNG bytes."""

    svg: str
    png: bytes


def _lines(flow: pd.DataFrame, box: str) -> list[str]:
    counts = dict(zip(flow["box"], flow["count"]))
    labels = dict(zip(flow["box"], flow["label"]))
    lines = [f"{LABELS[box]} (n = {counts.get(box, 0):,})"]
    for name, count in counts.items():
        if name.startswith(f"{box}:"):
            n = f" (n = {count:,})"  # never split from its reason's last line
            wrapped = textwrap.wrap(labels[name], _CHARS - len(n), initial_indent="  ", subsequent_indent="    ")
            lines += [*wrapped[:-1], wrapped[-1] + n]
    return lines


def _box(axes, x: float, y: float, lines: list[str], colour: str) -> tuple[float, float]:
    """A box centred on (x, y) holding ``lines``; returns its half height and top."""
    height = _LINE * len(lines) + 3.0
    axes.add_patch(
        FancyBboxPatch(
            (x - _WIDTH / 2, y - height / 2),
            _WIDTH,
            height,
            boxstyle="round,pad=0.3",
            facecolor=colour,
            edgecolor="#333333",
            linewidth=1.0,
        )
    )
    axes.text(x - _WIDTH / 2 + 1.2, y, "\n".join(lines), va="center", ha="left", fontsize=8.5, linespacing=1.35)
    return height / 2, y + height / 2


def _arrow(axes, start: tuple[float, float], end: tuple[float, float]) -> None:
    axes.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "-|>", "color": "#333333", "lw": 1.0})


def draw_flow(flow: pd.DataFrame, title: str = "") -> FlowDiagram:
    """Render the flow table to SVG (text kept as text) and PNG."""
    figure, axes = plt.subplots(figsize=(9.5, 10.5))
    try:
        axes.set_xlim(0, 100)
        axes.set_ylim(-3, 100)
        axes.axis("off")
        if title:
            axes.set_title(title, fontsize=11)
        for name, low, high in _STAGES:
            axes.add_patch(
                FancyBboxPatch(
                    (0.5, low), 4.5, high - low, boxstyle="round,pad=0.2", facecolor="#dbe7f3", edgecolor="none"
                )
            )
            axes.text(2.75, (low + high) / 2, name, rotation=90, va="center", ha="center", fontsize=9, weight="bold")
        previous_bottom = None
        for main, side, y in _ROWS:
            half, top = _box(axes, _MAIN_X, y, [line for box in main for line in _lines(flow, box)], "#ffffff")
            if previous_bottom is not None:
                _arrow(axes, (_MAIN_X, previous_bottom), (_MAIN_X, top + 0.6))
            if side:
                _box(axes, _SIDE_X, y, [line for box in side for line in _lines(flow, box)], "#f6f6f6")
                _arrow(axes, (_MAIN_X + _WIDTH / 2 + 0.3, y), (_SIDE_X - _WIDTH / 2 - 0.6, y))
            previous_bottom = y - half - 0.3
        svg, png = io.StringIO(), io.BytesIO()
        with matplotlib.rc_context({"svg.fonttype": "none"}):
            figure.savefig(svg, format="svg", bbox_inches="tight")
        figure.savefig(png, format="png", dpi=110, bbox_inches="tight")
        return FlowDiagram(svg.getvalue(), png.getvalue())
    finally:
        plt.close(figure)
