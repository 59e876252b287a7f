from __future__ import annotations

import pytest

from hysem_assets.dedup.explain import explain_pair

from .builders import table

PAPER = {
    "title": "Groundwater recharge estimates from tracer profiles in semi-arid catchments",
    "author": "Moreau, Luc and Singh, Priya",
    "year": 2014,
    "journal": "Journal of Applied Hydrology",
    "volume": "51",
    "pages": "110-118",
}


def test_a_direct_match_lists_its_evidence_and_link():
    frame = table(PAPER, {**PAPER, "title": PAPER["title"].upper() + "."})
    explanation = explain_pair(frame, "r1", "r2")
    assert explanation.merged and explanation.direct.duplicate
    assert dict(explanation.direct.evidence)["title"] == 8
    assert [step[:2] for step in explanation.path] == [("r1", "r2")]
    assert any("evidence for: title +8" in line for line in explanation.lines())


def test_a_merge_through_a_third_record_shows_the_chain():
    frame = table(
        {**PAPER, "doi": "10.5555/gw.1"},
        {"doi": "10.5555/GW.1", "title": "Groundwater recharge (corrected version)"},
        {**PAPER, "author": None, "year": None, "journal": None, "volume": None, "pages": None},
    )
    explanation = explain_pair(frame, "r2", "r3")
    assert explanation.merged and not explanation.direct.duplicate
    assert [(a, b, rule) for a, b, rule, _ in explanation.path] == [("r2", "r1", "doi"), ("r1", "r3", "title")]


def test_a_refused_pair_names_the_difference():
    frame = table(PAPER, {**PAPER, "pages": "410-418", "volume": "52"})
    explanation = explain_pair(frame, "r1", "r2")
    assert not explanation.merged and explanation.path == ()
    assert explanation.direct.reason == "volumes differ (51, 52)"
    assert "'r1' and 'r2': not merged" in explanation.lines()[0]


def test_unknown_ids_are_named():
    with pytest.raises(ValueError, match="No record with ID 'r9'"):
        explain_pair(table(PAPER), "r1", "r9")
