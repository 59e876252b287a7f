"""Charts of ranked counts: the bar chart a ranking answer carries, as SVG and PNG.

A chart is named by a digest of what it shows, so answering the same question over the same
graph rewrites the same files and a changed count makes a new pair.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from hysem_assets.core.atomic import write_bytes  # noqa: E402

#: Bars drawn at most; an answer lists every name, the chart its most reported ones.
MAX_BARS = 20


def ranking_chart(title: str, counts: Sequence[tuple[str, int]], reporting: int, folder: Path) -> dict[str, str]:
    """A horizontal bar per name (most reported on top) with its works and share of ``reporting``.

    Returns the paths of the SVG and the PNG written under ``folder``.
    """
    shown = list(counts[:MAX_BARS])
    digest = hashlib.sha256(json.dumps([title, shown, reporting]).encode()).hexdigest()[:16]
    figure, axes = plt.subplots(figsize=(7.5, 0.9 + 0.36 * len(shown)))
    try:
        names = [name for name, _ in shown][::-1]
        values = [count for _, count in shown][::-1]
        bars = axes.barh(names, values, color="#4c72b0")
        axes.bar_label(bars, labels=[f"{v} ({v / reporting:.0%})" for v in values], padding=3, fontsize=8)
        axes.set_xlabel(f"works (of {reporting} that report one)")
        axes.set_xlim(0, max(values, default=1) * 1.25)
        axes.set_title(title, fontsize=10, loc="left", wrap=True)
        axes.spines[["top", "right"]].set_visible(False)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.tick_params(axis="y", labelsize=8)
        svg, png = io.StringIO(), io.BytesIO()
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": digest}):
            figure.savefig(svg, format="svg", bbox_inches="tight", metadata={"Date": None})
        figure.savefig(png, format="png", dpi=110, bbox_inches="tight")
    finally:
        plt.close(figure)
    paths = {"svg": folder / f"ranking-{digest}.svg", "png": folder / f"ranking-{digest}.png"}
    write_bytes(paths["svg"], svg.getvalue().encode("utf-8"))
    write_bytes(paths["png"], png.getvalue())
    return {kind: str(path) for kind, path in paths.items()}
