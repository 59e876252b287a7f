"""Category values a record's source states: PubMed publication types and the other sources' types."""

import pytest
from pydantic import ValidationError

from hysem_assets.extraction.publication_types import record_types, stated_values, with_stated_values
from hysem_assets.settings.protocols import ProtocolField, load_protocol
from hysem_assets.sources.pubmed_xml import parse_efetch
from hysem_assets_tests.paths import REALDATA, needs_realdata

GENERIC = load_protocol("generic")


def test_types_compare_without_case_or_hyphens_and_the_first_listed_value_wins() -> None:
    types = record_types("Journal Article; Meta-Analysis; Randomized Controlled Trial", "journal article")
    assert types == ["Journal Article", "Meta-Analysis", "Randomized Controlled Trial", "journal article"]
    # systematic reviews are listed before trials in the generic protocol
    assert stated_values(GENERIC, types) == {"study_design": ("systematic review or meta-analysis", "Meta-Analysis")}
    assert stated_values(GENERIC, ["randomized-controlled_trial"])["study_design"][0] == "randomised controlled trial"
    assert stated_values(GENERIC, record_types(None, "editorial"))["study_design"][0] == "narrative review or editorial"


def test_broad_types_state_nothing_and_the_text_decides() -> None:
    for broad in ("Review", "Observational Study", "Journal Article", "journal-article", "Letter"):
        assert stated_values(GENERIC, [broad]) == {}
    values, evidence = with_stated_values(GENERIC, {"study_design": "cohort study"}, {"study_design": []}, ["Review"])
    assert values == {"study_design": "cohort study"} and evidence == {"study_design": []}


@needs_realdata
def test_a_real_pubmed_case_report_is_one_whatever_its_abstract_says() -> None:
    records = [
        record
        for path in sorted((REALDATA / "pubmed_metapub_efetch").glob("*.xml"))
        for record in parse_efetch(path.read_bytes(), where=path.name)
    ]
    reports = [r for r in records if "Case Reports" in record_types(r["publication_types"])]
    assert reports, "the real efetch files hold case reports"
    for record in reports:
        types = record_types(record["publication_types"])
        values, evidence = with_stated_values(GENERIC, {"study_design": None}, {}, types)
        assert values["study_design"] == "case series or case report", types
        assert evidence["study_design"][0]["sentence"] == "Publication type: Case Reports"


def test_a_protocol_may_map_only_its_own_category_values() -> None:
    with pytest.raises(ValidationError, match="does not allow"):
        ProtocolField(
            name="design", type="category", description="d", values=["trial"], publication_types={"cohort": ["X"]}
        )
    with pytest.raises(ValidationError, match="category fields only"):
        ProtocolField(name="design", type="text", description="d", publication_types={"trial": ["X"]})
