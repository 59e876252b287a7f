"""The intertopic distance map: pyLDAvis's interactive page, self-contained, and a PNG of the same map."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

with warnings.catch_warnings():  # pyLDAvis turns every DeprecationWarning on, process-wide, when imported
    import pyLDAvis
    import pyLDAvis.urls
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from hysem_assets.topics.model import TopicModel

#: How far below its circle's centre a label stands, in points.
_LABEL_DROP = 12
#: Texts of the map are centred on a point given as an offset (in points) from their circle.
_OFFSET = {"xytext": (0, 0), "textcoords": "offset points", "ha": "center", "va": "center"}
#: A label's pale backdrop, so circles and leader lines behind it do not cross its letters.
_BACKDROP = {"boxstyle": "square,pad=0.1", "facecolor": "white", "alpha": 0.7, "edgecolor": "none"}
#: Space kept between two texts, and the spacing of the spots a text may move to, in pixels.
_GAP, _STEP = 2.0, 3.0


@dataclass(frozen=True)
class IntertopicView:
    html: Path
    png: Path
    #: topic, x, y, prevalence (percent of tokens), label: the map's circles
    coordinates: pd.DataFrame


def write_intertopic_view(model: TopicModel, directory: Path, name: str = "topics") -> IntertopicView:
    """Write ``<name>.html`` (opens offline: scripts and styles are inlined) and ``<name>.png``."""
    directory.mkdir(parents=True, exist_ok=True)
    if model.empty:
        return _empty_view(model, directory, name)
    modelled = model.documents[model.documents["status"] == "ok"]
    mixture = modelled[[f"topic_{k}" for k in model.topics["topic"]]].to_numpy()
    prepared = pyLDAvis.prepare(
        topic_term_dists=model.topic_word,
        doc_topic_dists=mixture / mixture.sum(axis=1, keepdims=True),
        doc_lengths=modelled["tokens"].to_numpy(),
        vocab=model.vocabulary,
        term_frequency=model.term_frequency,
        mds="pcoa",
        sort_topics=False,
        n_jobs=1,
    )
    coordinates = pd.DataFrame(
        {
            "topic": model.topics["topic"].to_numpy(),
            "x": prepared.topic_coordinates["x"].to_numpy(),
            "y": prepared.topic_coordinates["y"].to_numpy(),
            "prevalence": prepared.topic_coordinates["Freq"].to_numpy(),
            "label": model.topics["label"].to_numpy(),
        }
    )
    html, png = directory / f"{name}.html", directory / f"{name}.png"
    html.write_text(
        _page(prepared.to_json(), title=f"Intertopic distance map ({len(coordinates)} topics)"), encoding="utf-8"
    )
    intertopic_figure(coordinates).savefig(png)
    return IntertopicView(html, png, coordinates)


def _empty_view(model: TopicModel, directory: Path, name: str) -> IntertopicView:
    """A page and a picture that say there are no topics, so links to the map never dangle."""
    message = " ".join(model.notes) or "No topics."
    html, png = directory / f"{name}.html", directory / f"{name}.png"
    html.write_text(
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Intertopic distance map (0 topics)</title>'
        f"</head><body><p>{escape(message)}</p></body></html>\n",
        encoding="utf-8",
    )
    figure = Figure(figsize=(7, 2), dpi=120)
    figure.text(0.5, 0.5, message, ha="center", va="center", fontsize=11)
    figure.savefig(png)
    coordinates = pd.DataFrame({"topic": [], "x": [], "y": [], "prevalence": [], "label": []})
    return IntertopicView(html, png, coordinates.astype({"topic": "int64", "label": "object"}))


def _page(vis_json: str, title: str) -> str:
    def asset(path: str) -> str:
        return Path(path).read_text(encoding="utf-8")

    # "</" inside a script would end it early; JSON allows the escaped form.
    data = json.dumps(json.loads(vis_json)).replace("</", "<\\/")
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>{asset(pyLDAvis.urls.LDAVIS_CSS_LOCAL)}</style>
<script>{asset(pyLDAvis.urls.D3_LOCAL)}</script>
<script>{asset(pyLDAvis.urls.LDAVIS_LOCAL)}</script>
</head><body>
<div id="ldavis" style="background-color:white;"></div>
<script>new LDAvis("#ldavis", {data});</script>
</body></html>
"""


def intertopic_figure(coordinates: pd.DataFrame) -> Figure:
    """Circles sized by prevalence at pyLDAvis's positions, so the picture matches the page, each with
    its number and label where no other text covers them."""
    figure = Figure(figsize=(7, 6), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    areas = 3000 * coordinates["prevalence"].to_numpy() / max(coordinates["prevalence"].max(), 1e-9)
    axes.scatter(coordinates["x"], coordinates["y"], s=areas, alpha=0.45, color="#1f77b4", edgecolors="#08306b")
    axes.set_aspect("equal", adjustable="datalim")
    axes.margins(0.25)
    axes.axhline(0, color="#cccccc", linewidth=0.6)
    axes.axvline(0, color="#cccccc", linewidth=0.6)
    axes.set_xlabel("PC1")
    axes.set_ylabel("PC2")
    axes.set_title("Intertopic distance map (circle area: share of tokens)")
    figure.tight_layout()
    figure.canvas.draw()  # settles the limits (aspect, margins), so texts are measured where they will stand
    axes.set(xlim=axes.get_xlim(), ylim=axes.get_ylim())
    _place_texts(axes, coordinates)
    return figure


def _place_texts(axes: Axes, coordinates: pd.DataFrame) -> None:
    """Each topic's number on its circle and its label below it, biggest topics first; a text that
    would cover another moves to the nearest free spot, with a leader line back to its circle when
    that spot is farther from it than the wanted one."""
    topics = coordinates.sort_values("prevalence", ascending=False, kind="stable")
    positions = topics[["x", "y"]].to_numpy(dtype=float)
    texts = [
        *(
            axes.annotate(f"{t}", xy, fontsize=11, weight="bold", **_OFFSET)
            for t, xy in zip(topics["topic"], positions)
        ),
        *(
            axes.annotate(label, xy, fontsize=7, bbox=_BACKDROP, **_OFFSET)
            for label, xy in zip(topics["label"], positions)
        ),
    ]
    renderer = axes.figure.canvas.get_renderer()
    sizes = np.array([text.get_window_extent(renderer).size for text in texts])
    anchors = np.vstack([axes.transData.transform(positions)] * 2)
    pixels_per_point = axes.figure.dpi / 72
    offsets = np.repeat([(0.0, 0.0), (0.0, -_LABEL_DROP)], len(topics), axis=0)  # numbers, then labels
    wanted = anchors + offsets * pixels_per_point
    centres = _free_spots(sizes, wanted, axes.get_window_extent(renderer).padded(-_GAP).extents)
    to_data = axes.transData.inverted()
    for text, size, anchor, target, centre in zip(texts, sizes, anchors, wanted, centres):
        text.xyann = tuple((centre - anchor) / pixels_per_point)
        end = _nearest_point(anchor, centre, size)
        if np.hypot(*(end - anchor)) > np.hypot(*(_nearest_point(anchor, target, size) - anchor)) + size[1]:
            axes.plot(*to_data.transform([anchor, end]).T, color="#555555", linewidth=0.6, zorder=1.5)


def _nearest_point(point: np.ndarray, centre: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The point of a box nearest ``point``: where a leader line from it meets the box."""
    return np.clip(point, centre - size / 2, centre + size / 2)


def _free_spots(sizes: np.ndarray, wanted: np.ndarray, bounds: tuple[float, float, float, float]) -> np.ndarray:
    """Centres for boxes of ``sizes`` (width, height), in order: each the spot nearest its ``wanted``
    centre inside ``bounds`` (x0, y0, x1, y1) and clear of the boxes placed before it (a box that fits
    nowhere keeps its wanted centre)."""
    x0, y0, x1, y1 = bounds
    centres, spans = np.empty((0, 2)), np.empty((0, 2))
    for size, target in zip(sizes + _GAP, wanted):
        half = size / 2
        grid = np.stack(
            np.meshgrid(np.arange(x0 + half[0], x1 - half[0], _STEP), np.arange(y0 + half[1], y1 - half[1], _STEP)),
            axis=-1,
        ).reshape(-1, 2)
        inside = np.all((target - half >= (x0, y0)) & (target + half <= (x1, y1)))
        candidates = np.vstack([target, grid]) if inside else grid
        covered = np.all(np.abs(candidates[:, None, :] - centres[None]) < (half + spans / 2)[None], axis=2).any(axis=1)
        free = candidates[~covered]
        best = free[np.argmin(np.hypot(*(free - target).T))] if len(free) else target
        centres, spans = np.vstack([centres, best]), np.vstack([spans, size])
    return centres
