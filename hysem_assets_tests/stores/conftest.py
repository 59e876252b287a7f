"""Both graph stores for every graph test: ladybug in a temporary folder, and a real Neo4j 5.

Neo4j is the one at ``HYSEM_NEO4J_URI`` when set (CI starts it once before the tests),
otherwise the project's launcher is built and started here for the session. Each test
starts from an empty database and has it to itself (the suite's workers take turns through
a lock file); a database that holds data these tests did not write is never wiped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock
from neo4j import GraphDatabase

from hysem_assets.stores.graph import GraphStore
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets.stores.neo4j_graph import Neo4jGraphStore
from hysem_assets_tests.knowledge.partition import schema
from hysem_assets_tests.neo4j_launcher import running_neo4j

#: Label of the one node that says "this database belongs to the test suite".
TEST_MARKER = "HysemTestDatabase"


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    uri = os.environ.get("HYSEM_NEO4J_URI")
    if uri:
        yield uri
        return
    with running_neo4j(tmp_path_factory.mktemp("neo4j")) as started:
        yield started


@pytest.fixture
def neo4j_uri(neo4j_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server, held by this test alone: the suite's workers share its one database."""
    with FileLock(tmp_path_factory.getbasetemp().parent / "neo4j-tests.lock"):
        yield neo4j_server


def neo4j_password() -> str | None:
    return os.environ.get("HYSEM_NEO4J_PASSWORD") or None


def empty_neo4j(uri: str) -> None:
    auth = ("neo4j", neo4j_password()) if neo4j_password() else None
    with GraphDatabase.driver(uri, auth=auth, notifications_min_severity="OFF") as driver:
        marked = driver.execute_query(f"MATCH (m:{TEST_MARKER}) RETURN count(m) AS n").records[0]["n"]
        others = driver.execute_query(f"MATCH (n) WHERE NOT n:{TEST_MARKER} RETURN count(n) AS n").records[0]["n"]
        if others and not marked:
            pytest.fail(f"{uri} holds {others} nodes these tests did not write; point HYSEM_NEO4J_URI at a test server")
        driver.execute_query(f"MERGE (:{TEST_MARKER})")
        driver.execute_query(f"MATCH (n) WHERE NOT n:{TEST_MARKER} DETACH DELETE n")


def open_store(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> GraphStore:
    if backend == "ladybug":
        return LadybugGraphStore(tmp_path / "graph" / "kg.lbug", buffer_pool_mb=128)
    uri = request.getfixturevalue("neo4j_uri")
    empty_neo4j(uri)
    return Neo4jGraphStore(uri, password=neo4j_password())


@pytest.fixture(params=["ladybug", "neo4j"])
def graph_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    store = open_store(request.param, tmp_path, request)
    store.ensure_schema(schema())
    yield store
    store.close()
