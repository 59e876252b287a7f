"""The embedded extractor built from a review protocol: every generic field from a composed abstract."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.extraction.evidence import evidence_for
from hysem_assets.extraction.extractive import fallback_for, from_protocol, method_for, rule_for
from hysem_assets.settings.protocols import Protocol, load_protocol

ABSTRACT = (
    "Adjuvant capecitabine and recurrence in patients with resected colorectal cancer: a prospective cohort study\n\n"
    "BACKGROUND: Recurrence after curative surgery for colorectal cancer remains common. METHODS: We conducted a "
    "prospective cohort study in 14 hospitals in Denmark. A total of 2,315 patients with stage III colorectal cancer "
    "who underwent curative resection were enrolled between 2010 and 2016. Patients treated with adjuvant "
    "capecitabine were compared with patients who received surveillance alone. The primary outcome was disease-free "
    "survival; secondary outcomes were overall survival and postoperative complications. RESULTS: During a median "
    "follow-up of 5.2 years, 512 patients had a recurrence. Adjuvant capecitabine was associated with a lower risk "
    "of recurrence (HR 0.78, 95% CI 0.66–0.92) and of death (HR 0.85, 95% CI 0.71–1.02). CONCLUSIONS: Adjuvant "
    "capecitabine reduced the risk of recurrence after resection of colorectal cancer."
)


def test_each_field_type_gets_its_method() -> None:
    generic, sample = load_protocol("generic"), load_protocol("pollution-cardio-ml")
    assert {spec.name: method_for(spec) for spec in generic.fields} == {
        "study_design": "category",
        "population": "tagger",
        "sample_size": "count",
        "intervention_or_exposure": "tagger",
        "comparator": "tagger",
        "outcomes": "tagger",
        "effect_estimates": "effect_estimates",
        "setting": "span",
        "follow_up": "duration",
    }
    # where the tagger finds nothing, each of its fields falls back to the rule its type gives
    assert {spec.name: fallback_for(spec) for spec in generic.fields if spec.method} == {
        "population": "phrases",
        "intervention_or_exposure": "phrases",
        "comparator": "span",  # the arm a cue announces, not ranked noun phrases
        "outcomes": "phrases",
    }
    assert rule_for(generic.field("comparator")) == "phrases"
    assert method_for(sample.field("study_type")) == "category"  # text with a dictionary: a design column
    assert method_for(sample.field("study_type"), designs=False) == "sentences"  # as before design columns
    assert method_for(sample.field("ml_methods_used")) == "dictionary"
    assert method_for(sample.field("metrics")) == "metric_values"


def test_all_nine_generic_fields_from_a_composed_abstract(tmp_path: Path) -> None:
    protocol = load_protocol("generic")
    backend = build_backend({"backend": "extractive", "cache_dir": tmp_path}, protocol=protocol)
    (result,) = extract_documents_sync([Document("d1", ABSTRACT)], protocol.extraction_fields(), backend)
    values = result.values
    assert result.status == "ok"
    assert values["study_design"] == "cohort study"
    assert "colorectal cancer" in values["population"][0]  # the main population first
    assert values["sample_size"] == 2315
    assert "adjuvant capecitabine" in [term.lower() for term in values["intervention_or_exposure"]]
    assert any("surveillance" in value for value in values["comparator"])
    outcomes = [term.lower() for term in values["outcomes"]]
    assert "disease-free survival" in outcomes and any(term.startswith("overall survival") for term in outcomes)
    assert [(e["measure"], e["value"], e["ci_lower"], e["ci_upper"]) for e in values["effect_estimates"]] == [
        ("hazard ratio", 0.78, 0.66, 0.92),
        ("hazard ratio", 0.85, 0.71, 1.02),
    ]
    assert "Denmark" in values["setting"]
    assert values["follow_up"] == 5.2
    evidence = evidence_for(ABSTRACT, protocol, values)
    assert set(evidence) == {spec.name for spec in protocol.fields}
    for entries in evidence.values():
        assert all(ABSTRACT[e["start"] : e["end"]] == e["sentence"] for e in entries)


def test_the_model_id_names_the_protocol_so_its_edits_invalidate_cached_answers() -> None:
    generic, sample = load_protocol("generic"), load_protocol("pollution-cardio-ml")
    generic_backend, sample_backend = from_protocol(generic), from_protocol(sample)
    assert generic.fingerprint in generic_backend.model and sample.fingerprint in sample_backend.model
    assert generic_backend.model != sample_backend.model
    edited = Protocol.model_validate({**generic.model_dump(), "description": "edited"})
    assert from_protocol(edited).model != generic_backend.model
    assert build_backend({"backend": "extractive", "cache": False}).inner.protocol.name == "generic"


def test_a_field_the_protocol_lacks_stays_empty() -> None:
    backend = from_protocol(load_protocol("generic"))
    assert backend.extract("Nothing to see here.", ["not_a_field", "sample_size"]) == {
        "not_a_field": None,
        "sample_size": None,
    }
    with pytest.raises(Exception, match="JSON schema"):
        asyncio.run(backend.complete([{"role": "user", "content": "hi"}]))
