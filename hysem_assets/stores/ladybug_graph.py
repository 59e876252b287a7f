"""Embedded graph store on ``ladybug`` (the maintained Kuzu fork): no server, one file.

Differences from Neo4j stay here: tables are typed, so the DDL comes from the schema and
every property is written with an explicit CAST (a batch whose values are all null would
otherwise be typed by guess); there is no ``SET n += map``; and a parameter holding an
empty map is never sent, because the binding does not survive it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

import ladybug
import pandas as pd

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
from hysem_assets.stores.graph_schema import RELATIONSHIP_PROPERTIES, GraphSchema
from hysem_assets.stores.locking import acquire_store_lock

T = TypeVar("T")


def schema_ddl(schema: GraphSchema) -> list[str]:
    """Statements creating every table, and adding properties declared since; all idempotent."""
    statements: list[str] = []
    for label, spec in schema.nodes.items():
        statements.append(f"CREATE NODE TABLE IF NOT EXISTS `{label}`(`{spec.key}` STRING, PRIMARY KEY(`{spec.key}`))")
        statements += [
            f"ALTER TABLE `{label}` ADD IF NOT EXISTS `{name}` {kind}" for name, kind in spec.properties.items()
        ]
    for rel_type, rel in schema.relationships.items():
        pairs = ", ".join(f"FROM `{rel.source}` TO `{target}`" for target in rel.targets)
        columns = ", ".join(f"`{name}` STRING" for name in RELATIONSHIP_PROPERTIES)
        statements.append(f"CREATE REL TABLE IF NOT EXISTS `{rel_type}`({pairs}, {columns})")
        statements += [
            f"ALTER TABLE `{rel_type}` ADD IF NOT EXISTS `{name}` {kind}" for name, kind in rel.properties.items()
        ]
    return statements


class LadybugWriter:
    def __init__(self, connection: ladybug.Connection, schema: GraphSchema) -> None:
        self.connection = connection
        self.schema = schema

    def upsert_nodes(self, label: str, rows: Sequence[Row]) -> None:
        written = rows[0]["props"] if rows else {}
        properties = {name: kind for name, kind in self.schema.nodes[label].properties.items() if name in written}
        cypher = merge_nodes_cypher(self.schema, label)
        if properties:
            cypher += " SET " + ", ".join(
                f"n.`{name}` = CAST(row.props.`{name}` AS {kind})" for name, kind in properties.items()
            )
            batch = [
                {"key": row["key"], "props": {name: row["props"].get(name) for name in properties}} for row in rows
            ]
        else:
            batch = [{"key": row["key"]} for row in rows]
        self.connection.execute(cypher, {"rows": batch})

    def upsert_relationships(self, batch: RelationshipBatch, rows: Sequence[Row], *, query: str, load: str) -> None:
        cypher = merge_relationships_cypher(self.schema, batch, cast=True)
        self.connection.execute(cypher, {"rows": list(rows), "query": query, "load": load})

    def run(self, cypher: str, parameters: Mapping[str, Any]) -> int:
        result = self.connection.execute(cypher, dict(parameters) or None)
        return int(result.get_next()[0])


class LadybugGraphStore:
    """A ladybug database file at ``path`` (created with its folder when missing)."""

    def __init__(self, path: Path, *, buffer_pool_mb: int = 512, lock_timeout: float = 3600) -> None:
        self.path = Path(path)
        self._schema: GraphSchema | None = None
        try:
            self._lock = acquire_store_lock(self.path, timeout=lock_timeout, what="Graph database")
        except TimeoutError as exc:
            raise GraphStoreError(str(exc)) from exc
        try:
            self._database = ladybug.Database(str(self.path), buffer_pool_size=buffer_pool_mb * 1024 * 1024)
            self._connection = ladybug.Connection(self._database)
        except (RuntimeError, OSError) as exc:
            self._lock.release()
            raise GraphStoreError(f"Graph database {self.path} cannot be opened ({one_line(exc)})") from exc

    def ensure_schema(self, schema: GraphSchema) -> None:
        with self._errors("creating the schema"):
            for statement in schema_ddl(schema):
                self._connection.execute(statement)
        self._schema = schema

    def write(self, work: Callable[[GraphWriter], T]) -> T:
        writer = LadybugWriter(self._connection, self._require_schema())
        return self._in_transaction("BEGIN TRANSACTION", "writing", lambda: work(writer))

    def query(self, cypher: str, parameters: Mapping[str, Any] | None = None) -> pd.DataFrame:
        def read() -> pd.DataFrame:
            result = self._connection.execute(cypher, dict(parameters or {}) or None)
            rows = []
            while result.has_next():
                rows.append(result.get_next())
            return pd.DataFrame(rows, columns=result.get_column_names())

        return self._in_transaction("BEGIN TRANSACTION READ ONLY", "reading", read)

    def counts(self) -> GraphCounts:
        return count_by_schema(self, self._require_schema())

    def close(self) -> None:
        self._connection.close()
        self._database.close()
        self._lock.release()

    def _in_transaction(self, begin: str, doing: str, work: Callable[[], T]) -> T:
        with self._errors(doing):
            self._connection.execute(begin)
            try:
                result = work()
            except BaseException:
                self._rollback()
                raise
            self._connection.execute("COMMIT")
            return result

    def _rollback(self) -> None:
        try:
            self._connection.execute("ROLLBACK")
        except RuntimeError:
            pass  # a failed statement has already rolled the transaction back

    def _require_schema(self) -> GraphSchema:
        if self._schema is None:
            raise GraphStoreError(f"Graph database {self.path}: call ensure_schema() before writing or counting")
        return self._schema

    def _errors(self, doing: str) -> AbstractContextManager[None]:
        return translate_errors(f"Graph database {self.path}, {doing}", (RuntimeError,))

    def __enter__(self) -> LadybugGraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
