"""Chunk vectors in Qdrant Edge: Qdrant's engine in-process, in a folder, no server.

Edge keeps HNSW, payload indexes, sparse vectors and the Query API (prefetch and fusion)
of a Qdrant server, and answers a filtered top-10 in about a millisecond, where the
pure-Python local mode of ``qdrant-client`` took hundreds. The folder holds one shard (the
collection); its write-ahead log admits one process, so openers queue on a lock file
beside it (:mod:`hysem_assets.stores.locking`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import qdrant_edge as edge
from filelock import FileLock

from hysem_assets.stores.chunks import (
    DENSE,
    INDEXED_FIELDS,
    SEARCH_EF,
    SPARSE,
    UPSERT_BATCH,
    DamagedStoreError,
    ScoredChunk,
    StoredPoint,
    VectorStoreError,
    fused_order,
    sparse_document,
    sparse_query,
)
from hysem_assets.stores.locking import acquire_store_lock

#: Written by Edge when a shard is created: the collection's vector layout.
CONFIG_FILE = "edge_config.json"

T = TypeVar("T")
#: How a damaged shard is repaired, said with the damage.
REPAIR = "; `hysem doctor --fix` (or re-materializing vector_index) rebuilds it from every query's chunk table"


def _in_partition(query: str | None) -> edge.Filter | None:
    if query is None:
        return None
    return edge.Filter(must=[edge.FieldCondition(key="query", match=edge.MatchValue(query))])


def _idf_over(query: str | None) -> edge.SearchParams:
    """IDF from the searched partition alone, so other reviews' chunks do not weigh its terms."""
    return edge.SearchParams(idf=edge.IdfParams(corpus=_in_partition(query)))


def _scored(points: list[edge.ScoredPoint]) -> list[ScoredChunk]:
    return [ScoredChunk(dict(point.payload or {}), float(point.score)) for point in points]


class EdgeChunkStore:
    """The collection ``collection`` as an Edge shard in ``folder/collection``."""

    def __init__(self, folder: Path, *, collection: str = "chunks", lock_timeout: float = 3600) -> None:
        self.collection = collection
        self.path = Path(folder) / collection
        self.location = str(self.path)
        try:
            self._lock: FileLock = acquire_store_lock(self.path, timeout=lock_timeout, what="Qdrant Edge shard")
        except TimeoutError as exc:
            raise VectorStoreError(str(exc)) from exc
        self._shard: edge.EdgeShard | None = None
        try:
            if (self.path / CONFIG_FILE).is_file():
                self._shard = edge.EdgeShard.load(str(self.path))
        except Exception as exc:  # Edge raises plain exceptions for files it cannot read
            self._lock.release()
            if "WouldBlock" in str(exc):  # its write-ahead log is open elsewhere: busy, not damaged
                raise VectorStoreError(
                    f"Qdrant Edge shard {self.location} is open in another process (whose lock file was removed); "
                    "wait for that process to end"
                ) from exc
            raise DamagedStoreError(f"Qdrant Edge shard {self.location} cannot be loaded: {exc}{REPAIR}") from exc

    @property
    def shard(self) -> edge.EdgeShard:
        if self._shard is None:
            raise VectorStoreError(f"No collection at {self.location} yet: index a partition first")
        return self._shard

    def ensure_collection(self, dimension: int) -> None:
        if self._shard is not None:
            size = json.loads((self.path / CONFIG_FILE).read_text(encoding="utf-8"))["vectors"][DENSE]["size"]
            if size != dimension:
                raise VectorStoreError(
                    f"Qdrant Edge shard {self.location} holds {size}-d vectors, the model gives {dimension}-d: "
                    "use another collection name or remove the folder"
                )
            return
        config = edge.EdgeConfig(
            vectors={DENSE: edge.EdgeVectorParams(size=dimension, distance=edge.Distance.Cosine)},
            sparse_vectors={SPARSE: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)},
        )
        self._shard = edge.EdgeShard.create(str(self.path), config)
        for field in INDEXED_FIELDS:
            self._shard.update(edge.UpdateOperation.create_field_index(field, edge.PayloadSchemaType.Keyword))

    def points(self, query: str, *, with_vectors: bool = True, page: int = 1024) -> Iterator[tuple[str, StoredPoint]]:
        if self._shard is None:
            return
        offset = None
        while True:
            request = edge.ScrollRequest(
                offset=offset,
                limit=page,
                filter=_in_partition(query),
                with_payload=True,
                with_vector=[DENSE] if with_vectors else False,
            )
            records, offset = self._read(lambda request=request: self.shard.scroll(request))
            for record in records:
                vectors = record.vector if isinstance(record.vector, dict) else {}
                yield str(record.id), StoredPoint(dict(record.payload or {}), list(vectors.get(DENSE, [])))
            if offset is None:
                return

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        for start in range(0, len(ids), UPSERT_BATCH):
            end = start + UPSERT_BATCH
            dense = np.asarray(vectors[start:end], dtype=np.float32).tolist()
            self.shard.update(
                edge.UpdateOperation.upsert_points(
                    [
                        edge.Point(point, {DENSE: vector, SPARSE: sparse_document(text)}, dict(payload))
                        for point, vector, text, payload in zip(
                            ids[start:end], dense, texts[start:end], payloads[start:end], strict=True
                        )
                    ]
                )
            )
        self.shard.flush()

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self.shard.update(edge.UpdateOperation.delete_points(list(ids)))
            self.shard.flush()

    def dense(
        self, vector: np.ndarray, *, query: str | None = None, limit: int = 10, min_score: float | None = None
    ) -> list[ScoredChunk]:
        found = self._query(
            edge.QueryRequest(
                limit=limit,
                query=edge.Query.Nearest(np.asarray(vector, dtype=np.float32).tolist(), using=DENSE),
                filter=_in_partition(query),
                score_threshold=min_score,
                params=edge.SearchParams(hnsw_ef=SEARCH_EF),
                with_payload=True,
            )
        )
        return _scored(found)

    def keyword(self, text: str, *, query: str | None = None, limit: int = 10) -> list[ScoredChunk]:
        terms = sparse_query(text)
        if not terms.indices:
            return []
        found = self._query(
            edge.QueryRequest(
                limit=limit,
                query=edge.Query.Nearest(terms, using=SPARSE),
                filter=_in_partition(query),
                params=_idf_over(query),
                with_payload=True,
            )
        )
        return [chunk for chunk in _scored(found) if chunk.score > 0]

    def hybrid(
        self, vector: np.ndarray, text: str, *, query: str | None = None, limit: int = 10, depth: int = 100, k: int = 60
    ) -> list[ScoredChunk]:
        within = _in_partition(query)
        prefetches = [
            edge.Prefetch(
                limit=depth,
                query=edge.Query.Nearest(np.asarray(vector, dtype=np.float32).tolist(), using=DENSE),
                filter=within,
                params=edge.SearchParams(hnsw_ef=SEARCH_EF),
            )
        ]
        terms = sparse_query(text)
        if terms.indices:
            prefetches.append(
                edge.Prefetch(
                    limit=depth, query=edge.Query.Nearest(terms, using=SPARSE), filter=within, params=_idf_over(query)
                )
            )
        found = self._query(
            edge.QueryRequest(
                limit=depth * len(prefetches), prefetches=prefetches, query=edge.Fusion.Rrf(k=k), with_payload=True
            )
        )
        return fused_order(_scored(found), limit)

    def _query(self, request: edge.QueryRequest) -> list[edge.ScoredPoint]:
        return self._read(lambda: self.shard.query(request))

    def _read(self, call: Callable[[], T]) -> T:
        """``call`` on the shard; a file Edge cannot read back (it raises plain exceptions) becomes
        :class:`DamagedStoreError`."""
        try:
            return call()
        except VectorStoreError:
            raise
        except Exception as exc:
            raise DamagedStoreError(f"Qdrant Edge shard {self.location} cannot be read: {exc}{REPAIR}") from exc

    def count(self, query: str | None = None) -> int:
        if self._shard is None:
            return 0
        return self._shard.count(edge.CountRequest(exact=True, filter=_in_partition(query)))

    def optimize(self) -> None:
        """Merge segments and build the HNSW index now, so the next searches need not wait for it."""
        self.shard.optimize()

    def close(self) -> None:
        try:
            if self._shard is not None:
                self._shard.close()
                self._shard = None
        finally:
            self._lock.release()
