"""Index a partition's chunks in Qdrant (dense and BM25 vectors), embedding only what changed.

A stored point keeps the content hash and model name it was embedded from; a chunk whose
hash and model match keeps its stored vector, and a point whose payload is unchanged too is
not written at all, so re-indexing after a small change costs only the changed chunks (a
changed citation or retraction rewrites the payload alone). Points of chunks that are gone
are deleted. The written partition is then checked against
the chunks (``completeness``) and rebuilt when the store does not hold exactly them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.completeness import drop_partition, index_state
from hysem_assets.stores.chunks import ChunkVectors, VectorStoreError, point_id, searchable_text

#: Chunk columns copied into each point's payload when present.
PAYLOAD_COLUMNS = (
    "doi",
    "cluster_id",
    "chunk_index",
    "section",
    "text",
    "evidence",
    "in_text_citation",
    "full_citation",
    "is_retracted",
)
CITATION_COLUMNS = ("doi", "in_text_citation", "full_citation")
#: Columns of the work a chunk carries: how to cite it, and whether it was retracted.
WORK_COLUMNS = (*CITATION_COLUMNS, "is_retracted")
ENCODE_SLICE = 1024


@dataclass(frozen=True)
class IndexSummary:
    query: str
    chunks: int
    embedded: int
    reused: int
    #: points written: new, re-embedded, or with a changed payload (a citation, a retraction)
    written: int
    deleted: int
    seconds: float


def with_citations(chunks: pd.DataFrame, corpus: pd.DataFrame) -> pd.DataFrame:
    """Chunks with their article's DOI and citations, so a hit can be cited as it is, and its
    retraction flag (when the corpus has one), so answers can leave retracted works out."""
    columns = ["cluster_id", *(c for c in WORK_COLUMNS if c in corpus.columns)]
    joined = chunks.drop(columns=[c for c in WORK_COLUMNS if c in chunks.columns]).merge(
        corpus[columns], on="cluster_id", how="left"
    )
    if "is_retracted" in joined:
        joined["is_retracted"] = joined["is_retracted"].astype("boolean").fillna(False).astype(bool)
    return joined


def _native(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def index_chunks(
    chunks: pd.DataFrame,
    *,
    query: str,
    store: ChunkVectors,
    embedder: Encoder,
    progress: Callable[[int, int], None] | None = None,
) -> IndexSummary:
    """Make the partition's points match ``chunks`` (see the module doc)."""
    started = time.perf_counter()
    store.ensure_collection(embedder.dimension)
    existing = dict(store.points(query))
    records = chunks.to_dict("records")
    ids = [point_id(query, str(row["chunk_id"])) for row in records]
    texts = [searchable_text(row["section"] or "", row["text"]) for row in records]
    payloads = [
        {
            "query": query,
            "chunk_id": str(row["chunk_id"]),
            **{column: _native(row[column]) for column in PAYLOAD_COLUMNS if column in row},
            "content_hash": row["content_hash"],
            "model": embedder.name,
        }
        for row in records
    ]

    vectors = np.zeros((len(records), embedder.dimension), dtype=np.float32)
    todo, unchanged = [], set()
    for position, (point, payload) in enumerate(zip(ids, payloads, strict=True)):
        stored = existing.get(point)
        if (
            stored is not None
            and stored.payload.get("content_hash") == payload["content_hash"]
            and stored.payload.get("model") == embedder.name
            and len(stored.vector) == embedder.dimension
        ):
            vectors[position] = stored.vector
            if stored.payload == payload:
                unchanged.add(position)
        else:
            todo.append(position)
    for start in range(0, len(todo), ENCODE_SLICE):
        positions = todo[start : start + ENCODE_SLICE]
        vectors[positions] = embedder.encode([texts[p] for p in positions])
        if progress:
            progress(start + len(positions), len(todo))

    write = [p for p in range(len(records)) if p not in unchanged]
    store.upsert([ids[p] for p in write], vectors[write], [texts[p] for p in write], [payloads[p] for p in write])
    current = set(ids)
    stale = [point for point in existing if point not in current]
    store.delete(stale)
    expected = {point: payload["content_hash"] for point, payload in zip(ids, payloads, strict=True)}
    state = index_state(expected, query=query, store=store)
    if not state.complete:  # the store lost or kept writes it should not have: rebuild the partition
        drop_partition(store, query)
        store.upsert(ids, vectors, texts, payloads)
        state = index_state(expected, query=query, store=store)
    if not state.complete:
        raise VectorStoreError(f"Indexing {query!r} left the stores incomplete: {state.describe()}")
    if write or stale:
        store.optimize()
    return IndexSummary(
        query=query,
        chunks=len(records),
        embedded=len(todo),
        reused=len(records) - len(todo),
        written=len(write),
        deleted=len(stale),
        seconds=time.perf_counter() - started,
    )
