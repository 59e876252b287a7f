"""The intertopic distance map: pyLDAvis's interactive page, self-contained, and a PNG of the same map."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from pathlib import Path

import pandas as pd
import pyLDAvis
import pyLDAvis.urls
from matplotlib.figure import Figure

from hysem_assets.topics.model import TopicModel


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
    _plot(coordinates, png)
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


def _plot(coordinates: pd.DataFrame, path: Path) -> None:
    """Circles sized by prevalence at pyLDAvis's positions, so the picture matches the page."""
    figure = Figure(figsize=(7, 6), dpi=120)
    axes = figure.add_subplot()
    areas = 3000 * coordinates["prevalence"].to_numpy() / max(coordinates["prevalence"].max(), 1e-9)
    axes.scatter(coordinates["x"], coordinates["y"], s=areas, alpha=0.45, color="#1f77b4", edgecolors="#08306b")
    for row in coordinates.itertuples():
        axes.annotate(f"{row.topic}", (row.x, row.y), ha="center", va="center", fontsize=11, weight="bold")
        axes.annotate(row.label, (row.x, row.y), xytext=(0, -14), textcoords="offset points", ha="center", fontsize=7)
    axes.set_aspect("equal", adjustable="datalim")
    axes.margins(0.25)
    axes.axhline(0, color="#cccccc", linewidth=0.6)
    axes.axvline(0, color="#cccccc", linewidth=0.6)
    axes.set_xlabel("PC1")
    axes.set_ylabel("PC2")
    axes.set_title("Intertopic distance map (circle area: share of tokens)")
    figure.tight_layout()
    figure.savefig(path)
