"""A summary tree of one partition: chunks -> documents -> topics -> corpus, each node summarised with its sources.

Corpus-level questions ("what are the main themes?") are answered by no single passage, so
retrieval cannot answer them; a summary tree can (the idea of E²GraphRAG, built on hysem's
own assets). A document's summary is its most central sentences, chosen by maximal
marginal relevance (MMR) around the centroid of its sentence embeddings, so it is faithful
and not repetitive; a topic (the ``topics`` asset's dominant topic of its works) is
summarised from its documents' summaries the same way, one work at a time before a second
sentence of any work; the corpus from its topics, one topic at a time. Every sentence keeps
the chunk (or, for a work without chunks, the abstract) it came from, so an answer built
from the tree cites works exactly.

With a summary writer (a model), topic and corpus summaries are written from the same
candidate sentences, and every written sentence names the candidates it rests on; the
sources are those candidates' works, checked, so a model cannot cite what it was not shown.
A document keeps its central sentences either way: an abstract is already its summary.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd

from hysem_assets.core.sentences import claim_text, normalized
from hysem_assets.core.text import split_sentences
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.embedding.mmr import mmr
from hysem_assets.retrieval.chunking import ABSTRACT

Level = Literal["corpus", "topic", "document"]
CORPUS = "corpus"
#: Candidate sentences read per document: its abstract, or the opening of its text.
MAX_CANDIDATES = 40
TREE_COLUMNS = [
    "node_id", "level", "parent_id", "topic", "label", "cluster_id", "works", "summary", "sentences", "vector", "method",
]  # fmt: skip


@dataclass(frozen=True)
class Source:
    """Where a sentence comes from: a chunk of a work, or (``chunk_id`` None) its abstract or title."""

    cluster_id: str
    chunk_id: str | None = None
    chunk_index: int | None = None


@dataclass(frozen=True)
class Sentence:
    """A summary sentence, the sources it rests on, and how central it is to its node (cosine to the centroid)."""

    text: str
    sources: tuple[Source, ...]
    score: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "score": round(float(self.score), 4),
            "sources": [{"cluster_id": s.cluster_id, "chunk_id": s.chunk_id, "chunk_index": s.chunk_index}
                        for s in self.sources],
        }  # fmt: skip

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Sentence:
        sources = tuple(
            Source(
                str(s["cluster_id"]), s.get("chunk_id"), None if s.get("chunk_index") is None else int(s["chunk_index"])
            )
            for s in value.get("sources", [])
        )
        return cls(str(value["text"]), sources, float(value.get("score", 0.0)))


@dataclass(frozen=True)
class TreeNode:
    node_id: str
    level: Level
    parent_id: str | None
    topic: int | None
    label: str
    cluster_id: str | None
    works: int
    sentences: tuple[Sentence, ...]
    vector: np.ndarray
    method: str

    @property
    def summary(self) -> str:
        return " ".join(sentence.text for sentence in self.sentences)


@dataclass(frozen=True)
class Passage:
    """A piece of a work's text: a ``vector_index`` chunk, or its abstract or title when it has no chunk."""

    cluster_id: str
    text: str
    chunk_id: str | None = None
    chunk_index: int | None = None
    whole_title: bool = False


def document_passages(chunks: pd.DataFrame | None, corpus: pd.DataFrame) -> dict[str, list[Passage]]:
    """Every work's passages: its abstract-level chunks where the chunk table marks them (an abstract is
    the work's own summary), else all its chunks in order; without chunks, its abstract, else its title."""
    titles = {
        str(c): " ".join(str(t).split()) for c, t in zip(corpus["cluster_id"], corpus["title"]) if isinstance(t, str)
    }
    passages: dict[str, list[Passage]] = {}
    if chunks is not None and len(chunks):
        marked = "evidence" in chunks.columns
        ordered = chunks.sort_values(["cluster_id", "chunk_index"])
        for cluster_id, rows in ordered.groupby("cluster_id", sort=False):
            abstract = rows[rows["evidence"] == ABSTRACT] if marked else rows.iloc[0:0]
            chosen = abstract if len(abstract) else rows
            passages[str(cluster_id)] = [
                Passage(str(cluster_id), str(row.text), str(row.chunk_id), int(row.chunk_index),
                        whole_title=" ".join(str(row.text).split()) == titles.get(str(cluster_id)))
                for row in chosen.itertuples()
            ]  # fmt: skip
    for row in corpus.itertuples():
        cluster_id = str(row.cluster_id)
        if cluster_id in passages:
            continue
        abstract, title = getattr(row, "abstract", None), getattr(row, "title", None)
        if isinstance(abstract, str) and abstract.strip():
            passages[cluster_id] = [Passage(cluster_id, abstract)]
        elif isinstance(title, str) and title.strip():
            passages[cluster_id] = [Passage(cluster_id, title, whole_title=True)]
    return passages


def candidate_sentences(passages: Sequence[Passage], limit: int = MAX_CANDIDATES) -> list[Sentence]:
    """Sentences that state something (no labels, keywords or metadata lines), in text order, unique."""
    found: list[Sentence] = []
    seen: set[str] = set()
    for passage in passages:
        for raw in split_sentences(passage.text):
            text = claim_text(raw, whole_title=passage.whole_title)
            if text is None or (key := normalized(text)) in seen:
                continue
            seen.add(key)
            found.append(Sentence(text, (Source(passage.cluster_id, passage.chunk_id, passage.chunk_index),)))
            if len(found) == limit:
                return found
    return found


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return (vector / norm).astype(np.float32) if norm > 0 else vector.astype(np.float32)


def central(
    sentences: Sequence[Sentence], vectors: np.ndarray, k: int, groups: Sequence[object] | None = None
) -> tuple[list[int], np.ndarray, np.ndarray]:
    """MMR picks around the centroid: (chosen indices, centroid, each sentence's centrality)."""
    centroid = _unit(vectors.mean(axis=0))
    centrality = vectors @ centroid
    return mmr(vectors, centrality, k, groups=groups), centroid, centrality


class SummaryWriter(Protocol):
    """Writes a node's summary from candidate sentences: (text, indices of the candidates it rests on)."""

    model: str

    def write(self, level: Level, label: str, candidates: Sequence[Sentence]) -> list[tuple[str, list[int]]]: ...


#: Candidates a writer reads per node: the most central ones.
WRITER_CANDIDATES = 30


def _written(
    writer: SummaryWriter | None, level: Level, label: str, candidates: Sequence[Sentence], fallback: list[Sentence]
) -> tuple[list[Sentence], str | None]:
    """The writer's sentences with their candidates' sources; the extractive ones when it gives none usable."""
    if writer is None or not candidates:
        return fallback, None
    candidates = sorted(candidates, key=lambda sentence: -sentence.score)[:WRITER_CANDIDATES]
    try:
        written = writer.write(level, label, candidates)
    except Exception as exc:  # noqa: BLE001 - any model failure keeps the extractive summary, with the reason
        return fallback, f"{label}: the summary writer failed ({exc}); kept the extractive summary"
    sentences = []
    for text, indices in written:
        cited = [candidates[i] for i in indices if isinstance(i, int) and 0 <= i < len(candidates)]
        sources = tuple(dict.fromkeys(source for sentence in cited for source in sentence.sources))
        if text.strip() and sources:
            sentences.append(Sentence(" ".join(text.split()), sources, 1.0))
    if not sentences:
        return fallback, f"{label}: the summary writer cited no candidate; kept the extractive summary"
    return sentences, None


def _node(node_id: str, level: Level, parent: str | None, topic: int | None, label: str, cluster: str | None,
          works: int, sentences: Sequence[Sentence], vector: np.ndarray, method: str) -> TreeNode:  # fmt: skip
    return TreeNode(node_id, level, parent, topic, label, cluster, works, tuple(sentences), vector, method)


def _summarise(
    pool: Sequence[tuple[Sentence, np.ndarray, object]],
    centroid: np.ndarray,
    k: int,
    writer: SummaryWriter | None,
    level: Level,
    label: str,
) -> tuple[list[Sentence], np.ndarray, list[Sentence], str | None]:
    """A node's summary from its children's sentences: (sentences, their vectors, the extractive sentences,
    a note when the writer failed). MMR around ``centroid``, one sentence per group before a second."""
    vectors = np.stack([vector for _, vector, _ in pool])
    centrality = vectors @ centroid
    chosen = mmr(vectors, centrality, k, groups=[group for _, _, group in pool])
    extracted = [Sentence(pool[i][0].text, pool[i][0].sources, float(centrality[i])) for i in chosen]
    scored = [Sentence(s.text, s.sources, float(c)) for (s, _, _), c in zip(pool, centrality, strict=True)]
    sentences, note = _written(writer, level, label, scored, extracted)
    return sentences, vectors[chosen], extracted, note


def build_summary_tree(
    passages: Mapping[str, Sequence[Passage]],
    topics: pd.DataFrame,
    embedder: Encoder,
    *,
    titles: Mapping[str, str] | None = None,
    writer: SummaryWriter | None = None,
    per_document: int = 3,
    per_topic: int = 4,
    max_themes: int = 12,
) -> tuple[list[TreeNode], list[str]]:
    """The tree's nodes (corpus first, then topics, then documents) and notes on what went wrong.

    ``topics`` is the ``topics`` asset (``cluster_id``, ``dominant_topic``, ``dominant_label``);
    a work it does not place is grouped under an "other" topic, never dropped. A work known
    only by its title counts in its topic but gives no sentence to the topic's summary.
    """
    titles = titles or {}
    extractive = f"extractive/{embedder.name}"
    notes: list[str] = []
    candidates = {cluster: candidate_sentences(list(items)) for cluster, items in passages.items()}
    title_only = {cluster for cluster, items in passages.items() if all(p.whole_title for p in items)}
    flat = [(cluster, sentence) for cluster, found in candidates.items() for sentence in found]
    vectors = embedder.encode([sentence.text for _, sentence in flat])
    rows_of: dict[str, list[int]] = {}
    for row, (cluster, _) in enumerate(flat):
        rows_of.setdefault(cluster, []).append(row)
    placement = {
        str(c): (int(t), str(label) if isinstance(label, str) and label else f"topic {int(t)}")
        for c, t, label in zip(topics.get("cluster_id", []), topics.get("dominant_topic", []),
                               topics.get("dominant_label", []), strict=True)
        if not pd.isna(t)
    }  # fmt: skip
    labels = {topic: label for topic, label in placement.values()}
    members: dict[int, list[str]] = {}
    for cluster in passages:
        members.setdefault(placement.get(cluster, (-1, "other"))[0], []).append(cluster)
    labels.setdefault(-1, "other")

    documents: dict[str, TreeNode] = {}
    picked: dict[str, list[tuple[Sentence, np.ndarray, object]]] = {}
    for cluster, rows in rows_of.items():
        found, own = candidates[cluster], vectors[rows]
        chosen, centroid, centrality = central(found, own, per_document)
        sentences = [Sentence(found[i].text, found[i].sources, float(centrality[i])) for i in chosen]
        topic = placement.get(cluster, (-1, "other"))[0]
        documents[cluster] = _node(f"document:{cluster}", "document", f"topic:{topic}", topic,
                                   titles.get(cluster, cluster), cluster, 1, sentences, centroid, extractive)  # fmt: skip
        if cluster not in title_only:
            picked[cluster] = [(s, own[i], cluster) for s, i in zip(sentences, chosen, strict=True)]

    topic_nodes: list[TreeNode] = []
    topic_pool: list[tuple[Sentence, np.ndarray, object]] = []
    ranked = sorted(members.items(), key=lambda item: (-len(item[1]), item[0]))
    for topic, clusters in ranked[:max_themes]:
        pool = [entry for cluster in clusters for entry in picked.get(cluster, [])]
        if not pool:
            continue
        nodes = [documents[c] for c in clusters if c in documents and c not in title_only]
        centroid = _unit(np.stack([node.vector for node in nodes]).mean(axis=0))
        label = labels[topic]
        sentences, chosen_vectors, extracted, note = _summarise(pool, centroid, per_topic, writer, "topic", label)
        notes += [note] if note else []
        topic_pool += [(s, v, topic) for s, v in zip(extracted, chosen_vectors, strict=True)]
        method = writer.model if writer is not None and note is None else extractive
        topic_nodes.append(
            _node(f"topic:{topic}", "topic", CORPUS, topic, label, None, len(clusters), sentences, centroid, method)
        )
    if len(ranked) > max_themes:
        notes.append(f"{len(ranked) - max_themes} smaller topics have no theme node")

    corpus_nodes: list[TreeNode] = []
    if topic_nodes:
        centroid = _unit(np.stack([node.vector for node in topic_nodes]).mean(axis=0))
        sentences, _, _, note = _summarise(topic_pool, centroid, len(topic_nodes), writer, "corpus", "the collection")
        notes += [note] if note else []
        method = writer.model if writer is not None and note is None else extractive
        corpus_nodes.append(
            _node(CORPUS, "corpus", None, None, "corpus", None, len(passages), sentences, centroid, method)
        )
    return [*corpus_nodes, *topic_nodes, *documents.values()], notes


def tree_table(nodes: Sequence[TreeNode]) -> pd.DataFrame:
    """One row per node; sentences with their sources as JSON text, the centroid as a list of floats."""
    table = pd.DataFrame(
        [
            {
                "node_id": node.node_id,
                "level": node.level,
                "parent_id": node.parent_id,
                "topic": node.topic,
                "label": node.label,
                "cluster_id": node.cluster_id,
                "works": node.works,
                "summary": node.summary,
                "sentences": json.dumps([s.as_json() for s in node.sentences], ensure_ascii=False),
                "vector": [float(x) for x in node.vector],
                "method": node.method,
            }
            for node in nodes
        ],
        columns=TREE_COLUMNS,
    )
    table["topic"] = table["topic"].astype("Int64")
    table["works"] = table["works"].astype("int64")
    return table


def tree_nodes(table: pd.DataFrame | None) -> list[TreeNode]:
    """The nodes of a ``summary_tree`` table (empty for None or no rows)."""
    if table is None or table.empty:
        return []
    nodes = []
    for row in table.to_dict("records"):
        topic = row.get("topic")
        nodes.append(
            TreeNode(
                str(row["node_id"]),
                row["level"],
                None if pd.isna(row.get("parent_id")) else str(row["parent_id"]),
                None if topic is None or pd.isna(topic) else int(topic),
                str(row.get("label") or ""),
                None if pd.isna(row.get("cluster_id")) else str(row["cluster_id"]),
                int(row.get("works") or 0),
                tuple(Sentence.from_json(s) for s in json.loads(row.get("sentences") or "[]")),
                np.asarray(row["vector"], dtype=np.float32),
                str(row.get("method") or ""),
            )
        )
    return nodes
