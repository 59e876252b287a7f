"""The forest plot: valid SVG naming every study, a PNG, and nothing left behind in matplotlib."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

import matplotlib as mpl

from hysem_assets.findings.forest import forest_plot
from hysem_assets.findings.pooling import Pooled, StudyEffect, pool

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def pooled(measure: str, rows: list[tuple[str, float, float, float]]) -> Pooled:
    studies = [StudyEffect(label.lower(), label, measure, *numbers) for label, *numbers in rows]
    result = pool(studies, ("statin", "no statin", "dementia"))
    assert isinstance(result, Pooled)
    return result


def svg_text(svg: str) -> str:
    root = ET.fromstring(svg)
    return " ".join(" ".join(element.itertext()) for element in root.iter("{http://www.w3.org/2000/svg}text"))


def test_a_ratio_s_forest_plot_names_every_study_the_measure_and_the_method() -> None:
    rows = [
        ("Lindqvist 2019", 0.81, 0.70, 0.94),
        ("Nielsen & Sørensen 2020", 0.78, 0.64, 0.95),
        ("Chen 2021", 1.05, 0.88, 1.25),
    ]
    svg, png = forest_plot(pooled("hazard ratio", rows))
    text = svg_text(svg)
    for label, *_ in rows:
        assert label in text
    assert "Hazard ratio" in text and "DerSimonian-Laird" in text and "Prediction interval" in text
    assert "τ²" in text and "I²" in text
    assert png.startswith(PNG_SIGNATURE)


def test_a_difference_s_forest_plot_with_two_studies_has_no_prediction_interval() -> None:
    svg, png = forest_plot(pooled("mean difference", [("Smith 2020", -0.3, -1.2, 0.6), ("Jones 2021", 0.5, -0.1, 1.1)]))
    text = svg_text(svg)
    assert "Smith 2020" in text and "Jones 2021" in text and "Prediction interval" not in text
    assert png.startswith(PNG_SIGNATURE)


def test_drawing_leaves_no_figure_or_setting_behind() -> None:
    before = dict(mpl.rcParams)
    forest_plot(pooled("odds ratio", [("A 2001", 1.2, 0.9, 1.6), ("B 2002", 1.5, 1.1, 2.0)]))
    assert dict(mpl.rcParams) == before
    pyplot = sys.modules.get("matplotlib.pyplot")
    assert pyplot is None or pyplot.get_fignums() == []
