"""What a work's own fields are read from: shared sentences, affiliations and other works' parts left out."""

from __future__ import annotations

import json

import pandas as pd

from hysem_assets.extraction.extractive import from_protocol
from hysem_assets.extraction.own_text import front_matter_lines, normal_form, own_texts, shared_sentences
from hysem_assets.extraction.rows import documents_to_extract, extracted_rows
from hysem_assets.settings.backends import ExtractiveConfig
from hysem_assets.settings.profile import ExtractionSettings
from hysem_assets.settings.protocols import load_protocol

TEMPLATE = (
    "Studies of {method} have multiplied, but they differ in exposure assessment, in the outcomes they count "
    "and in how they model time, which makes their estimates hard to compare."
)
OWN = [
    "We followed 2,315 adults in Denmark for incident stroke.",
    "Admissions for heart failure in Madrid were related to daily ozone.",
    "A panel of 48 schoolchildren in Oslo wore personal monitors.",
    "Records of 9,120 deaths in Hanoi were linked to satellite PM2.5.",
]


def spans_text(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[start:end] for start, end in spans]


def test_a_sentence_in_three_works_is_shared_however_its_template_is_filled() -> None:
    methods = ["random forests", "gradient boosting", "support vector machines", "neural networks"]
    texts = [f"{TEMPLATE.format(method=m)} {own}" for m, own in zip(methods, OWN, strict=True)]
    texts[1] = texts[1].replace("hard to compare", "difficult to compare")  # one more word changed
    shared = shared_sentences(texts)
    for text, found in zip(texts, shared, strict=True):
        assert spans_text(text, found) == [text[: text.index(".") + 1]]  # the template, never the own sentence


def test_a_sentence_in_two_works_and_sentences_on_one_subject_are_not_shared() -> None:
    twice = [f"{TEMPLATE.format(method='random forests')} {own}" for own in OWN[:2]] + OWN[2:]
    assert shared_sentences(twice) == [[], [], [], []]
    # one subject, other words: each of these stands in one work only
    alike = [
        "We related daily ozone to admissions for heart failure in Madrid between 2010 and 2018.",
        "We related daily PM2.5 to deaths from stroke in Hanoi between 2012 and 2019.",
        "We related weekly NO2 to visits for arrhythmia in Oslo between 2005 and 2015.",
    ]
    assert shared_sentences(alike) == [[], [], []]


def test_numbers_and_punctuation_do_not_make_a_sentence_new() -> None:
    assert normal_form("The analysis used 24,779 records (linked).") == normal_form(
        "The analysis used 18,838 records linked"
    )
    texts = [
        f"The analysis used {n:,} records linked to daily exposure estimates at the address."
        for n in (24779, 18838, 91)
    ]
    assert all(found == [(0, len(text))] for text, found in zip(texts, shared_sentences(texts), strict=True))


def test_affiliations_and_publication_notes_are_front_matter_but_study_sentences_naming_a_hospital_are_not() -> None:
    text = (
        "# Ozone and heart failure\n\n"
        "Ana Ruiz 1 , Lars Berg 2\n\n"
        "1 Department of Cardiology, University of Oslo, Oslo, Norway\n\n"
        "2 Institute of Public Health, Formosa Medical University, Taipei, Taiwan\n\n"
        "Correspondence: ana.ruiz@example.org\n\n"
        "Heart Reports 6(5): e214 (2022) · doi:10.9999/hr.2022.214\n\n"
        "## Methods\n\n"
        "Patients were recruited at the Department of Cardiology, Hospital del Mar, Madrid, Spain.\n"
    )
    lines = spans_text(text, front_matter_lines(text))
    assert lines == [
        "1 Department of Cardiology, University of Oslo, Oslo, Norway",
        "2 Institute of Public Health, Formosa Medical University, Taipei, Taiwan",
        "Correspondence: ana.ruiz@example.org",
        "Heart Reports 6(5): e214 (2022) · doi:10.9999/hr.2022.214",
    ]


def test_funding_conflicts_and_acknowledgements_are_blanked_with_every_offset_kept() -> None:
    text = (
        "# A cohort\n\n## Methods\n\nWe followed 812 adults in Bergen.\n\n"
        "## Acknowledgements\n\nWe thank the nurses of Tromsø.\n\n"
        "## Results\n\nStroke occurred in 41.\n\n"
        "Funding: The Lyon Heart Foundation funded the work.\n\n"
        "Conflicts of interest: none declared.\n"
    )
    [own] = own_texts([text])
    assert len(own.text) == len(text) and own.text.count("\n") == text.count("\n")
    assert "Bergen" in own.text and "Stroke occurred in 41." in own.text
    assert "Tromsø" not in own.text and "Lyon" not in own.text and "none declared" not in own.text
    assert own.excluded == 3 and own.shared == 0


def test_a_place_only_in_the_affiliations_is_not_the_study_place() -> None:
    markdown = (
        "# Ozone and admissions for heart failure\n\n"
        "Ana Ruiz 1 , Lars Berg 2\n\n"
        "1 Department of Cardiology, University of Oslo, Oslo, Norway\n\n"
        "2 School of Public Health, University of Toronto, Toronto, Canada\n\n"
        "## Methods\n\n"
        "We analysed 21,406 admissions for heart failure in five hospitals of Madrid between 2013 and 2019 "
        "with gradient boosting models of daily ozone.\n"
    )
    corpus = pd.DataFrame([{"cluster_id": "w1", "title": "Ozone and admissions for heart failure", "abstract": None}])
    parsed = pd.DataFrame([{"cluster_id": "w1", "markdown": markdown, "error": None}])
    protocol = load_protocol("pollution-cardio-ml")
    settings = ExtractionSettings()
    geography = {}
    for own in (False, True):
        backend = from_protocol(protocol, ExtractiveConfig(backend="extractive"), own_values=own)
        documents = documents_to_extract(corpus, parsed, own_values=own)
        [row] = extracted_rows(documents, protocol, backend, settings, own_values=own)
        geography[own] = row["geography"]
        evidence = json.loads(row["evidence"])["geography"]
    assert {"Norway", "Canada"} & set(geography[False])  # read from the affiliations without the rule
    assert geography[True] == ["Madrid"]
    assert [entry["sentence"] for entry in evidence] == [markdown[markdown.index("We analysed") :].strip()]
