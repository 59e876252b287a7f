"""Chunk vectors in Qdrant: local mode (a folder, no server) by default, a server by URL.

One collection holds every partition; each point's payload names its partition
(``query``), and searches filter on it. A point's id derives from (partition, chunk id),
so re-indexing a partition overwrites its points instead of adding copies.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock
from qdrant_client import QdrantClient, models

from hysem_assets.stores.locking import acquire_store_lock

_NAMESPACE = uuid.UUID("6f1c1f5e-7a39-4b8e-9d55-2a8f3c1b0e47")
UPSERT_BATCH = 512


class VectorStoreError(RuntimeError):
    pass


def point_id(query: str, chunk_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{query}\x1f{chunk_id}"))


def _in_partition(query: str) -> models.Filter:
    return models.Filter(must=[models.FieldCondition(key="query", match=models.MatchValue(value=query))])


@dataclass(frozen=True)
class StoredPoint:
    payload: dict[str, Any]
    vector: list[float]


@dataclass(frozen=True)
class ScoredChunk:
    payload: dict[str, Any]
    score: float


class QdrantChunkStore:
    """A collection of chunk vectors; give ``url`` for a server, else ``path`` for local mode."""

    def __init__(
        self,
        *,
        path: Path | None = None,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "chunks",
        lock_timeout: float = 3600,
    ) -> None:
        if (path is None) == (url is None):
            raise VectorStoreError("give exactly one of path (local mode) and url (server)")
        self.collection = collection
        self.location = url or str(path)
        self.local = url is None
        self._lock: FileLock | None = None
        if url:
            self.client = QdrantClient(url=url, api_key=api_key)
            return
        try:
            self._lock = acquire_store_lock(Path(path), timeout=lock_timeout, what="Qdrant folder")
        except TimeoutError as exc:
            raise VectorStoreError(str(exc)) from exc
        try:
            self.client = QdrantClient(path=str(path))
        except Exception:
            self._lock.release()
            raise

    def ensure_collection(self, dimension: int) -> None:
        """Create the collection (cosine) with a payload index on ``query``; check the size."""
        if self.client.collection_exists(self.collection):
            size = self.client.get_collection(self.collection).config.params.vectors.size  # type: ignore[union-attr]
            if size != dimension:
                raise VectorStoreError(
                    f"Qdrant collection {self.collection!r} at {self.location} holds {size}-d vectors, "
                    f"the model gives {dimension}-d: use another collection name or drop it"
                )
            return
        self.client.create_collection(
            self.collection, vectors_config=models.VectorParams(size=dimension, distance=models.Distance.COSINE)
        )
        with warnings.catch_warnings():
            # Local mode says payload indexes have no effect there; a server uses this one.
            warnings.simplefilter("ignore", UserWarning)
            self.client.create_payload_index(
                self.collection, field_name="query", field_schema=models.PayloadSchemaType.KEYWORD
            )

    def points(self, query: str, *, with_vectors: bool = True, page: int = 1024) -> Iterator[tuple[str, StoredPoint]]:
        """Every point of a partition: id and stored point."""
        offset = None
        while True:
            records, offset = self.client.scroll(
                self.collection,
                scroll_filter=_in_partition(query),
                limit=page,
                offset=offset,
                with_payload=True,
                with_vectors=with_vectors,
            )
            for record in records:
                vector = record.vector if isinstance(record.vector, list) else []
                yield str(record.id), StoredPoint(dict(record.payload or {}), vector)  # type: ignore[arg-type]
            if offset is None:
                return

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[Mapping[str, Any]]) -> None:
        for start in range(0, len(ids), UPSERT_BATCH):
            end = start + UPSERT_BATCH
            self.client.upsert(
                self.collection,
                points=models.Batch(
                    ids=list(ids[start:end]),
                    vectors=np.asarray(vectors[start:end], dtype=np.float32).tolist(),
                    payloads=[dict(p) for p in payloads[start:end]],
                ),
                wait=True,
            )

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            self.client.delete(self.collection, points_selector=models.PointIdsList(points=list(ids)), wait=True)

    def search(self, vector: np.ndarray, *, query: str | None = None, limit: int = 10) -> list[ScoredChunk]:
        """Nearest chunks to ``vector``, within one partition when ``query`` is given."""
        found = self.client.query_points(
            self.collection,
            query=np.asarray(vector, dtype=np.float32).tolist(),
            query_filter=_in_partition(query) if query is not None else None,
            limit=limit,
            with_payload=True,
        )
        return [ScoredChunk(dict(point.payload or {}), float(point.score)) for point in found.points]

    def count(self, query: str | None = None) -> int:
        return self.client.count(
            self.collection, count_filter=_in_partition(query) if query is not None else None, exact=True
        ).count

    def close(self) -> None:
        self.client.close()
        if self._lock is not None:
            self._lock.release()
