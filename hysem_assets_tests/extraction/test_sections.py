"""Parts of a work: methods and results outrank the introduction, for values and for their evidence."""

from __future__ import annotations

import json

import pandas as pd

from hysem_assets.core.text import sentence_spans
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.extraction.designs import design_values
from hysem_assets.extraction.evidence import evidence_for
from hysem_assets.extraction.extractive import from_protocol
from hysem_assets.extraction.reading import Reading
from hysem_assets.extraction.rows import documents_to_extract, extracted_rows
from hysem_assets.extraction.sections import BACKGROUND, DISCUSSION, EXCLUDED, OWN, excluded_parts, sentence_weights
from hysem_assets.settings.dictionaries import load_dictionary
from hysem_assets.settings.environment import config_dir
from hysem_assets.settings.profile import ExtractionSettings
from hysem_assets.settings.protocols import load_protocol

PAPER = (
    "# Ozone and heart failure admissions\n\n"
    "## 1 Introduction\n\n"
    "Earlier cohort studies of particulate matter in Beijing linked it to stroke.\n\n"
    "## 2 Methods\n\n"
    "### 2.1 Study population\n\n"
    "We used a time-stratified case-crossover design with 21,406 admissions for heart failure in Madrid.\n\n"
    "## 3 Results\n\n"
    "Ozone raised admissions for heart failure by 2.1%.\n\n"
    "## 4 Discussion\n\n"
    "Cohort studies in Beijing found larger effects.\n\n"
    "## Funding\n\n"
    "Supported by a grant of the city of Lyon.\n"
)


def weights_of(text: str) -> dict[str, float]:
    spans = sentence_spans(text)
    return {text[start:end]: weight for (start, end), weight in zip(spans, sentence_weights(text, spans), strict=True)}


def test_headings_and_abstract_labels_weigh_their_sentences() -> None:
    weights = weights_of(PAPER)
    assert weights["Earlier cohort studies of particulate matter in Beijing linked it to stroke."] == BACKGROUND
    assert weights["Ozone raised admissions for heart failure by 2.1%."] == OWN
    assert weights["Cohort studies in Beijing found larger effects."] == DISCUSSION
    assert weights["Supported by a grant of the city of Lyon."] == EXCLUDED
    assert weights["# Ozone and heart failure admissions"] == OWN  # a title is no part's name
    assert BACKGROUND < DISCUSSION < OWN
    abstract = (
        "BACKGROUND: Stroke is common in Beijing. METHODS: We followed 812 adults in Bergen.\n\n"
        "Results: Stroke occurred in 41.\n\nFUNDING: The Lyon Heart Foundation."
    )
    assert list(weights_of(abstract).values()) == [BACKGROUND, OWN, OWN, EXCLUDED]
    assert [abstract[a:b] for a, b in excluded_parts(abstract)] == ["FUNDING: The Lyon Heart Foundation."]


def test_evidence_is_the_methods_sentence_where_the_introduction_says_the_same() -> None:
    protocol = load_protocol("pollution-cardio-ml")
    values = {"geography": ["Beijing", "Madrid"], "health_outcome": ["heart failure", "stroke"], "sample_size": 21406}
    evidence = evidence_for(PAPER, protocol, values)
    assert [entry["sentence"] for entry in evidence["geography"]] == [
        "Cohort studies in Beijing found larger effects.",  # the discussion outranks the introduction
        "We used a time-stratified case-crossover design with 21,406 admissions for heart failure in Madrid.",
    ]
    assert evidence["sample_size"][0]["sentence"].startswith("We used a time-stratified")
    # without parts, the first place a value stands is its evidence, as before
    first = evidence_for(PAPER, protocol, values, parts=False)
    assert first["geography"][0]["sentence"].startswith("Earlier cohort studies")


def test_dictionary_terms_of_the_methods_come_before_those_of_the_introduction() -> None:
    protocol = load_protocol("pollution-cardio-ml")
    backend = from_protocol(protocol)
    matcher = load_dictionary(config_dir() / "dictionaries" / "geography.yaml").matcher
    assert Reading(PAPER, backend.encoder).ranked_terms(matcher)[0] == "Madrid"
    assert Reading(PAPER, backend.encoder, parts=False).ranked_terms(matcher)[0] == "Beijing"


def test_the_design_is_a_category_chosen_from_the_methods_not_the_introduction() -> None:
    protocol = load_protocol("pollution-cardio-ml")
    corpus = pd.DataFrame([{"cluster_id": "w1", "title": "Ozone and heart failure admissions", "abstract": None}])
    parsed = pd.DataFrame([{"cluster_id": "w1", "markdown": PAPER, "error": None}])
    backend = from_protocol(protocol)
    [row] = extracted_rows(documents_to_extract(corpus, parsed), protocol, backend, ExtractionSettings())
    assert row["study_type"] == "case-crossover"  # "cohort studies" stand twice, but in others' parts
    [entry] = json.loads(row["evidence"])["study_type"]
    assert entry["sentence"].startswith("We used a time-stratified case-crossover design")


def test_a_design_answer_maps_onto_its_categories_or_stays_empty_with_its_reason() -> None:
    protocol = load_protocol("pollution-cardio-ml")  # study_type: text with the study_type dictionary
    generic = load_protocol("generic")  # study_design: a category field
    mapped, reasons = design_values(protocol, {"study_type": "We used a time-stratified case-crossover design."})
    assert mapped["study_type"] == "case-crossover" and reasons == {}
    mapped, reasons = design_values(protocol, {"study_type": "The analysis used 24,779 records linked to exposure."})
    assert mapped["study_type"] is None
    assert reasons["study_type"].startswith("'The analysis used 24,779 records linked to exposure.' names none of")
    mapped, reasons = design_values(generic, {"study_design": "cohort study"})
    assert mapped["study_design"] == "cohort study" and reasons == {}
    mapped, reasons = design_values(generic, {"study_design": None})
    assert mapped["study_design"] is None and "the text names none of the 11 categories" in reasons["study_design"]


def test_an_empty_design_keeps_its_reason_beside_the_evidence() -> None:
    protocol = load_protocol("pollution-cardio-ml")
    corpus = pd.DataFrame([{"cluster_id": "w1", "title": "Air pollution", "abstract": "Air pollution harms hearts."}])
    backend = from_protocol(protocol)
    parsed = pd.DataFrame({"cluster_id": [], "markdown": [], "error": []})
    [row] = extracted_rows(documents_to_extract(corpus, parsed), protocol, backend, ExtractionSettings())
    assert row["study_type"] is None
    assert json.loads(row["evidence"])["study_type"] == [
        {"value": None, "reason": "the text names none of the 12 categories of study_type"}
    ]


def test_the_reading_scales_similarity_by_the_part() -> None:
    encoder = Encoder(None)
    text = "## Introduction\n\nWe studied ozone in Madrid.\n\n## Methods\n\nWe studied ozone in Madrid."
    reading = Reading(text, encoder)
    target = reading.embed_constant(["ozone in Madrid"])[0]
    similarity = reading.sentence_similarity(target)
    heading_free = [i for i, s in enumerate(reading.sentences) if not s.startswith("#")]
    introduction, methods = (float(similarity[i]) for i in heading_free)
    assert abs(introduction - BACKGROUND * methods) < 1e-5 and methods > introduction
