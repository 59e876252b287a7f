"""The summary tree built from small composed inputs, and the global route answering from it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hysem_assets.knowledge.summary_tree import (
    build_summary_tree,
    candidate_sentences,
    document_passages,
    tree_nodes,
    tree_table,
)
from hysem_assets.knowledge.summary_writer import WRITER_SCHEMA, ModelSummaryWriter
from hysem_assets.llm.registry import build_backend
from hysem_assets.qa.global_route import SummaryTree, answer_from_tree
from hysem_assets.qa.sources import chunk_rows, library_records
from hysem_assets_tests.llm.scripted_server import ScriptedLLMServer, Step, json_reply

#: Three topics of two works each; w7 has only a title, w8 only an abstract (no chunk).
WORKS = {
    "w1": (0, ["Statin use was associated with a lower incidence of dementia in older adults.",
               "Keywords: statins; dementia; cohort; ageing",
               "The hazard ratio for dementia among statin users was 0.83 in a cohort of 48,213 adults."]),
    "w2": (0, ["Lipid-lowering therapy reduced the risk of Alzheimer disease in a nationwide registry.",
               "Conclusions: Lipid-lowering therapy reduced the risk of Alzheimer disease in a nationwide registry."]),
    "w3": (1, ["Aerobic exercise improved memory scores in a randomised trial of older adults.",
               "Participants walked three times a week for twelve months under supervision."]),
    "w4": (1, ["Resistance training slowed cognitive decline over two years of follow-up in a trial.",
               "Adherence to the exercise programme was high in both arms of the trial."]),
    "w5": (2, ["Hearing aids were linked to slower cognitive decline among adults with hearing loss.",
               "Untreated hearing loss doubled the odds of incident dementia over ten years."]),
    "w6": (2, ["Cochlear implants improved cognition scores one year after surgery in older adults.",
               "RESULTS: Cognition improved in most patients one year after cochlear implantation."]),
}  # fmt: skip
LABELS = {0: "statins, dementia, risk", 1: "exercise, trial, memory", 2: "hearing, cognition, loss"}


def frames() -> dict[str, pd.DataFrame]:
    chunks = pd.DataFrame(
        {"chunk_id": f"{w}:{i}", "cluster_id": w, "chunk_index": i, "section": "Abstract", "text": text,
         "evidence": "abstract"}
        for w, (_, texts) in WORKS.items() for i, text in enumerate(texts)
    )  # fmt: skip
    corpus = pd.DataFrame(
        [{"cluster_id": w, "title": f"Work {w}", "abstract": " ".join(texts)} for w, (_, texts) in WORKS.items()]
        + [{"cluster_id": "w7", "title": "Statins and dementia: an editorial", "abstract": None},
           {"cluster_id": "w8", "title": "Hearing and memory", "abstract": "Hearing screening in primary care found "
            "untreated hearing loss in a third of older adults with memory complaints."}]
    )  # fmt: skip
    topics = pd.DataFrame(
        [{"cluster_id": w, "dominant_topic": t, "dominant_label": LABELS[t]} for w, (t, _) in WORKS.items()]
        + [{"cluster_id": "w7", "dominant_topic": 0, "dominant_label": LABELS[0]},
           {"cluster_id": "w8", "dominant_topic": 2, "dominant_label": LABELS[2]}]
    )  # fmt: skip
    library = corpus[["cluster_id"]].assign(
        doi=[f"10.1/{c}" for c in corpus["cluster_id"]],
        zotero_key=None,
        in_text_citation=[f"({c}, 2020)" for c in corpus["cluster_id"]],
        full_citation=[f"{c}. Work. 2020." for c in corpus["cluster_id"]],
    )
    return {"chunks": chunks, "corpus": corpus, "topics": topics, "library": library}


@pytest.fixture(scope="module")
def built(embedder):
    data = frames()
    passages = document_passages(data["chunks"], data["corpus"])
    nodes, notes = build_summary_tree(passages, data["topics"], embedder, per_document=2, per_topic=2)
    return data, nodes, notes


def test_keyword_lines_labels_and_repeats_never_become_summary_sentences():
    sentences = candidate_sentences(document_passages(frames()["chunks"], frames()["corpus"])["w2"])
    assert [s.text for s in sentences] == [WORKS["w2"][1][0]]  # the labelled copy is the same sentence
    w1 = candidate_sentences(document_passages(frames()["chunks"], frames()["corpus"])["w1"])
    assert not any("Keywords" in s.text or ";" in s.text for s in w1)


def test_every_level_is_summarised_from_its_children_with_their_sources(built):
    data, nodes, notes = built
    levels = [node.level for node in nodes]
    # w7's title states no finding ("Statins and dementia: an editorial"): no document node, yet it counts below
    assert levels.count("corpus") == 1 and levels.count("topic") == 3 and levels.count("document") == 7
    assert notes == []
    topics = {node.topic: node for node in nodes if node.level == "topic"}
    for topic, node in topics.items():
        members = {w for w, (t, _) in WORKS.items() if t == topic}
        sources = {source.cluster_id for sentence in node.sentences for source in sentence.sources}
        assert sources <= members | {"w8"} and len(sources) == len(node.sentences) == 2  # two works, one each
        assert node.label == LABELS[topic]
    assert (topics[0].works, topics[2].works) == (3, 3)  # the title-only work counts, and gives no sentence
    corpus = nodes[0]
    assert corpus.level == "corpus" and corpus.works == 8
    assert {s.sources[0].cluster_id for s in corpus.sentences} & {"w7"} == set()
    assert len({topic_of(nodes, s.sources[0].cluster_id) for s in corpus.sentences}) == 3  # one per topic


def topic_of(nodes, cluster_id: str) -> int | None:
    return next(node.topic for node in nodes if node.level == "document" and node.cluster_id == cluster_id)


def test_sentences_cite_their_chunk_or_for_a_work_without_chunks_its_abstract(built):
    _, nodes, _ = built
    w5 = next(node for node in nodes if node.cluster_id == "w5")
    assert {(s.sources[0].chunk_id, s.sources[0].chunk_index) for s in w5.sentences} <= {("w5:0", 0), ("w5:1", 1)}
    w8 = next(node for node in nodes if node.cluster_id == "w8")
    assert [s.sources[0].chunk_id for s in w8.sentences] == [None]


def test_the_table_round_trips(built):
    _, nodes, _ = built
    table = tree_table(nodes)
    assert list(table["level"][:4]) == ["corpus", "topic", "topic", "topic"]
    again = tree_nodes(table)
    assert [(n.node_id, n.summary, n.works) for n in again] == [(n.node_id, n.summary, n.works) for n in nodes]
    assert json.loads(table["sentences"].iloc[1])[0]["sources"][0]["chunk_id"].startswith("w")


class Writer:
    """A summary writer that cites the candidates it was given, one out of range."""

    model = "writer-model"

    def write(self, level, label, candidates):
        if label == LABELS[1]:
            raise RuntimeError("server down")
        return [(f"Works on {label} agree.", [0, 1, 99])]


def test_a_writer_summarises_topics_citing_only_what_it_was_shown_and_failures_keep_the_extract(embedder):
    data = frames()
    passages = document_passages(data["chunks"], data["corpus"])
    nodes, notes = build_summary_tree(passages, data["topics"], embedder, writer=Writer())
    topics = {node.topic: node for node in nodes if node.level == "topic"}
    written = topics[0]
    assert written.method == "writer-model" and written.summary == f"Works on {LABELS[0]} agree."
    assert 1 <= len(written.sentences[0].sources) <= 2  # 99 was never shown, so it cites nothing
    assert topics[1].method.startswith("extractive/") and topics[1].sentences[0].sources
    assert notes == [f"{LABELS[1]}: the summary writer failed (server down); kept the extractive summary"]


def test_the_global_route_answers_theme_by_theme_citing_works_of_each(built, embedder):
    data, nodes, _ = built
    tree = SummaryTree.from_table(tree_table(nodes))
    library = library_records(data["library"], retracted=["w2"])
    answer = answer_from_tree(
        "What are the main research themes in this literature?", tree, embedder, library, chunk_rows(data["chunks"])
    )
    assert len(answer.themes) == 3 and {t["label"] for t in answer.themes} == set(LABELS.values())
    cited = {c["PDF_DocIndex"] for claim in answer.draft.claims for c in claim.citations}
    assert {topic_of(nodes, c) for c in cited} == {0, 1, 2} and "w2" not in cited and answer.retracted == ["w2"]
    located = {(s.PDF_DocIndex, s.PDF_ChunkIndex) for s in answer.sources}
    assert all(
        (c["PDF_DocIndex"], c["PDF_ChunkIndex"]) in located for claim in answer.draft.claims for c in claim.citations
    )
    assert "**exercise, trial, memory** (2 works)" in answer.markdown()


def test_a_focused_global_question_puts_its_theme_first(built, embedder):
    data, nodes, _ = built
    tree = SummaryTree.from_table(tree_table(nodes))
    answer = answer_from_tree(
        "Overall, what does this literature say about hearing loss and cognition?",
        tree,
        embedder,
        library_records(data["library"]),
        chunk_rows(data["chunks"]),
    )
    assert answer.themes[0]["label"] == LABELS[2]


def test_a_model_behind_a_server_writes_the_summaries_from_numbered_candidates(embedder):
    def reply(body: dict) -> Step:
        assert "[0] " in body["messages"][-1]["content"]  # the candidates, numbered
        return Step(
            json_reply({"sentences": [{"text": "The works agree on a protective association.", "sources": [0]}]})
        )

    data = frames()
    with ScriptedLLMServer(reply, model="summary-model", schema=WRITER_SCHEMA) as server:
        config = {"backend": "openai", "model": "summary-model", "base_url": server.url + "/v1", "cache": False}
        writer = ModelSummaryWriter(build_backend({**config, "max_retries": 0}))
        try:
            nodes, notes = build_summary_tree(
                document_passages(data["chunks"], data["corpus"]), data["topics"], embedder, writer=writer
            )
        finally:
            writer.close()
        assert server.failures == [] and len(server.requests) == 4  # three topics and the corpus
    written = [node for node in nodes if node.level in ("topic", "corpus")]
    assert notes == [] and all(node.method == "summary-model" and len(node.sentences) == 1 for node in written)
    assert all(node.sentences[0].sources for node in written)
