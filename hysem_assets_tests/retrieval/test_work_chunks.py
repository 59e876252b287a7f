"""Every work is searchable: title and abstract chunks for all, full text where it was parsed, never twice."""

from __future__ import annotations

import pandas as pd

from hysem_assets.core.text import split_sentences
from hysem_assets.retrieval.chunking import ABSTRACT, FULL_TEXT, abstract_chunks, sentence_windows, work_chunks

WORKS = pd.DataFrame(
    {
        "cluster_id": ["w-soil", "w-sleep", "w-bridge", "w-title", "w-empty"],
        "title": [
            "Cover crops and soil nitrogen in semi-arid farms",
            "Evening screen time and sleep onset in adolescents",
            "Fatigue cracking in welded steel bridge decks",
            "Urban heat islands and night-time mortality",
            None,
        ],
        "abstract": [
            "BACKGROUND: Cover crops may retain nitrogen. METHODS: We sampled 120 plots over three seasons. "
            "RESULTS: Soil nitrogen was 12% higher under cover crops than in bare fallow. "
            "CONCLUSIONS: Cover crops retain nitrogen in semi-arid soils.",
            "Adolescents with more than two hours of evening screen time fell asleep 25 minutes later on average. "
            "The delay was larger on school nights.",
            "Weld toes at rib-to-deck joints initiated most cracks. Cracks grew faster under heavy-vehicle lanes.",
            None,
            "",
        ],
    }
)
BRIDGE_PAPER = (
    "# Fatigue cracking in welded steel bridge decks\n\n## Abstract\n\n"
    "Weld toes at rib-to-deck joints initiated most cracks. Cracks grew faster under heavy-vehicle lanes.\n\n"
    "## Methods\n\nStrain gauges recorded 14 months of traffic loading on two orthotropic decks.\n\n"
    "## References\n\n1. Smith J. Bridge fatigue. 2001.\n"
)


def test_a_partition_without_any_full_text_is_searchable_by_title_and_abstract():
    chunks = work_chunks(WORKS, pd.DataFrame({"cluster_id": [], "markdown": []}))
    assert set(chunks["cluster_id"]) == {"w-soil", "w-sleep", "w-bridge", "w-title"}  # w-empty has no text at all
    assert set(chunks["evidence"]) == {ABSTRACT}
    abstracts = dict(zip(WORKS["cluster_id"], WORKS["abstract"], strict=True))
    for row in chunks.itertuples():
        if row.cluster_id == "w-title":
            assert (row.section, row.text) == ("Title", "Urban heat islands and night-time mortality")
        else:
            assert row.text in abstracts[row.cluster_id]  # an exact slice, so claims quote the abstract
            assert row.section.endswith(" > Abstract")
    assert chunks["chunk_id"].is_unique and chunks["chunk_index"].dtype == "int64"


def test_a_full_text_is_indexed_with_its_abstract_once_and_without_references():
    documents = pd.DataFrame({"cluster_id": ["w-bridge", "w-soil"], "markdown": [BRIDGE_PAPER, None]})
    chunks = work_chunks(WORKS, documents, max_tokens=40, overlap=5)
    bridge = chunks[chunks["cluster_id"] == "w-bridge"]
    assert bridge["evidence"].tolist() == [ABSTRACT, FULL_TEXT]
    assert bridge["chunk_index"].tolist() == [0, 1]
    assert "Strain gauges" in bridge["text"].iloc[1]
    assert sum("Weld toes" in text for text in bridge["text"]) == 1  # the paper's own abstract is not indexed again
    assert not bridge["text"].str.contains("Smith J").any()
    assert set(chunks.loc[chunks["cluster_id"] == "w-soil", "evidence"]) == {ABSTRACT}  # no markdown: abstract only


def test_sentence_windows_keep_sentences_whole_and_share_one():
    text = " ".join(f"Sentence number {n} reports a separate observation about plots." for n in range(6))
    windows = sentence_windows(text, max_tokens=20)
    sentences = split_sentences(text)
    assert len(windows) > 1
    for start, end, tokens in windows:
        assert tokens <= 20 and text[start:end] in text
        assert all(s in sentences for s in split_sentences(text[start:end]))
    for (_, first_end, _), (second_start, _, _) in zip(windows, windows[1:]):
        assert second_start < first_end  # consecutive windows share a sentence
    long = "word " * 50 + "end."
    assert [tokens for *_, tokens in sentence_windows(long, max_tokens=20)] == [20, 20, 11]


def test_abstract_chunks_of_a_work_without_title_or_abstract():
    assert abstract_chunks("", "") == []
    assert [c.section for c in abstract_chunks("", "One sentence only here.")] == ["Abstract"]
