"""Neo4j that is not there, or goes away in the middle of a load."""

from __future__ import annotations

import time
from urllib.parse import urlparse

import pytest

from hysem_assets.stores.graph import GraphStoreError, load_partition
from hysem_assets.stores.neo4j_graph import Neo4jGraphStore
from hysem_assets_tests.knowledge.partition import ARTICLES, partition, schema
from hysem_assets_tests.neo4j_launcher import free_port
from hysem_assets_tests.stores.conftest import empty_neo4j, neo4j_password
from hysem_assets_tests.stores.tcp_proxy import CuttingProxy


def test_unreachable_neo4j_is_a_clear_error_naming_the_uri() -> None:
    uri = f"bolt://127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(GraphStoreError, match=f"Neo4j at {uri} is unreachable.*HYSEM_NEO4J_URI"):
        Neo4jGraphStore(uri, connection_timeout_s=2)
    assert time.monotonic() - started < 10


def test_neo4j_going_away_mid_load_leaves_the_partition_as_it_was(neo4j_uri: str) -> None:
    empty_neo4j(neo4j_uri)
    direct = Neo4jGraphStore(neo4j_uri, password=neo4j_password())
    direct.ensure_schema(schema())
    before = load_partition(direct, schema(), partition(ARTICLES[:3])).counts
    bigger = partition(chunks_per_article=60)
    target = urlparse(neo4j_uri)

    with CuttingProxy(target.hostname or "127.0.0.1", target.port or 7687) as proxy:
        store = Neo4jGraphStore(proxy.uri, password=neo4j_password(), retry_time_s=1)
        store.ensure_schema(schema())
        proxy.cut_after(15_000)
        with pytest.raises(GraphStoreError, match=f"ozone-heart.*rolled back.*Neo4j at {proxy.uri}"):
            load_partition(store, schema(), bigger, batch_size=50)
        assert proxy.cut_done.is_set()
        store.close()

    assert direct.counts() == before
    load_partition(direct, schema(), bigger)
    assert direct.counts().nodes["Chunk"] == 360
    direct.close()
