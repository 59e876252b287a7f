"""Charts of answers, as SVG and PNG: a ranking's bars per name, a trend's bars per year, a synthesis's forest plots.

A chart is named by a digest of what it shows, so answering the same question over the same
graph rewrites the same files and a changed count makes a new pair.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from hysem_assets.core.atomic import write_bytes  # noqa: E402

#: Bars drawn at most; an answer lists every name, the chart its most reported ones.
MAX_BARS = 20
#: Colours of the counted works and of the works they are counted among.
COUNTED, BACKGROUND = "#4c72b0", "#d9dee8"


@contextmanager
def _figure(height: float) -> Iterator[tuple[Figure, Axes]]:
    """A figure 7.5 inches wide, closed however drawing it ends."""
    figure, axes = plt.subplots(figsize=(7.5, height))
    try:
        yield figure, axes
    finally:
        plt.close(figure)


def _written(kind: str, digest: str, svg: bytes, png: bytes, folder: Path) -> dict[str, str]:
    """Write ``<kind>-<digest>.svg`` and ``.png`` under ``folder``; their paths."""
    paths = {"svg": folder / f"{kind}-{digest}.svg", "png": folder / f"{kind}-{digest}.png"}
    write_bytes(paths["svg"], svg)
    write_bytes(paths["png"], png)
    return {kind: str(path) for kind, path in paths.items()}


def _saved(figure: Figure, kind: str, digest: str, folder: Path) -> dict[str, str]:
    """Write ``figure`` as ``<kind>-<digest>.svg`` and ``.png`` under ``folder``; their paths."""
    svg, png = io.StringIO(), io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": digest}):
        figure.savefig(svg, format="svg", bbox_inches="tight", metadata={"Date": None})
    figure.savefig(png, format="png", dpi=110, bbox_inches="tight")
    return _written(kind, digest, svg.getvalue().encode("utf-8"), png.getvalue(), folder)


def _digest(*shown: object) -> str:
    return hashlib.sha256(json.dumps(shown).encode()).hexdigest()[:16]


def ranking_chart(title: str, counts: Sequence[tuple[str, int]], reporting: int, folder: Path) -> dict[str, str]:
    """A horizontal bar per name (most reported on top) with its works and share of ``reporting``.

    Returns the paths of the SVG and the PNG written under ``folder``.
    """
    shown = list(counts[:MAX_BARS])
    with _figure(0.9 + 0.36 * len(shown)) as (figure, axes):
        names = [name for name, _ in shown][::-1]
        values = [count for _, count in shown][::-1]
        bars = axes.barh(names, values, color=COUNTED)
        axes.bar_label(bars, labels=[f"{v} ({v / reporting:.0%})" for v in values], padding=3, fontsize=8)
        axes.set_xlabel(f"works (of {reporting} that report one)")
        axes.set_xlim(0, max(values, default=1) * 1.25)
        axes.set_title(title, fontsize=10, loc="left", wrap=True)
        axes.spines[["top", "right"]].set_visible(False)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.tick_params(axis="y", labelsize=8)
        return _saved(figure, "ranking", _digest(title, shown, reporting), folder)


def trend_chart(
    title: str,
    counted: Mapping[int, int],
    totals: Mapping[int, int],
    folder: Path,
    what: str = "counted works",
    over: str = "included studies",
) -> dict[str, str]:
    """Per publication year, the counted works (``what`` they are) as bars in front of all works counted ``over``
    (the included studies, or every record found) of that year.

    Returns the paths of the SVG and the PNG written under ``folder``.
    """
    years = sorted(totals)
    with _figure(3.6) as (figure, axes):
        axes.bar(years, [totals[y] for y in years], color=BACKGROUND, label=f"all {over}")
        bars = axes.bar(years, [counted.get(y, 0) for y in years], color=COUNTED, label=what)
        axes.bar_label(bars, labels=[str(counted.get(y, 0) or "") for y in years], padding=2, fontsize=8)
        axes.set_xlabel("publication year")
        axes.set_ylabel("works")
        axes.set_title(title, fontsize=10, loc="left", wrap=True)
        axes.spines[["top", "right"]].set_visible(False)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.yaxis.set_major_locator(MaxNLocator(integer=True))
        axes.legend(frameon=False, fontsize=8)
        return _saved(figure, "trend", _digest(title, what, [[y, counted.get(y, 0), totals[y]] for y in years]), folder)


def forest_chart(svg: str, png: bytes, folder: Path) -> dict[str, str]:
    """A forest plot drawn elsewhere (:func:`hysem_assets.findings.forest.forest_plot`), written beside the other
    charts and named by a digest of its drawing; the paths of the SVG and the PNG."""
    return _written("forest", hashlib.sha256(svg.encode("utf-8")).hexdigest()[:16], svg.encode("utf-8"), png, folder)
