"""Evidence of extracted values: the sentence each value stands in, with offsets into the document."""

from __future__ import annotations

from hysem_assets.extraction.evidence import evidence_for, locate_evidence
from hysem_assets.settings.protocols import load_protocol

GENERIC = load_protocol("generic")
TEXT = (
    "Laparoscopic versus open appendectomy in children: a randomised controlled trial\n\n"
    "METHODS: We randomly assigned 1,204 children with acute appendicitis to laparoscopic or open "
    "appendectomy in 9 hospitals in Norway. Children were followed for 18 months.\n\n"
    "RESULTS: Wound infection was less frequent after laparoscopy (OR 0.52, 95% CI 0.31–0.86). "
    "Length of  hospital stay was shorter."
)


def test_every_entry_quotes_its_sentence_by_offsets() -> None:
    values = {
        "study_design": "randomised controlled trial",
        "population": "children with acute appendicitis",
        "sample_size": 1204,
        "intervention_or_exposure": ["laparoscopic appendectomy", "Laparoscopic"],
        "comparator": "open appendectomy",
        "outcomes": ["wound infection", "length of hospital stay"],
        "effect_estimates": [{"measure": "odds ratio", "value": 0.52, "ci_lower": 0.31, "ci_upper": 0.86}],
        "setting": "Norway",
        "follow_up": 1.5,
    }
    found = evidence_for(TEXT, GENERIC, values)
    assert set(found) == set(values)
    for entries in found.values():
        for entry in entries:
            assert TEXT[entry["start"] : entry["end"]] == entry["sentence"]
    assert found["sample_size"][0]["sentence"].startswith("METHODS: We randomly assigned 1,204")
    assert found["follow_up"][0]["sentence"] == "Children were followed for 18 months."  # 1.5 years, written in months
    assert "OR 0.52" in found["effect_estimates"][0]["sentence"]
    assert found["study_design"][0]["start"] == 0  # the title names the design
    assert found["outcomes"][1]["sentence"] == "Length of  hospital stay was shorter."  # other spacing


def test_values_a_model_rephrased_fall_back_to_the_sentence_sharing_their_words() -> None:
    field = GENERIC.field("population")
    (entry,) = locate_evidence(TEXT, field, "appendicitis in children")
    assert "acute appendicitis" in entry["sentence"]
    assert locate_evidence(TEXT, field, "adults with gout") == []
    assert locate_evidence(TEXT, GENERIC.field("sample_size"), 999) == []
    assert locate_evidence(TEXT, field, None) == [] and evidence_for(TEXT, GENERIC, {}) == {}
