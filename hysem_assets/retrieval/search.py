"""Dense, keyword and hybrid search over indexed chunks: the one retrieval path.

The QA stage and the BEIR evaluation both call these functions, so a benchmark score is
a score of what answers are built from. Keyword search is BM25 over the chunk store's
sparse vectors; hybrid is Reciprocal Rank Fusion of the dense and BM25 lists, run inside
Qdrant (prefetch + RRF): each list adds ``1 / (k + rank)`` for every chunk it ranks, so
agreement between the lists wins and no score scale has to be calibrated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.stores.chunks import ChunkVectors, ScoredChunk

Method = Literal["bm25", "dense", "hybrid"]
METHODS: tuple[Method, ...] = ("bm25", "dense", "hybrid")
RRF_K = 60
#: Qdrant's fusion adds ``1 / (k + rank)`` counting ranks from 0; this k gives the standard
#: ``1 / (60 + rank)`` counted from 1, as :func:`reciprocal_rank_fusion` does.
QDRANT_RRF_K = RRF_K + 1
#: How deep each list goes before fusion.
FUSION_DEPTH = 100


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    score: float


def _hits(found: Sequence[ScoredChunk]) -> list[Hit]:
    return [Hit(str(chunk.payload["chunk_id"]), chunk.score) for chunk in found]


def dense_search(
    store: ChunkVectors, embedder: Encoder, text: str, *, query: str | None = None, limit: int = 10
) -> list[Hit]:
    return _hits(store.dense(embedder.encode([text])[0], query=query, limit=limit))


def keyword_search(store: ChunkVectors, text: str, *, query: str | None = None, limit: int = 10) -> list[Hit]:
    return _hits(store.keyword(text, query=query, limit=limit))


def hybrid_search(
    store: ChunkVectors, embedder: Encoder, text: str, *, query: str | None = None, limit: int = 10
) -> list[Hit]:
    vector = embedder.encode([text])[0]
    return _hits(store.hybrid(vector, text, query=query, limit=limit, depth=max(limit, FUSION_DEPTH), k=QDRANT_RRF_K))


def reciprocal_rank_fusion(rankings: Sequence[Sequence[Hit]], *, k: int = RRF_K, limit: int = 10) -> list[Hit]:
    """Fused ranking of lists that do not all come from the store (the QA graph's list joins
    them there); ties go to the chunk with the better single rank, then by id."""
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, 1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
            best[hit.chunk_id] = min(best.get(hit.chunk_id, rank), rank)
    order = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], best[chunk_id], chunk_id))
    return [Hit(chunk_id, scores[chunk_id]) for chunk_id in order[:limit]]


def search(
    method: Method, text: str, *, store: ChunkVectors, embedder: Encoder, query: str | None = None, limit: int = 10
) -> list[Hit]:
    """Top ``limit`` chunks for ``text`` by ``method``, within partition ``query`` if given."""
    if method == "bm25":
        return keyword_search(store, text, query=query, limit=limit)
    if method == "dense":
        return dense_search(store, embedder, text, query=query, limit=limit)
    if method == "hybrid":
        return hybrid_search(store, embedder, text, query=query, limit=limit)
    raise ValueError(f"unknown retrieval method {method!r}; choose one of {', '.join(METHODS)}")
