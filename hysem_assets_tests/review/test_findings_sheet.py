"""The evidence table's findings sheet: the included studies' findings, preferred rows first, lists as text."""

from __future__ import annotations

import numpy as np

from hysem_assets.review.evidence import FINDING_COLUMNS, findings_sheet, readable

from . import tables


def test_the_sheet_holds_the_included_studies_findings_preferred_first() -> None:
    sheet = findings_sheet(["w1", "w2"], tables.findings(), tables.library())

    assert list(sheet.columns) == list(FINDING_COLUMNS)
    rows = list(zip(sheet["cluster_id"], sheet["outcome"], sheet["source"], sheet["preferred"], strict=True))
    assert rows == [
        ("w1", "stroke", "fulltext", True),
        ("w1", "major bleeding", "fulltext", True),
        ("w2", "stroke", "abstract", True),
        ("w1", "stroke", "abstract", False),  # its full text reports it too
    ]
    assert sheet["abstract_only"].tolist() == [False, False, True, False]
    assert sheet.loc[0, "citation"] == "Doe, J. (w1). Study w1." and sheet.loc[0, "estimate"] == 0.8
    assert sheet["measure"].tolist() == ["hazard ratio", "odds ratio", "hazard ratio", "hazard ratio"]
    assert sheet["estimate"].isna().tolist() == [False, False, False, True]


def test_list_values_are_text_never_a_python_or_numpy_repr() -> None:
    findings = tables.findings().astype({"evidence": object, "section": object})
    findings.at[0, "evidence"] = np.array(["First sentence.", "Second sentence."])
    findings.at[0, "section"] = ["Results", "Discussion"]
    sheet = findings_sheet(["w1"], findings, tables.library())
    assert sheet.loc[0, "evidence"] == "First sentence.; Second sentence."
    assert sheet.loc[0, "section"] == "Results; Discussion"
    assert readable(np.array(["stroke", "heart failure"])) == "stroke; heart failure"
    assert readable(np.array([])) == "" and readable('["a", 2.0]') == "a; 2"


def test_a_query_without_findings_has_an_empty_sheet() -> None:
    sheet = findings_sheet(["w1", "w2"], tables.findings().iloc[:0], tables.library())
    assert sheet.empty and list(sheet.columns) == list(FINDING_COLUMNS)
