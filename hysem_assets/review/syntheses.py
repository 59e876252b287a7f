"""The syntheses a review reports: per comparison, the pooled estimate with its forest plot, or why there is none.

``evidence_table`` pools the findings of the studies it includes and writes the results beside
its sheets (``syntheses.json``, and a forest plot per pooled comparison as SVG and PNG in
``forest/``); the report reads them back from there, so it shows the syntheses of the
studies it lists, as they were when the evidence table was made.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from hysem_assets.core.atomic import write_json
from hysem_assets.dedup.normalize import is_missing
from hysem_assets.findings.forest import forest_plot
from hysem_assets.findings.pooling import Pooled, syntheses

SYNTHESES_FILE = "syntheses.json"
FOREST_DIR = "forest"
POOLED_COLUMNS = ["comparison", "measure", "k", "estimate", "95% CI", "τ²", "I²", "95% prediction interval", "method"]


@dataclass(frozen=True)
class Synthesis:
    """One result of pooling as JSON (``Pooled.as_json()`` or ``NotPooled.as_json()``), with a pooled one's forest
    plot."""

    result: dict[str, Any]
    svg: str | None = None
    png: bytes | None = None

    @property
    def pooled(self) -> bool:
        return bool(self.result["pooled"])

    @property
    def comparison(self) -> str:
        arms = self.result["comparison"]
        return f"{arms['intervention']} vs {arms['comparator']}: {arms['outcome']}"


def study_labels(library: pd.DataFrame) -> dict[str, str]:
    """Studies as a forest plot names them: by their in-text citation, without its brackets ("Doe et al., 2020")."""
    return {
        str(cluster_id): str(citation).strip("()[] ")
        for cluster_id, citation in zip(library["cluster_id"], library["in_text_citation"], strict=True)
        if not is_missing(citation)
    }


def synthesize(
    findings: pd.DataFrame, included: Sequence[str], library: pd.DataFrame, method: str = "dl"
) -> list[Synthesis]:
    """The syntheses of the findings of the ``included`` studies, a forest plot drawn for each pooled one."""
    results = syntheses(findings[findings["cluster_id"].isin(included)], study_labels(library), method)
    return [
        Synthesis(result.as_json(), *forest_plot(result)) if isinstance(result, Pooled) else Synthesis(result.as_json())
        for result in results
    ]


def write_syntheses(found: Sequence[Synthesis], folder: Path) -> None:
    """``syntheses.json`` and the forest plots in ``folder``, replacing those of an earlier run."""
    plots = folder / FOREST_DIR
    shutil.rmtree(plots, ignore_errors=True)
    plots.mkdir(parents=True)
    records = []
    for number, synthesis in enumerate(found, 1):
        name = None
        if synthesis.svg is not None and synthesis.png is not None:
            name = f"{number:03d}"
            (plots / f"{name}.svg").write_text(synthesis.svg, encoding="utf-8")
            (plots / f"{name}.png").write_bytes(synthesis.png)
        records.append({"synthesis": synthesis.result, "forest": name})
    write_json(folder / SYNTHESES_FILE, records)


def read_syntheses(folder: Path) -> list[Synthesis]:
    """The syntheses :func:`write_syntheses` left in ``folder``; none when it wrote none."""
    path = folder / SYNTHESES_FILE
    if not path.is_file():
        return []
    found = []
    for record in json.loads(path.read_text(encoding="utf-8")):
        if record["forest"] is None:
            found.append(Synthesis(record["synthesis"]))
            continue
        plot = folder / FOREST_DIR / record["forest"]
        svg, png = plot.with_suffix(".svg").read_text(encoding="utf-8"), plot.with_suffix(".png").read_bytes()
        found.append(Synthesis(record["synthesis"], svg, png))
    return found


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"{_number(low)} to {_number(high)}"


def pooled_row(synthesis: Synthesis) -> dict[str, Any]:
    """A pooled comparison's estimate with the 95% CI, heterogeneity, prediction interval (none below three
    studies), method and number of studies."""
    result = synthesis.result
    return {
        "comparison": synthesis.comparison,
        "measure": result["measure"],
        "k": result["k"],
        "estimate": _number(result["estimate"]),
        "95% CI": _interval(result["ci_low"], result["ci_high"]),
        "τ²": f"{result['tau2']:.3f}",
        "I²": f"{result['i2']:.0%}",
        "95% prediction interval": _interval(result["prediction_low"], result["prediction_high"]),
        "method": result["method"],
    }


def pooled_table(found: Sequence[Synthesis]) -> pd.DataFrame:
    """One :func:`pooled_row` per pooled comparison."""
    return pd.DataFrame([pooled_row(synthesis) for synthesis in found if synthesis.pooled], columns=POOLED_COLUMNS)


def not_pooled_table(found: Sequence[Synthesis]) -> pd.DataFrame:
    """One row per group of studies left unpooled: the comparison, its studies and why."""
    rows = [
        {
            "comparison": synthesis.comparison,
            "studies": "; ".join(study["label"] for study in synthesis.result["studies"]),
            "reason": synthesis.result["reason"],
        }
        for synthesis in found
        if not synthesis.pooled
    ]
    return pd.DataFrame(rows, columns=["comparison", "studies", "reason"])
