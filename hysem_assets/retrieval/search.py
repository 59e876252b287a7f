"""Dense, keyword and hybrid search over indexed chunks: the one retrieval path.

The QA stage and the BEIR evaluation both call these functions, so a benchmark score is
a score of what answers are built from. Hybrid is Reciprocal Rank Fusion: each list adds
``1 / (k + rank)`` for every chunk it ranks, so agreement between the lists wins and no
score scale has to be calibrated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from hysem_assets.embeddings import Encoder
from hysem_assets.retrieval.keyword import KeywordIndex
from hysem_assets.stores.qdrant_chunks import QdrantChunkStore

Method = Literal["bm25", "dense", "hybrid"]
METHODS: tuple[Method, ...] = ("bm25", "dense", "hybrid")
RRF_K = 60
#: How deep each list goes before fusion.
FUSION_DEPTH = 100


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    score: float


def dense_search(
    store: QdrantChunkStore, embedder: Encoder, text: str, *, query: str | None = None, limit: int = 10
) -> list[Hit]:
    vector = embedder.encode([text])[0]
    return [Hit(str(p.payload["chunk_id"]), p.score) for p in store.search(vector, query=query, limit=limit)]


def keyword_search(index: KeywordIndex, text: str, *, limit: int = 10) -> list[Hit]:
    return [Hit(chunk_id, score) for chunk_id, score in index.search(text, limit=limit)]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Hit]], *, k: int = RRF_K, limit: int = 10) -> list[Hit]:
    """Fused ranking; ties go to the chunk with the better single rank, then by id."""
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, 1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
            best[hit.chunk_id] = min(best.get(hit.chunk_id, rank), rank)
    order = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], best[chunk_id], chunk_id))
    return [Hit(chunk_id, scores[chunk_id]) for chunk_id in order[:limit]]


def search(
    method: Method,
    text: str,
    *,
    store: QdrantChunkStore,
    index: KeywordIndex,
    embedder: Encoder,
    query: str | None = None,
    limit: int = 10,
) -> list[Hit]:
    """Top ``limit`` chunks for ``text`` by ``method``, within partition ``query`` if given."""
    if method == "bm25":
        return keyword_search(index, text, limit=limit)
    if method == "dense":
        return dense_search(store, embedder, text, query=query, limit=limit)
    if method == "hybrid":
        depth = max(limit, FUSION_DEPTH)
        return reciprocal_rank_fusion(
            [
                dense_search(store, embedder, text, query=query, limit=depth),
                keyword_search(index, text, limit=depth),
            ],
            limit=limit,
        )
    raise ValueError(f"unknown retrieval method {method!r}; choose one of {', '.join(METHODS)}")
