"""Open the configured stores: the graph store and the chunk store (Qdrant Edge or a server).

Server addresses and secrets from the environment (``HYSEM_NEO4J_URI``,
``HYSEM_NEO4J_PASSWORD``, ``HYSEM_QDRANT_URL``, ``HYSEM_QDRANT_API_KEY``) win over the
profile, so one deployment's secrets never have to be written into a file.
"""

from __future__ import annotations

from pathlib import Path

from hysem_assets.embedding.encoder import Encoder, profile_encoder
from hysem_assets.settings.environment import graph_server, hysem_home, vector_server
from hysem_assets.settings.profile import GraphSettings, VectorIndexSettings
from hysem_assets.stores.chunks import ChunkVectors
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.graph import GraphStore
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets.stores.migration import local_mode_files, migrate_local_mode


def open_graph_store(settings: GraphSettings) -> GraphStore:
    if settings.backend == "neo4j":
        from hysem_assets.stores.neo4j_graph import Neo4jGraphStore  # the driver only where a server is used

        uri, password = graph_server(settings.uri)
        return Neo4jGraphStore(uri, user=settings.user, password=password, database=settings.database)
    path = Path(settings.path) if settings.path else hysem_home() / "graph" / "kg.lbug"
    return LadybugGraphStore(path, buffer_pool_mb=settings.buffer_pool_mb, lock_timeout=settings.lock_timeout_s)


def chunk_store_folder(settings: VectorIndexSettings) -> Path:
    return Path(settings.path) if settings.path else hysem_home() / "qdrant"


def open_chunk_store(settings: VectorIndexSettings) -> ChunkVectors:
    """A Qdrant server when a URL is set (``qdrant-client``), else Qdrant Edge in a folder."""
    url, api_key = vector_server(settings.url)
    if url:
        from hysem_assets.stores.qdrant_chunks import QdrantChunkStore  # the client only where a server is used

        return QdrantChunkStore(url, api_key=api_key, collection=settings.collection)
    folder = chunk_store_folder(settings)
    if local_mode_files(folder) is not None:  # written by an earlier version: moved into Edge once
        migrate_local_mode(folder, lock_timeout=settings.lock_timeout_s)
    return EdgeChunkStore(folder, collection=settings.collection, lock_timeout=settings.lock_timeout_s)


def chunk_encoder(settings: VectorIndexSettings) -> Encoder:
    """The model that embeds a store's chunks and the questions searched against them: on the CPU
    through the profile's backend, with vectors embedded before (any run, any partition) read from
    ``$HYSEM_HOME/vector_cache``."""
    return profile_encoder(
        settings.model, device=settings.device, batch_size=settings.batch_size, backend=settings.embedding_backend
    )
