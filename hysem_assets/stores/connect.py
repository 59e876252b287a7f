"""Open the configured stores: the graph store and the chunk store with its keyword indexes.

Server addresses and secrets from the environment (``HYSEM_NEO4J_URI``,
``HYSEM_NEO4J_PASSWORD``, ``HYSEM_QDRANT_URL``, ``HYSEM_QDRANT_API_KEY``) win over the
profile, so one deployment's secrets never have to be written into a file.
"""

from __future__ import annotations

import os
from pathlib import Path

from hysem_assets.environment import hysem_home
from hysem_assets.profile import GraphSettings, VectorIndexSettings
from hysem_assets.stores.graph import GraphStore
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets.stores.qdrant_chunks import QdrantChunkStore


def open_graph_store(settings: GraphSettings) -> GraphStore:
    if settings.backend == "neo4j":
        from hysem_assets.stores.neo4j_graph import Neo4jGraphStore  # the driver only where a server is used

        return Neo4jGraphStore(
            os.environ.get("HYSEM_NEO4J_URI") or settings.uri,
            user=settings.user,
            password=os.environ.get("HYSEM_NEO4J_PASSWORD") or None,
            database=settings.database,
        )
    path = Path(settings.path) if settings.path else hysem_home() / "graph" / "kg.lbug"
    return LadybugGraphStore(path, buffer_pool_mb=settings.buffer_pool_mb, lock_timeout=settings.lock_timeout_s)


def open_chunk_store(settings: VectorIndexSettings) -> QdrantChunkStore:
    url = os.environ.get("HYSEM_QDRANT_URL") or settings.url
    if url:
        return QdrantChunkStore(
            url=url, api_key=os.environ.get("HYSEM_QDRANT_API_KEY") or None, collection=settings.collection
        )
    path = Path(settings.path) if settings.path else hysem_home() / "qdrant"
    return QdrantChunkStore(path=path, collection=settings.collection, lock_timeout=settings.lock_timeout_s)


def keyword_root(settings: VectorIndexSettings) -> Path:
    return Path(settings.keyword_dir) if settings.keyword_dir else hysem_home() / "bm25"
