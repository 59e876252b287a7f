"""Extractive answers worth reading, on composed abstracts of several fields: which sentences can be
claims, no repeats, spread across sources, most relevant first, a gist, and honest non-answers."""

from __future__ import annotations

import asyncio

import pytest

from hysem_assets.core.sentences import claim_text, glued_labels, metadata_reason, normalized, strict_label
from hysem_assets.qa.claims import (
    NO_DIRECT_EVIDENCE,
    Candidate,
    closest_findings,
    gist,
    render_answer,
    reports_null_result,
    select_claims,
)
from hysem_assets.qa.drafts import Claim, Draft
from hysem_assets.qa.embedded import ExtractiveGenerator, RuleAuditor
from hysem_assets.qa.loop import revise_until_approved
from hysem_assets.qa.sources import ContextChunk, LibraryRecord

RECORDS = {
    key: LibraryRecord(key, f"10.9/{key}", None, f"({name}, {year})", f"{name} A. Study. {year}.")
    for key, name, year in [
        ("soil", "Ruiz", 2019),
        ("mulch", "Tanaka", 2020),
        ("tillage", "Okafor", 2021),
        ("grazing", "Lindqvist", 2018),
        ("bridge", "Moreau", 2016),
    ]
}
ABSTRACTS = {
    "soil": "BACKGROUND: Cover crops may retain soil nitrogen between cash crops. METHODS: We sampled 120 plots "
    "over three seasons in semi-arid farms. RESULTS: Soil nitrogen was 12% higher under cover crops than in bare "
    "fallow. CONCLUSIONS: Cover crops retained nitrogen in semi-arid soils. Keywords: cover crops; nitrogen; "
    "semi-arid; fallow. © 2019 The Authors. Published by Agronomy Press. Funding: This work was supported by a "
    "national research council grant.",
    "mulch": "Straw mulch raised soil nitrogen by 8% in irrigated maize fields over two years. "
    "Conclusions: Straw mulch raised soil nitrogen by 8% in irrigated maize fields over two years. "
    "Trial registration: AGR-2020-114.",
    "tillage": "Reduced tillage did not significantly change soil nitrogen compared with ploughing after four years. "
    "Yields were similar in both systems.",
    "grazing": "Rotational grazing increased pasture biomass by a fifth on upland farms. "
    "Soil nitrogen was not measured.",
    "bridge": "Weld toes at rib-to-deck joints initiated most fatigue cracks in steel bridge decks. "
    "Cracks grew faster under heavy-vehicle lanes.",
}
QUESTION = "Which farming practices change soil nitrogen?"


def chunk(key: str, evidence: str = "abstract") -> ContextChunk:
    return ContextChunk(f"{key}:0", "Abstract", ABSTRACTS[key], RECORDS[key].metadata(0, evidence), 1.0, ("dense",))


CONTEXT = [chunk(key) for key in ABSTRACTS]


@pytest.mark.parametrize(
    "line",
    [
        "Keywords: causal forest; heterogeneity; air pollution",
        "KEY WORDS: sleep; adolescents; screen time; melatonin",
        "cover crops; nitrogen; semi-arid; fallow",
        "Conclusions:",
        "Materials and Methods",
        "2.3 Statistical analysis",
        "© 2019 The Authors. Published by Agronomy Press.",
        "Copyright 2020 Elsevier Ltd. All rights reserved.",
        "Funding: This work was supported by a national research council grant.",
        "This study was funded by the Wellcome Trust under grant 204.",
        "Trial registration: ClinicalTrials.gov NCT01234567.",
        "The authors declare no competing interests in relation to this work.",
        "Figure 3. Crack growth rate by lane and season across both decks.",
        "Available online at https://example.org/data for all readers.",
        "and fell asleep 25 minutes later than their peers on school nights.",
    ],
)
def test_labels_headings_and_metadata_lines_are_never_claims(line):
    assert claim_text(line) is None


@pytest.mark.parametrize(
    "line, claim",
    [
        (
            "CONCLUSIONS: Cover crops retained nitrogen in semi-arid soils.",
            "Cover crops retained nitrogen in semi-arid soils.",
        ),
        (
            "Main outcome measures: Falls over two years were counted in each arm.",
            "Falls over two years were counted in each arm.",
        ),
        (
            "Two designs were compared: welded and bolted joints under cyclic loading.",
            "Two designs were compared: welded and bolted joints under cyclic loading.",
        ),
        (
            "Patients who were supported by family caregivers had fewer readmissions.",
            "Patients who were supported by family caregivers had fewer readmissions.",
        ),
    ],
)
def test_a_finding_is_quoted_whole_with_its_structure_label_removed(line, claim):
    assert claim_text(line) == claim
    assert metadata_reason(line) is None


@pytest.mark.parametrize(
    ("sentence", "label"),
    [
        ("BACKGROUND: We designed a program.", "BACKGROUND"),
        ("Main outcome measures: Costs and quality of life.", "Main outcome measures"),
        ("Materials and methods: Records were read.", "Materials and methods"),
        ("PARTICIPANTS Family carers of people with dementia.", "PARTICIPANTS"),
        ("Keywords: stroke; rehabilitation; nursing", "Keywords"),
        ("Smoking cessation interventions: a review of trials", None),
        ("Developing internet-based health interventions: a guide", None),
        ("STUDY DESIGN, SIZE, DURATION: A guideline.", "STUDY DESIGN, SIZE, DURATION"),
        ("HIV/AIDS: an update for clinicians", None),
        ("MethodsWe included 119 patients.", "Methods"),
        ("PubMed holds the records.", None),
    ],
)
def test_a_strict_label_is_made_of_structure_words_or_capitals(sentence, label):
    assert strict_label(sentence)[0] == label


def test_a_label_glued_to_its_sentence_is_found_and_camel_case_words_are_not():
    text = "Study DesignRetrospective cohort.ObjectiveIn general, PubMed and McDonald records. BackgroundThe test"
    assert [text[start:end] for start, end in glued_labels(text)] == ["Study Design", "Objective", "Background"]


def test_a_title_without_a_full_stop_is_a_claim_only_as_a_works_whole_text():
    title = "Urban heat islands and night-time mortality in older adults"
    assert claim_text(title) is None and claim_text(title, whole_title=True) == title


def test_the_same_sentence_with_and_without_its_label_is_one_claim():
    assert normalized("Conclusions: Straw mulch raised soil nitrogen.") == normalized(
        "Straw mulch raised soil nitrogen"
    )


def draft_of(question: str, context: list[ContextChunk], embedder, **options) -> Draft:
    generator = ExtractiveGenerator(embedder, **options)
    return asyncio.run(generator.draft(question, context))


def test_extractive_claims_have_no_repeats_no_metadata_and_come_from_several_sources(embedder):
    draft = draft_of(QUESTION, CONTEXT, embedder, claims=5)
    texts = [claim.text for claim in draft.claims]
    keys = [normalized(text) for text in texts]
    assert len(set(keys)) == len(keys)
    assert not any(a != b and (a in b or b in a) for a in keys for b in keys)
    assert all(metadata_reason(text) is None for text in texts)
    assert not any(word in text for text in texts for word in ("Keywords", "©", "Funding", "registration"))
    cited = [claim.citations[0]["PDF_DocIndex"] for claim in draft.claims]
    assert {"soil", "mulch", "tillage"} <= set(cited)
    assert "bridge" not in cited[:3]


def test_claims_are_ordered_by_relevance_and_spread_by_marginal_relevance(embedder):
    texts = [
        "Soil nitrogen was 12% higher under cover crops than in bare fallow.",
        "Soil nitrogen was twelve percent higher under cover crops than under bare fallow.",
        "Straw mulch raised soil nitrogen by 8% in irrigated maize fields.",
        "Cracks grew faster under heavy-vehicle lanes.",
    ]
    vectors = embedder.encode(texts)
    asked = embedder.encode([QUESTION])[0]
    candidates = [
        Candidate(text, document, float(vector @ asked))
        for text, document, vector in zip(texts, ["soil", "soil", "mulch", "bridge"], vectors, strict=True)
    ]
    chosen = select_claims(candidates, vectors, limit=2, floor=0.2)
    assert 2 in chosen  # the second source, not the first one's paraphrase
    assert not {0, 1} <= set(chosen)  # the paraphrase is a near-duplicate
    assert [candidates[i].relevance for i in chosen] == sorted((candidates[i].relevance for i in chosen), reverse=True)
    assert 3 not in select_claims(candidates, vectors, limit=4, floor=0.3)


def claim(text: str, key: str, evidence: str = "abstract") -> Claim:
    return Claim(text, (RECORDS[key].metadata(0, evidence).as_dict(),))


def test_the_gist_counts_sources_and_names_those_reporting_no_effect():
    mixed = Draft(
        (
            claim("Soil nitrogen was 12% higher under cover crops than in bare fallow.", "soil"),
            claim("Straw mulch raised soil nitrogen by 8% in irrigated maize fields.", "mulch", "full text"),
            claim("Reduced tillage did not significantly change soil nitrogen after four years.", "tillage"),
        )
    )
    assert gist(mixed) == (
        "Of 3 sources, 2 report a finding (Ruiz, 2019 [abstract]; Tanaka, 2020) and 1 report no effect, "
        "association or difference (Okafor, 2021 [abstract]): the evidence is mixed."
    )
    assert gist(Draft(mixed.claims[:2])).startswith("2 sources report findings on this question")
    assert gist(Draft(mixed.claims[2:])) == (
        "One source bears on this question (Okafor, 2021 [abstract]); it reports no effect, association or difference."
    )
    assert gist(Draft(())) is None
    body = render_answer(mixed, summary=gist(mixed))
    assert body.startswith("Of 3 sources") and "- Soil nitrogen was 12% higher" in body


@pytest.mark.parametrize(
    "text, null",
    [
        ("Reduced tillage did not significantly change soil nitrogen.", True),
        ("There was no association between screen time and grades.", True),
        ("The intervention failed to reduce falls.", True),
        ("Differences between arms were non-significant.", True),
        ("Straw mulch raised soil nitrogen by 8%.", False),
        ("Not only yields but also soil carbon rose under mulch.", False),
    ],
)
def test_null_results_are_recognised_by_their_wording(text, null):
    assert reports_null_result(text) is null


def test_a_question_nothing_answers_gets_no_direct_evidence_and_the_closest_findings(embedder):
    question = "Does rotational grazing change the carbon content of upland peat soils?"
    generator = ExtractiveGenerator(embedder, claims=3)
    loop = asyncio.run(
        revise_until_approved(question, CONTEXT, generator, RuleAuditor(embedder, min_relevance=0.95), max_rounds=3)
    )
    assert loop.final.draft.claims == ()
    closest = closest_findings(loop.rounds, [c.metadata for c in CONTEXT], RECORDS)
    assert 0 < len(closest.claims) <= 3
    body = render_answer(loop.final.draft, closest)
    assert body.startswith(NO_DIRECT_EVIDENCE)
    assert "grazing" in body.split("\n\n")[1].casefold()


def test_the_auditor_rejects_metadata_lines_and_repeats_a_model_might_write(embedder):
    draft = Draft(
        (
            claim("Straw mulch raised soil nitrogen by 8% in irrigated maize fields over two years.", "mulch"),
            claim(
                "Conclusions: Straw mulch raised soil nitrogen by 8% in irrigated maize fields over two years.", "mulch"
            ),
            claim("Trial registration: AGR-2020-114.", "mulch"),
        )
    )
    verdict = asyncio.run(RuleAuditor(embedder, min_relevance=0.0).audit(QUESTION, [chunk("mulch")], draft))
    assert [f.passed for f in verdict.findings] == [True, False, False]
    assert "repeats claim 0" in verdict.findings[1].note and "metadata" in verdict.findings[2].note
