"""Full texts in the embedded extractor: a sentence budget that keeps the answers, reference lists left unread."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from hysem_assets.extraction.assets import documents_to_extract
from hysem_assets.extraction.extractive import from_protocol
from hysem_assets.extraction.focus import LEAD, focus_sentences
from hysem_assets.extraction.reading import Reading
from hysem_assets.llm.config import ExtractiveConfig
from hysem_assets.protocols import load_protocol
from hysem_assets_tests.extraction.test_protocol_backend import ABSTRACT

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


def test_sentences_left_out_score_zero() -> None:
    backend = from_protocol(load_protocol("generic"))
    sentences = filler(100)
    sentences[80] = "We conducted a prospective cohort study of adults."
    reading = Reading(" ".join(sentences), backend.encoder, focus=backend.focus, budget=40)
    vectors = reading.sentence_vectors
    norms = np.linalg.norm(vectors, axis=1)
    assert vectors.shape[0] == len(reading.sentences) and (norms > 0).sum() == 40
    assert norms[:LEAD].min() > 0.99 and norms[80] > 0.99  # the opening, and the sentence about the design


def test_a_full_text_gives_the_same_fields_with_and_without_the_budget() -> None:
    protocol = load_protocol("generic")
    # the abstract, then pages of text that answer nothing, with a finding far past the opening
    body = filler(400, seed=1)
    body[300] = "Postoperative complications occurred in 8% of patients treated with adjuvant capecitabine."
    text = ABSTRACT + "\n\n## Results\n\n" + " ".join(body)
    names = [spec.name for spec in protocol.fields]
    every = from_protocol(protocol, ExtractiveConfig(backend="extractive", sentence_budget=0))
    budgeted = from_protocol(protocol, ExtractiveConfig(backend="extractive", sentence_budget=128))

    assert budgeted.extract(text, names) == every.extract(text, names)
    assert budgeted.encoder.encoded < every.encoder.encoded - 250


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
    assert "randomised" not in document.text and "questionnaire had 20 items" in document.text
    assert document.text.index("We surveyed") == markdown.index("We surveyed")
    protocol = load_protocol("generic")
    values = from_protocol(protocol).extract(document.text, ["study_design", "sample_size"])
    assert values == {"study_design": None, "sample_size": 812}
    assert from_protocol(protocol).extract(markdown, ["study_design"]) == {
        "study_design": "randomised controlled trial"
    }
