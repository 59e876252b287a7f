"""What every chunk store offers, whichever Qdrant engine holds the vectors.

One collection holds every partition; each point's payload names its partition (``query``),
its work (``cluster_id``) and ``section``, each with a payload index, and searches filter on
the partition. A point carries two vectors: ``dense`` (the embedder's, cosine) and ``bm25``
(sparse term weights with Qdrant's IDF modifier), so keyword and hybrid search run inside
Qdrant, with IDF computed over the searched partition only. Both engines take their sparse
vectors from the one BM25 model here (Qdrant Edge's tokenizer: English stopwords and the
Snowball English stemmer, as Lucene's English analyzer does), so a question is tokenized
exactly as the chunks were, on Edge and on a server alike.

A point's id derives from (partition, chunk id), so re-indexing a partition overwrites its
points instead of adding copies.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np
from qdrant_edge import Bm25, Bm25Config, SparseVector

DENSE = "dense"
SPARSE = "bm25"
#: Payload fields with an index: the partition, the work and the section a chunk belongs to.
INDEXED_FIELDS = ("query", "cluster_id", "section")
UPSERT_BATCH = 512
#: Candidates HNSW keeps while it searches (Qdrant's ``hnsw_ef``). Qdrant's default gave a
#: filtered top-10 recall of 0.76 at 100,000 chunks; 256 gives 0.93 at a p95 of 2 ms
#: (``benchmarks/vector_search.py``). Partitions small enough are searched exactly anyway.
SEARCH_EF = 256
_NAMESPACE = uuid.UUID("6f1c1f5e-7a39-4b8e-9d55-2a8f3c1b0e47")


class VectorStoreError(RuntimeError):
    pass


class DamagedStoreError(VectorStoreError):
    """A chunk store whose files cannot be read back (a truncated segment, say); the whole collection is
    rebuilt from every query's chunk table (:mod:`hysem_assets.retrieval.repair`)."""


def point_id(query: str, chunk_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{query}\x1f{chunk_id}"))


@lru_cache(maxsize=1)
def _bm25() -> Bm25:
    return Bm25(Bm25Config(language="english"))


def sparse_document(text: str) -> SparseVector:
    """A chunk's BM25 term weights (term frequency, saturated and length-normalized)."""
    return _bm25().embed_document(text)


def sparse_query(text: str) -> SparseVector:
    """A question's terms, each weighted 1: Qdrant multiplies in the partition's IDF."""
    return _bm25().embed_query(text)


@dataclass(frozen=True)
class StoredPoint:
    payload: dict[str, Any]
    vector: list[float]


@dataclass(frozen=True)
class ScoredChunk:
    payload: dict[str, Any]
    score: float


def fused_order(fused: Sequence[ScoredChunk], limit: int) -> list[ScoredChunk]:
    """The best ``limit`` of a fused list, equal scores ordered by chunk id.

    Qdrant's fusion returns chunks of equal fused score (ranks 1 and 3 in one list, 3 and 1
    in the other) in an order that varies from run to run; asked for every candidate and
    ordered here, the same question always gets the same context.
    """
    return sorted(fused, key=lambda chunk: (-chunk.score, str(chunk.payload.get("chunk_id"))))[:limit]


class ChunkVectors(Protocol):
    """The chunk store's interface; :mod:`.edge_chunks` and :mod:`.qdrant_chunks` implement it."""

    collection: str
    location: str

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection (dense cosine + sparse BM25, payload indexes); check the dense size."""

    def points(self, query: str, *, with_vectors: bool = True) -> Iterator[tuple[str, StoredPoint]]:
        """Every point of a partition: id and stored point (its dense vector when asked)."""

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        """Write points: dense ``vectors`` and the BM25 weights of ``texts``."""

    def delete(self, ids: Sequence[str]) -> None: ...

    def dense(
        self, vector: np.ndarray, *, query: str | None = None, limit: int = 10, min_score: float | None = None
    ) -> list[ScoredChunk]:
        """Nearest chunks by cosine, within partition ``query`` when given."""

    def keyword(self, text: str, *, query: str | None = None, limit: int = 10) -> list[ScoredChunk]:
        """Best chunks by BM25; chunks sharing no term with ``text`` are left out."""

    def hybrid(
        self, vector: np.ndarray, text: str, *, query: str | None = None, limit: int = 10, depth: int = 100, k: int = 60
    ) -> list[ScoredChunk]:
        """Dense and BM25 lists (``depth`` deep) fused by Qdrant's Reciprocal Rank Fusion, ties by chunk id."""

    def count(self, query: str | None = None) -> int: ...

    def optimize(self) -> None:
        """Build search indexes now (after a partition is written), not during the first searches."""

    def close(self) -> None: ...


def searchable_text(section: str, text: str) -> str:
    """What is embedded and keyword-indexed: the section heading gives the text its context."""
    return f"{section}\n{text}" if section else text
