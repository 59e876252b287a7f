"""Neo4j 5 over Bolt with the official driver.

Writes go through managed transactions (the driver retries transient failures by
re-running the whole unit of work), rows travel as ``UNWIND`` parameters, and every
name inside the Cypher text comes from the validated schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import pandas as pd
from neo4j import Driver, GraphDatabase, ManagedTransaction
from neo4j.exceptions import DriverError, Neo4jError

from hysem_assets.stores.graph import (
    GraphCounts,
    GraphStoreError,
    GraphWriter,
    RelationshipBatch,
    Row,
    count_by_schema,
    merge_nodes_cypher,
    merge_relationships_cypher,
    one_line,
    translate_errors,
)
from hysem_assets.stores.graph_schema import GraphSchema

T = TypeVar("T")


class Neo4jWriter:
    def __init__(self, tx: ManagedTransaction, schema: GraphSchema) -> None:
        self.tx = tx
        self.schema = schema

    def upsert_nodes(self, label: str, rows: Sequence[Row]) -> None:
        cypher = merge_nodes_cypher(self.schema, label) + " SET n += row.props"
        self.tx.run(cypher, {"rows": list(rows)}).consume()

    def upsert_relationships(self, batch: RelationshipBatch, rows: Sequence[Row], *, query: str, load: str) -> None:
        cypher = merge_relationships_cypher(self.schema, batch)
        self.tx.run(cypher, {"rows": list(rows), "query": query, "load": load}).consume()

    def run(self, cypher: str, parameters: Mapping[str, Any]) -> int:
        return int(self.tx.run(cypher, dict(parameters)).single(strict=True)[0])


class Neo4jGraphStore:
    """A Neo4j 5 database; ``uri`` such as ``bolt://127.0.0.1:7687``."""

    def __init__(
        self,
        uri: str,
        *,
        user: str = "neo4j",
        password: str | None = None,
        database: str | None = None,
        connection_timeout_s: float = 5.0,
        retry_time_s: float = 15.0,
    ) -> None:
        self.uri = uri
        self.database = database
        self._schema: GraphSchema | None = None
        auth = (user, password) if password else None
        self._driver: Driver = GraphDatabase.driver(
            uri,
            auth=auth,
            connection_timeout=connection_timeout_s,
            max_transaction_retry_time=retry_time_s,
            notifications_min_severity="OFF",
        )
        try:
            self._driver.verify_connectivity()
        except (DriverError, Neo4jError, OSError) as exc:
            self._driver.close()
            raise GraphStoreError(
                f"Neo4j at {uri} is unreachable ({one_line(exc)}). "
                "Start it, or point HYSEM_NEO4J_URI at a running server."
            ) from exc

    def ensure_schema(self, schema: GraphSchema) -> None:
        """A uniqueness constraint (and so an index) per node key. No index on the
        relationships' ``query``: the planner would scan it for every MERGE instead of
        expanding from the two matched nodes."""
        with self._errors("creating the schema"), self._driver.session(database=self.database) as session:
            for label, spec in schema.nodes.items():
                session.run(
                    f"CREATE CONSTRAINT `{label.lower()}_{spec.key}_unique` IF NOT EXISTS "
                    f"FOR (n:`{label}`) REQUIRE n.`{spec.key}` IS UNIQUE"
                ).consume()
            session.run("CALL db.awaitIndexes(300)").consume()
        self._schema = schema

    def write(self, work: Callable[[GraphWriter], T]) -> T:
        schema = self._require_schema()
        with self._errors("writing"), self._driver.session(database=self.database) as session:
            return session.execute_write(lambda tx: work(Neo4jWriter(tx, schema)))

    def query(self, cypher: str, parameters: Mapping[str, Any] | None = None) -> pd.DataFrame:
        def read(tx: ManagedTransaction) -> tuple[list[str], list[list[Any]]]:
            result = tx.run(cypher, dict(parameters or {}))
            rows = [record.values() for record in result]
            return list(result.keys()), rows

        with self._errors("reading"), self._driver.session(database=self.database) as session:
            columns, rows = session.execute_read(read)
        return pd.DataFrame(rows, columns=columns)

    def counts(self) -> GraphCounts:
        return count_by_schema(self, self._require_schema())

    def close(self) -> None:
        self._driver.close()

    def _require_schema(self) -> GraphSchema:
        if self._schema is None:
            raise GraphStoreError(f"Neo4j at {self.uri}: call ensure_schema() before writing or counting")
        return self._schema

    def _errors(self, doing: str) -> AbstractContextManager[None]:
        return translate_errors(f"Neo4j at {self.uri}, {doing}", (DriverError, Neo4jError, OSError))

    def __enter__(self) -> Neo4jGraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
