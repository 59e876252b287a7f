"""Chunk vectors on a Qdrant server through ``qdrant-client``: the production chunk store.

The collection layout, payload indexes and queries are those of the embedded store
(:mod:`hysem_assets.stores.edge_chunks`); see :mod:`hysem_assets.stores.chunks` for both.
``location`` is what ``QdrantClient`` takes: a server URL, or ``":memory:"`` for the
client's own in-process emulation of the same API.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from hysem_assets.stores.chunks import (
    DENSE,
    INDEXED_FIELDS,
    SEARCH_EF,
    SPARSE,
    UPSERT_BATCH,
    ScoredChunk,
    StoredPoint,
    VectorStoreError,
    fused_order,
    sparse_document,
    sparse_query,
)


def _in_partition(query: str | None) -> models.Filter | None:
    if query is None:
        return None
    return models.Filter(must=[models.FieldCondition(key="query", match=models.MatchValue(value=query))])


def _sparse(vector: Any) -> models.SparseVector:
    return models.SparseVector(indices=list(vector.indices), values=list(vector.values))


def _idf_over(query: str | None) -> models.SearchParams | None:
    within = _in_partition(query)
    return models.SearchParams(idf=models.IdfCorpusParams(corpus=within)) if within is not None else None


def _scored(points: list[models.ScoredPoint]) -> list[ScoredChunk]:
    return [ScoredChunk(dict(point.payload or {}), float(point.score)) for point in points]


class QdrantChunkStore:
    """The collection ``collection`` on the Qdrant at ``location``."""

    def __init__(self, location: str, *, api_key: str | None = None, collection: str = "chunks") -> None:
        self.collection = collection
        self.location = location
        self.client = QdrantClient(location=location, api_key=api_key)

    def ensure_collection(self, dimension: int) -> None:
        if self.client.collection_exists(self.collection):
            vectors = self.client.get_collection(self.collection).config.params.vectors
            size = vectors[DENSE].size if isinstance(vectors, dict) and DENSE in vectors else None
            if size != dimension:
                raise VectorStoreError(
                    f"Qdrant collection {self.collection!r} at {self.location} holds {size}-d {DENSE!r} vectors, "
                    f"the model gives {dimension}-d: use another collection name or drop it"
                )
            return
        self.client.create_collection(
            self.collection,
            vectors_config={DENSE: models.VectorParams(size=dimension, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        for field in INDEXED_FIELDS:
            self.client.create_payload_index(
                self.collection, field_name=field, field_schema=models.PayloadSchemaType.KEYWORD
            )

    def points(self, query: str, *, with_vectors: bool = True, page: int = 1024) -> Iterator[tuple[str, StoredPoint]]:
        offset = None
        while True:
            records, offset = self.client.scroll(
                self.collection,
                scroll_filter=_in_partition(query),
                limit=page,
                offset=offset,
                with_payload=True,
                with_vectors=[DENSE] if with_vectors else False,
            )
            for record in records:
                vectors = record.vector if isinstance(record.vector, dict) else {}
                yield str(record.id), StoredPoint(dict(record.payload or {}), list(vectors.get(DENSE, [])))  # type: ignore[arg-type]
            if offset is None:
                return

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        for start in range(0, len(ids), UPSERT_BATCH):
            end = start + UPSERT_BATCH
            dense = np.asarray(vectors[start:end], dtype=np.float32).tolist()
            self.client.upsert(
                self.collection,
                points=[
                    models.PointStruct(
                        id=point, vector={DENSE: vector, SPARSE: _sparse(sparse_document(text))}, payload=dict(payload)
                    )
                    for point, vector, text, payload in zip(
                        ids[start:end], dense, texts[start:end], payloads[start:end], strict=True
                    )
                ],
                wait=True,
            )

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=list(ids)), wait=True)

    def dense(
        self, vector: np.ndarray, *, query: str | None = None, limit: int = 10, min_score: float | None = None
    ) -> list[ScoredChunk]:
        found = self.client.query_points(
            self.collection,
            query=np.asarray(vector, dtype=np.float32).tolist(),
            using=DENSE,
            query_filter=_in_partition(query),
            search_params=models.SearchParams(hnsw_ef=SEARCH_EF),
            score_threshold=min_score,
            limit=limit,
            with_payload=True,
        )
        return _scored(found.points)

    def keyword(self, text: str, *, query: str | None = None, limit: int = 10) -> list[ScoredChunk]:
        terms = sparse_query(text)
        if not terms.indices:
            return []
        found = self.client.query_points(
            self.collection,
            query=_sparse(terms),
            using=SPARSE,
            query_filter=_in_partition(query),
            search_params=_idf_over(query),
            limit=limit,
            with_payload=True,
        )
        return [chunk for chunk in _scored(found.points) if chunk.score > 0]

    def hybrid(
        self, vector: np.ndarray, text: str, *, query: str | None = None, limit: int = 10, depth: int = 100, k: int = 60
    ) -> list[ScoredChunk]:
        within = _in_partition(query)
        prefetch = [
            models.Prefetch(
                query=np.asarray(vector, dtype=np.float32).tolist(),
                using=DENSE,
                filter=within,
                params=models.SearchParams(hnsw_ef=SEARCH_EF),
                limit=depth,
            )
        ]
        terms = sparse_query(text)
        if terms.indices:
            prefetch.append(
                models.Prefetch(query=_sparse(terms), using=SPARSE, filter=within, params=_idf_over(query), limit=depth)
            )
        found = self.client.query_points(
            self.collection,
            prefetch=prefetch,
            query=models.RrfQuery(rrf=models.Rrf(k=k)),
            limit=depth * len(prefetch),
            with_payload=True,
        )
        return fused_order(_scored(found.points), limit)

    def count(self, query: str | None = None) -> int:
        return self.client.count(self.collection, count_filter=_in_partition(query), exact=True).count

    def optimize(self) -> None:
        """A server optimizes its segments by itself."""

    def close(self) -> None:
        self.client.close()
