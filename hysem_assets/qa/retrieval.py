"""Hybrid retrieval for questions: dense, keyword, graph and entity rankings fused by Reciprocal Rank Fusion.

The dense and BM25 lists come from the chunk store; the graph's lists do not, so the four
are fused here, with the k of Qdrant's own fusion, and each context chunk keeps which lists
found it.

The graph ranking follows the canonical terms a question names to the chunks that mention
them. With two or more terms, chunks are preferred where all of them occur within ``h``
chunks of each other in one article; ``h`` starts at ``hops`` and narrows while more than
``k`` chunks qualify, or widens (up to ``max_hops``) while none do, so the graph list stays
focused without coming back empty when the terms only meet further apart.

The entity ranking is E²GraphRAG's local retrieval over the entity graph: the question's entities
(names the graph holds for the partition, found in its words) lead to the chunks that mention
them, those where the question's entities meet within ``h`` chunks first (``h`` chosen as above),
then the other chunks that mention one, then the chunks of their neighbours one RELATED or
CO_OCCURS hop away; one graph query, at most ``depth`` chunks. It joins the fusion only with
``entity_list`` set: on three collections of abstracts it lowered nDCG@10 (``benchmarks/entities.py``).

Retracted works are left out of the context unless ``include_retracted`` is set, and the
retrieval reports those that ranked among the ``k`` best (``qa.retractions``).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from hysem_assets.core.matcher import matchable
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.qa.entity_questions import EntityNames
from hysem_assets.qa.retractions import split_retracted
from hysem_assets.qa.sources import ChunkRow, ContextChunk, Library, context_chunks
from hysem_assets.qa.terms import QuestionMatcher, Terms, all_terms, recognise_terms
from hysem_assets.retrieval.search import Hit, dense_search, keyword_search, reciprocal_rank_fusion
from hysem_assets.stores.chunks import ChunkVectors
from hysem_assets.stores.graph import GraphStore

MENTIONS_CYPHER = (
    "MATCH (:Query {key: $query})-[:FOUND]->(:Article)-[:HAS_CHUNK]->(c:Chunk)-[:MENTIONS]->(t) "
    "WHERE t.name IN $names "
    "RETURN c.chunk_id AS chunk_id, c.cluster_id AS cluster_id, c.chunk_index AS chunk_index, t.name AS term"
)
_CHUNK = "c.chunk_id AS chunk_id, c.cluster_id AS cluster_id, c.chunk_index AS chunk_index"
#: Chunks mentioning the question's entities (hop 0), and (a bounded number of) those mentioning their neighbours.
ENTITY_CHUNKS_CYPHER = (
    "MATCH (c:Chunk)-[m:MENTIONS_ENTITY]->(e:Entity) WHERE m.query = $query AND e.entity_id IN $ids "
    f"RETURN {_CHUNK}, e.name AS term, 0 AS hop "
    "UNION ALL "
    "MATCH (e:Entity)-[r:RELATED|CO_OCCURS]-(:Entity)<-[m:MENTIONS_ENTITY]-(c:Chunk) "
    "WHERE e.entity_id IN $ids AND r.query = $query AND m.query = $query "
    f"RETURN {_CHUNK}, e.name AS term, 1 AS hop LIMIT $near"
)
#: Rows of neighbours' chunks read per chunk the context may hold: a bound on a hub's co-occurrences.
NEAR_ROWS = 4


@dataclass(frozen=True)
class RetrievalSettings:
    k: int = 8
    depth: int = 50
    hops: int = 1
    max_hops: int = 3
    #: dense hits below this cosine similarity are not evidence (dense search always returns something)
    min_dense_score: float = 0.3
    #: answer from retracted works too (each answer then warns about them)
    include_retracted: bool = False
    #: fuse the entity ranking too (measured, it cost nDCG@10 on every collection: off by default)
    entity_list: bool = False


@dataclass
class Retriever:
    """The partition's stores and the chunk table and library that turn hits into citable context."""

    query: str
    store: ChunkVectors
    embedder: Encoder
    graph: GraphStore | None
    matchers: Mapping[str, QuestionMatcher]
    chunks: Mapping[str, ChunkRow]
    library: Library
    settings: RetrievalSettings = RetrievalSettings()
    #: The partition's entity names (``EntityNames.of_partition``); empty: no entity ranking.
    entities: EntityNames = field(default_factory=EntityNames)


@dataclass(frozen=True)
class Retrieval:
    terms: Terms
    context: list[ContextChunk]
    hops: int | None
    seconds: float
    #: retracted works among the best-ranked chunks: left out, or included with a warning
    retracted: list[dict[str, Any]] = field(default_factory=list)


def cooccurring_chunks(
    mentions: pd.DataFrame, terms: Sequence[str], *, k: int, hops: int, max_hops: int
) -> tuple[list[str], int]:
    """Chunks where every term occurs within ``h`` chunks in the same article, and the ``h`` used.

    ``mentions`` has columns chunk_id, cluster_id, chunk_index, term. Chunks are ordered by
    how many of the terms they mention themselves, then by article and position.
    """
    wanted = set(terms)
    at: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    own: dict[str, set[str]] = defaultdict(set)
    where: dict[str, tuple[str, int]] = {}
    for row in mentions.itertuples(index=False):
        if row.term in wanted:
            at[row.cluster_id][row.term].append(int(row.chunk_index))
            own[row.chunk_id].add(row.term)
            where[row.chunk_id] = (row.cluster_id, int(row.chunk_index))

    def within(h: int) -> list[str]:
        found = [
            chunk_id
            for chunk_id, (cluster, index) in where.items()
            if all(any(abs(index - other) <= h for other in at[cluster].get(term, ())) for term in wanted)
        ]
        return sorted(found, key=lambda c: (-len(own[c]), where[c]))

    h = hops
    chosen = within(h)
    while len(chosen) > k and h > 0:
        h -= 1
        chosen = within(h)
    while not chosen and h < max_hops:
        h += 1
        chosen = within(h)
    return chosen[:k], h


def graph_hits(retriever: Retriever, terms: Terms) -> tuple[list[Hit], int | None]:
    """Chunks reached from the question's terms (see the module doc); hops is None with under two terms."""
    names = all_terms(terms)
    if retriever.graph is None or not names:
        return [], None
    mentions = retriever.graph.query(MENTIONS_CYPHER, {"query": retriever.query, "names": names})
    if mentions.empty:
        return [], None
    settings = retriever.settings
    if len(names) < 2:
        ordered = mentions.sort_values(["cluster_id", "chunk_index"])["chunk_id"].drop_duplicates().tolist()
        return [Hit(c, 1.0) for c in ordered[: settings.depth]], None
    chosen, h = cooccurring_chunks(mentions, names, k=settings.k, hops=settings.hops, max_hops=settings.max_hops)
    return [Hit(c, 1.0) for c in chosen], h


def _by_mentions(rows: pd.DataFrame) -> list[str]:
    """Chunks by how many of the question's entities each mentions, then by work and position."""
    if rows.empty:
        return []
    counted = rows.groupby(["chunk_id", "cluster_id", "chunk_index"])["term"].nunique().reset_index()
    return counted.sort_values(["term", "cluster_id", "chunk_index"], ascending=[False, True, True])[
        "chunk_id"
    ].tolist()


def entity_hits(retriever: Retriever, question: str) -> tuple[list[Hit], int | None]:
    """Chunks reached from the question's entities (see the module doc); hops is None with under two entities."""
    names = list(dict.fromkeys(m.name for m in retriever.entities.found(matchable(question))))
    if retriever.graph is None or not names:
        return [], None
    ids = [i for name in names for i in retriever.entities.ids[name]]
    settings = retriever.settings
    parameters = {"query": retriever.query, "ids": ids, "near": NEAR_ROWS * settings.depth}
    rows = retriever.graph.query(ENTITY_CHUNKS_CYPHER, parameters)
    if rows.empty:
        return [], None
    own, near = rows[rows["hop"] == 0], rows[rows["hop"] == 1]
    close, hops = [], None
    if len(names) >= 2:
        close, hops = cooccurring_chunks(own, names, k=settings.k, hops=settings.hops, max_hops=settings.max_hops)
    ordered = list(dict.fromkeys([*close, *_by_mentions(own), *_by_mentions(near)]))
    return [Hit(c, 1.0) for c in ordered[: settings.depth]], hops


def retrieve(question: str, retriever: Retriever) -> Retrieval:
    """Fused context of at most ``k`` citable chunks for ``question`` within the retriever's partition."""
    started = time.perf_counter()
    settings = retriever.settings
    terms = recognise_terms(question, retriever.matchers)
    scored = dense_search(retriever.store, retriever.embedder, question, query=retriever.query, limit=settings.depth)
    dense = [hit for hit in scored if hit.score >= settings.min_dense_score]
    keyword = keyword_search(retriever.store, question, query=retriever.query, limit=settings.depth)
    graph, hops = graph_hits(retriever, terms)
    entities, _ = entity_hits(retriever, question) if settings.entity_list else ([], None)
    rankings = {"dense": dense, "keyword": keyword, "graph": graph, "entities": entities}
    fused = reciprocal_rank_fusion(list(rankings.values()), limit=settings.depth)
    found_by = {name: {hit.chunk_id for hit in hits} for name, hits in rankings.items()}
    ranked = (
        (hit.chunk_id, hit.score, tuple(name for name, ids in found_by.items() if hit.chunk_id in ids)) for hit in fused
    )
    similarity = {hit.chunk_id: hit.score for hit in scored}
    ranked_context = context_chunks(ranked, retriever.chunks, retriever.library, similarity)
    context, retracted = split_retracted(ranked_context, settings.k, include=settings.include_retracted)
    return Retrieval(terms, context, hops, time.perf_counter() - started, retracted)
