"""Is a partition's chunk index complete? The stores checked against the chunk table they index.

A run killed while it writes the vector store leaves part of a partition there (36 of 147
points, say), and nothing in the store says that the write stopped short. So completeness
is judged against the chunk table (``vector_index``) the run meant to index: a point for
every chunk with that chunk's content hash and no point of a chunk that is gone (each point
carries both the dense and the BM25 vector, written together). The check uses only what every
chunk store offers (the points of a partition with their payloads), so it holds whatever
engine keeps the vectors; a partition that fails it is rebuilt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from hysem_assets.stores.chunks import ChunkVectors, point_id


@dataclass(frozen=True)
class IndexState:
    """How a partition's stores compare with its chunk table."""

    query: str
    chunks: int
    missing: int
    extra: int
    outdated: int

    @property
    def complete(self) -> bool:
        return not (self.missing or self.extra or self.outdated)

    def describe(self) -> str:
        problems = []
        if self.missing:
            problems.append(f"{self.chunks - self.missing} of {self.chunks} chunks in the vector store")
        if self.extra:
            problems.append(f"{self.extra} points of chunks that are gone")
        if self.outdated:
            problems.append(f"{self.outdated} points embedded from older text")
        return "; ".join(problems) or f"complete ({self.chunks} chunks)"


def expected_points(chunks: pd.DataFrame, query: str) -> dict[str, str]:
    """Point id -> content hash for every row of a ``vector_index`` chunk table."""
    return {
        point_id(query, str(chunk_id)): str(content_hash)
        for chunk_id, content_hash in zip(chunks["chunk_id"], chunks["content_hash"], strict=True)
    }


def index_state(expected: Mapping[str, str], *, query: str, store: ChunkVectors) -> IndexState:
    """Compare the stored points of ``query`` with the chunks they should hold."""
    stored = {pid: point.payload.get("content_hash") for pid, point in store.points(query, with_vectors=False)}
    return IndexState(
        query=query,
        chunks=len(expected),
        missing=sum(pid not in stored for pid in expected),
        extra=sum(pid not in expected for pid in stored),
        outdated=sum(pid in stored and stored[pid] != digest for pid, digest in expected.items()),
    )


def drop_partition(store: ChunkVectors, query: str) -> int:
    """Delete every point of ``query``, so that the next write starts from nothing; returns how many."""
    ids = [pid for pid, _ in store.points(query, with_vectors=False)]
    store.delete(ids)
    return len(ids)
