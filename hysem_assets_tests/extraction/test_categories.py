"""Choosing a category from the generic protocol's designs: cue phrases, their weights, and the classic traps."""

from __future__ import annotations

import pytest

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.extraction.categories import choose_category, cue_phrases
from hysem_assets.extraction.reading import Reading
from hysem_assets.settings.protocols import load_protocol

DESIGNS = load_protocol("generic").field("study_design").values or {}


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder()


def design(text: str, encoder: Encoder) -> str | None:
    chosen = choose_category(Reading(text, encoder), DESIGNS)
    return chosen[0] if chosen else None


def test_cue_phrases_come_from_the_description_with_variants() -> None:
    cues = cue_phrases(
        "prospective or retrospective cohort study, randomised trial, a long descriptive phrase of many words"
    )
    assert {"prospective cohort study", "retrospective cohort study", "randomised trial", "randomized trial"} <= set(
        cues
    )
    assert "a long descriptive phrase of many words" not in cues


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Antibiotic prophylaxis before hernia repair: a meta-analysis of randomised controlled trials\n\n"
            "We searched MEDLINE and pooled 24 randomised controlled trials with a random-effects model.",
            "systematic review or meta-analysis",
        ),
        (
            "Vitamin D and fractures: a cohort study nested in a randomised trial\n\n"
            "This cohort study nested in a randomised trial followed 900 participants for falls.",
            "cohort study",
        ),
        (
            "Talc exposure and ovarian cancer\n\nIn this case-control study nested within a prospective cohort of "
            "nurses, cases were matched to four controls each.",
            "case-control study",
        ),
        (
            "Hepatitis B vaccination coverage\n\nWe surveyed 1,200 randomly selected households in a cross-sectional "
            "survey in rural districts.",
            "cross-sectional study",
        ),
        (
            "Viral load and adherence in people living with HIV\n\nWe performed a cross-sectional analysis of baseline "
            "data from a cohort of 3,100 adults.",
            "cross-sectional study",
        ),
        (
            "Early versus delayed cholecystectomy\n\nPatients with gallstone pancreatitis were randomly assigned to "
            "early or delayed surgery.",
            "randomised controlled trial",
        ),
        (
            "Giant cell tumour of the sacrum\n\nWe present a case of a 40-year-old man treated with denosumab.",
            "case series or case report",
        ),
        # a list of the design's adjectives reads as one phrase
        (
            "Pantoprazole and quality of life in heartburn: a prospective, randomized, double blind comparative "
            "study with nizatidine\n\nHealth-related quality of life is impaired in untreated patients.",
            "randomised controlled trial",
        ),
        # ... but the trials a review selects, named twice in one sentence, are still the studies it reviews
        (
            "Drugs for urinary incontinence in women\n\nPurpose: To conduct a systematic literature review of drugs "
            "for urgency incontinence. Study Selection: Randomized, controlled trials (RCTs) reported in English.",
            "systematic review or meta-analysis",
        ),
        (
            "Acid suppression and ulcers\n\nThis review considers only data from well-controlled, randomized, "
            "double-blind clinical studies of ulcer prevention.",
            "narrative review or editorial",
        ),
    ],
)
def test_designs_and_traps(text: str, expected: str, encoder: Encoder) -> None:
    assert design(text, encoder) == expected


def test_cases_alone_are_no_case_control_study_and_unrelated_text_has_no_design(encoder: Encoder) -> None:
    assert (
        design("Tuberculosis\n\nWe describe 12 cases of drug-resistant tuberculosis.", encoder) != "case-control study"
    )
    assert design("Budget news\n\nThe committee met on Tuesday to discuss the budget.", encoder) is None
