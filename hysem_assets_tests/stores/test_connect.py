from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.settings.profile import GraphSettings, VectorIndexSettings
from hysem_assets.stores.connect import open_chunk_store, open_graph_store
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.graph import GraphStoreError
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets_tests.neo4j_launcher import free_port


def test_embedded_defaults_live_under_hysem_home(isolated_home: Path) -> None:
    store = open_graph_store(GraphSettings())
    assert isinstance(store, LadybugGraphStore) and store.path == isolated_home / "graph" / "kg.lbug"
    store.close()
    chunks = open_chunk_store(VectorIndexSettings())
    assert isinstance(chunks, EdgeChunkStore) and chunks.location == str(isolated_home / "qdrant" / "chunks")
    chunks.close()


def test_the_environment_overrides_the_neo4j_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    uri = f"bolt://127.0.0.1:{free_port()}"
    monkeypatch.setenv("HYSEM_NEO4J_URI", uri)
    with pytest.raises(GraphStoreError, match=f"Neo4j at {uri} is unreachable"):
        open_graph_store(GraphSettings(backend="neo4j", uri="bolt://127.0.0.1:1"))
