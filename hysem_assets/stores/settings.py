"""Which graph and vector stores a profile uses, and opening them.

Profiles say ``graph:`` and ``vectors:`` (see the models below); endpoints can be
overridden from the environment (``HYSEM_NEO4J_URI``, ``HYSEM_QDRANT_URL``), and secrets
come only from it (``HYSEM_NEO4J_PASSWORD``, ``HYSEM_QDRANT_API_KEY``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from hysem_assets.settings import hysem_home
from hysem_assets.stores.graph import BATCH_SIZE, GraphStore
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets.stores.neo4j_graph import Neo4jGraphStore
from hysem_assets.stores.qdrant_chunks import QdrantChunkStore


class GraphSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["ladybug", "neo4j"] = "ladybug"
    #: ladybug database file (default: $HYSEM_HOME/graph/kg.lbug)
    path: Path | None = None
    buffer_pool_mb: int = Field(512, ge=64)
    #: how long to wait for another process (a parallel run, `hysem ask`) to close the file
    lock_timeout_s: float = Field(3600, ge=0)
    #: Neo4j bolt URI (HYSEM_NEO4J_URI wins)
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    database: str | None = None
    batch_size: int = Field(BATCH_SIZE, ge=1)


class VectorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: Qdrant server URL (HYSEM_QDRANT_URL wins); without one, local mode in ``path``
    url: str | None = None
    #: local-mode folder (default: $HYSEM_HOME/qdrant)
    path: Path | None = None
    collection: str = "chunks"
    #: keyword indexes, one folder per partition (default: $HYSEM_HOME/bm25)
    keyword_dir: Path | None = None
    #: how long to wait for another process to close the local-mode folder
    lock_timeout_s: float = Field(3600, ge=0)


def open_graph_store(settings: GraphSettings) -> GraphStore:
    if settings.backend == "neo4j":
        return Neo4jGraphStore(
            os.environ.get("HYSEM_NEO4J_URI") or settings.uri,
            user=settings.user,
            password=os.environ.get("HYSEM_NEO4J_PASSWORD") or None,
            database=settings.database,
        )
    path = settings.path or hysem_home() / "graph" / "kg.lbug"
    return LadybugGraphStore(path, buffer_pool_mb=settings.buffer_pool_mb, lock_timeout=settings.lock_timeout_s)


def open_chunk_store(settings: VectorSettings) -> QdrantChunkStore:
    url = os.environ.get("HYSEM_QDRANT_URL") or settings.url
    if url:
        return QdrantChunkStore(
            url=url, api_key=os.environ.get("HYSEM_QDRANT_API_KEY") or None, collection=settings.collection
        )
    return QdrantChunkStore(
        path=settings.path or hysem_home() / "qdrant", collection=settings.collection, lock_timeout=settings.lock_timeout_s
    )


def keyword_root(settings: VectorSettings) -> Path:
    return settings.keyword_dir or hysem_home() / "bm25"
