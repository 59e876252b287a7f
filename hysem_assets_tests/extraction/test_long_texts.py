"""Sentences embedded only where they can matter: a budget for full texts and a shortlist for one-sentence answers
that keep the answers, reference lists left unread."""

from __future__ import annotations

import random
import re

import numpy as np
import pandas as pd

from hysem_assets.extraction.extractive import from_protocol
from hysem_assets.extraction.focus import LEAD, focus_sentences
from hysem_assets.extraction.open_terms import cue_positions
from hysem_assets.extraction.reading import Reading
from hysem_assets.extraction.rows import documents_to_extract
from hysem_assets.settings.backends import ExtractiveConfig
from hysem_assets.settings.protocols import load_protocol
from hysem_assets.sources.pubmed_xml import parse_efetch
from hysem_assets_tests.extraction.test_protocol_backend import ABSTRACT
from hysem_assets_tests.paths import REALDATA, needs_realdata

WORDS = (
    "weather committee library river harbour season budget painting railway orchestra festival garden mountain "
    "village architecture museum novel poetry bridge market ferry lighthouse tunnel canal theatre archive"
).split()


def filler(count: int, seed: int = 0) -> list[str]:
    """Sentences about nothing a protocol asks for, each different."""
    rng = random.Random(seed)
    return [f"The {' '.join(rng.sample(WORDS, 5))} was described in report {n}." for n in range(count)]


def test_a_short_text_is_embedded_whole_and_a_long_one_by_its_opening_and_its_words() -> None:
    assert focus_sentences(filler(50), ["randomised controlled trial"], budget=64) is None
    assert focus_sentences(filler(500), ["randomised controlled trial"], budget=0) is None
    sentences = filler(300)
    sentences[200] = "Patients were allocated in a randomised controlled trial at two hospitals."
    sentences[250] = "Survival was the primary outcome of the trial."
    chosen = focus_sentences(sentences, ["randomised controlled trial", "primary outcome: what was measured"], 40)
    assert chosen is not None and len(chosen) == 40 and chosen == sorted(chosen)
    assert chosen[:LEAD] == list(range(LEAD)) and {200, 250} <= set(chosen)


def test_sentences_left_out_are_never_picked_by_similarity() -> None:
    backend = from_protocol(load_protocol("generic"))
    sentences = filler(100)
    sentences[80] = "We conducted a prospective cohort study of adults."
    reading = Reading(" ".join(sentences), backend.encoder, focus=backend.focus, budget=40)
    design = reading.embed(["prospective cohort study"])[0]
    similarity = reading.sentence_similarity(design)
    assert similarity.shape == (len(reading.sentences),) and np.isfinite(similarity).sum() == 40
    assert np.isfinite(similarity[:LEAD]).all() and int(similarity.argmax()) == 80
    table = reading.sentence_similarity(np.vstack([design, design]))
    assert table.shape == (len(reading.sentences), 2) and (np.isneginf(table[:, 1]) == np.isneginf(similarity)).all()


def test_a_shortlist_embeds_the_first_sentence_and_those_sharing_words_with_the_description() -> None:
    backend = from_protocol(load_protocol("generic"))
    sentences = filler(12)
    sentences[9] = "We conducted a prospective cohort study of adults."
    text = " ".join(sentences)
    design = backend.encoder.encode(["prospective cohort study"])[0]
    about = ["cohort study: participants followed up over years"]

    shortlisted = Reading(text, backend.encoder, shortlist=3).sentence_similarity(design, about)
    assert np.isfinite(shortlisted).sum() == 4 and np.isfinite(shortlisted[0]) and int(shortlisted.argmax()) == 9
    every = Reading(text, backend.encoder, shortlist=0).sentence_similarity(design, about)
    assert np.isfinite(every).all() and int(every.argmax()) == 9


@needs_realdata
def test_on_real_abstracts_the_shortlist_gives_the_answers_of_every_sentence_embedded() -> None:
    # study_design without a cue word and setting's fallback are the generic protocol's one-sentence answers
    records = [
        r
        for path in sorted((REALDATA / "pubmed_metapub_efetch").glob("*.xml"))
        for r in parse_efetch(path.read_bytes(), where=path.name)
        if len(r["abstract"] or "") >= 200
    ][:60]
    assert len(records) == 60, "the real efetch files hold 60 abstracts"
    protocol = load_protocol("generic")
    names = ["study_design", "setting"]
    shortlisted = from_protocol(protocol, ExtractiveConfig(backend="extractive"))
    every = from_protocol(protocol, ExtractiveConfig(backend="extractive", sentence_shortlist=0))
    texts = [f"{r['title']}\n\n{r['abstract']}" for r in records]

    same = sum(shortlisted.extract(text, names) == every.extract(text, names) for text in texts)
    assert same >= 58, f"{same} of {len(texts)} abstracts got the same design and setting"
    assert shortlisted.encoder.encoded < every.encoder.encoded


def test_a_full_text_gives_the_same_fields_with_and_without_the_budget() -> None:
    # by the rules, and with a field that reads sentence vectors (the tagger and cue-decided designs read none)
    generic = load_protocol("generic")
    fields = [
        f.model_copy(update={"method": None, "cues": [] if f.name == "setting" else f.cues}) for f in generic.fields
    ]
    protocol = generic.model_copy(update={"fields": fields})
    # the abstract, then pages of text that answer nothing, with a finding far past the opening
    body = filler(400, seed=1)
    body[300] = "Postoperative complications occurred in 8% of patients treated with adjuvant capecitabine."
    text = ABSTRACT + "\n\n## Results\n\n" + " ".join(body)
    names = [spec.name for spec in protocol.fields]
    every = from_protocol(protocol, ExtractiveConfig(backend="extractive", sentence_budget=0))
    budgeted = from_protocol(protocol, ExtractiveConfig(backend="extractive", sentence_budget=128))

    with_budget, without = budgeted.extract(text, names), every.extract(text, names)
    assert with_budget.pop("setting").startswith(without.pop("setting").split(".")[0])  # its best sentence
    assert with_budget == without
    assert budgeted.encoder.encoded < every.encoder.encoded - 250


def test_a_field_answered_by_similarity_alone_is_found_far_past_the_opening() -> None:
    sample = load_protocol("pollution-cardio-ml")  # its study_type without its dictionary: text without cues,
    fields = [spec.model_copy(update={"dictionary": None}) for spec in sample.fields]  # the most similar sentences
    protocol = sample.model_copy(update={"fields": fields})
    sentences = filler(300, seed=2)
    sentences[250] = "This was a case-crossover study of daily hospital admissions."
    text = " ".join(sentences)
    every = from_protocol(protocol, ExtractiveConfig(backend="extractive", sentence_budget=0))
    budgeted = from_protocol(protocol, ExtractiveConfig(backend="extractive", sentence_budget=64))

    # both answers hold the design sentence (their second sentences, filler, may differ)
    assert "case-crossover study" in budgeted.extract(text, ["study_type"])["study_type"]
    assert "case-crossover study" in every.extract(text, ["study_type"])["study_type"]


def test_reference_lists_of_full_texts_are_not_read() -> None:
    markdown = (
        "# Sleep and mood in adolescents\n\n## Methods\n\nWe surveyed 812 adolescents in Oslo.\n\n"
        "## References\n\n[1] Smith J. Melatonin for insomnia: a randomised controlled trial. Sleep. 2019;3:1-9.\n\n"
        "## Appendix\n\nThe questionnaire had 20 items.\n"
    )
    corpus = pd.DataFrame([{"cluster_id": "c1", "title": "Sleep and mood in adolescents", "abstract": None}])
    parsed = pd.DataFrame([{"cluster_id": "c1", "markdown": markdown, "error": None}])
    (document,) = documents_to_extract(corpus, parsed)

    assert len(document.text) == len(markdown)  # offsets into the parsed text stay valid
    assert "randomised" not in document.text and "References" not in document.text
    assert "## Appendix\n\nThe questionnaire had 20 items." in document.text
    assert document.text.index("We surveyed") == markdown.index("We surveyed")
    protocol = load_protocol("generic")
    values = from_protocol(protocol).extract(document.text, ["study_design", "sample_size"])
    assert values == {"study_design": None, "sample_size": 812}
    assert from_protocol(protocol).extract(markdown, ["study_design"]) == {
        "study_design": "randomised controlled trial"
    }


def test_a_parse_that_is_all_references_falls_back_to_the_abstract() -> None:
    corpus = pd.DataFrame([{"cluster_id": "c1", "title": "A title", "abstract": "What the abstract says."}])
    parsed = pd.DataFrame([{"cluster_id": "c1", "markdown": "## References\n\n[1] Other work. 2020.\n", "error": None}])
    (document,) = documents_to_extract(corpus, parsed)
    assert (document.text, document.metadata["text_source"]) == ("A title\n\nWhat the abstract says.", "abstract")


def test_cues_are_found_as_case_insensitive_regular_expressions_find_them() -> None:
    def by_pattern(sentence: str, cues: list[str]) -> list[tuple[int, int]]:
        return [
            match.span()
            for cue in sorted(cues, key=len, reverse=True)
            for match in re.finditer(rf"(?<![\w-]){re.escape(cue)}(?![\w-])", sentence, re.IGNORECASE)
        ]

    cues = ["patients with", "risk", "exposure to", "in"]
    for sentence in (
        "Risk of stroke in PATIENTS WITH diabetes after exposure to heat.",
        "PATİENTS WİTH diabetes",  # dotted capital I: str.lower() and re fold it differently
        "Patients with a riſk of falls",  # long s: re folds it into s
        "Pre-exposure to heat, in-hospital risk-free",
    ):
        assert cue_positions(sentence, cues) == by_pattern(sentence, cues), sentence
