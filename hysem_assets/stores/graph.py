"""One interface over the graph stores, and the partition load written against it.

A partition is loaded in a single write transaction: upsert its nodes and relationships
in batches, then detach what an earlier load of the same partition wrote and this one did
not, then delete nodes left without any relationship. A failure anywhere (bad record,
lost connection, server gone) rolls the whole transaction back, so readers see either the
previous load of the partition or the new one, never a mix.

Relationships belong to the partition that wrote them (property ``query``) and carry the
id of the load that last wrote them (``load``): that is how stale ones are told apart
without keeping a list of what was there before.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import islice
from typing import Any, Protocol, TypeVar

import pandas as pd

from hysem_assets.settings.profile import GRAPH_BATCH_SIZE
from hysem_assets.stores.graph_schema import GraphSchema

T = TypeVar("T")
#: One node row ``{"key": ..., "props": {...}}`` or relationship row ``{"src": ..., "dst": ...}`` (with ``props``
#: where its type declares properties).
Row = dict[str, Any]


class GraphStoreError(Exception):
    """A graph store refused or lost a read or write; the message names the store."""


@dataclass(frozen=True)
class NodeBatch:
    """Nodes of one label, keyed by the label's key property."""

    label: str
    rows: list[Row]


@dataclass(frozen=True)
class RelationshipBatch:
    """Relationships of one type between two labels, by the keys of their ends."""

    type: str
    source: str
    target: str
    rows: list[Row]


@dataclass(frozen=True)
class PartitionGraph:
    """Everything one partition contributes to the graph."""

    query: str
    nodes: list[NodeBatch]
    relationships: list[RelationshipBatch]

    def node_counts(self) -> dict[str, int]:
        return dict(sum((Counter({b.label: len(b.rows)}) for b in self.nodes), Counter()))

    def relationship_counts(self) -> dict[str, int]:
        return dict(sum((Counter({b.type: len(b.rows)}) for b in self.relationships), Counter()))


@dataclass(frozen=True)
class GraphCounts:
    nodes: dict[str, int]
    relationships: dict[str, int]


@dataclass(frozen=True)
class LoadSummary:
    query: str
    load_id: str
    nodes: dict[str, int]
    relationships: dict[str, int]
    detached: int
    pruned: int
    seconds: float
    counts: GraphCounts = field(repr=False)


class GraphWriter(Protocol):
    """The statements of one open write transaction."""

    def upsert_nodes(self, label: str, rows: Sequence[Row]) -> None: ...

    def upsert_relationships(self, batch: RelationshipBatch, rows: Sequence[Row], *, query: str, load: str) -> None: ...

    def run(self, cypher: str, parameters: Mapping[str, Any]) -> int:
        """Run a statement that ends in ``RETURN count(*)`` and give that count."""
        ...


class GraphStore(Protocol):
    def ensure_schema(self, schema: GraphSchema) -> None:
        """Create constraints, indexes or tables the schema needs; safe to repeat."""
        ...

    def write(self, work: Callable[[GraphWriter], T]) -> T:
        """Run ``work`` in one write transaction: all of it commits, or none of it."""
        ...

    def query(self, cypher: str, parameters: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Run a read-only query; a write inside it is refused."""
        ...

    def counts(self) -> GraphCounts: ...

    def close(self) -> None: ...


@contextmanager
def translate_errors(context: str, kinds: tuple[type[BaseException], ...]) -> Iterator[None]:
    """Re-raise a backend's own errors as GraphStoreError prefixed with ``context``."""
    try:
        yield
    except kinds as exc:
        raise GraphStoreError(f"{context}: {type(exc).__name__}: {one_line(exc)}") from exc


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def batched(rows: Sequence[Row], size: int) -> Iterator[list[Row]]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def merge_nodes_cypher(schema: GraphSchema, label: str) -> str:
    """``MERGE`` of a batch of ``{key, props}`` rows on the label's key; callers add the SET."""
    return f"UNWIND $rows AS row MERGE (n:`{label}` {{`{schema.key(label)}`: row.key}})"


def merge_relationships_cypher(schema: GraphSchema, batch: RelationshipBatch, *, cast: bool = False) -> str:
    """``MERGE`` of a batch of ``{src, dst}`` rows, owned by ``$query`` and stamped ``$load``; a type with
    properties of its own takes them from each row's ``props``, matching on its ``merge_on`` ones (``cast``
    writes each as its declared type, for stores whose columns are typed)."""
    spec = schema.relationships[batch.type]

    def value(name: str) -> str:
        return f"CAST(row.props.`{name}` AS {spec.properties[name]})" if cast else f"row.props.`{name}`"

    matched = "".join(f", `{name}`: {value(name)}" for name in spec.merge_on)
    updated = "".join(f", r.`{name}` = {value(name)}" for name in spec.properties if name not in spec.merge_on)
    return (
        f"UNWIND $rows AS row "
        f"MATCH (a:`{batch.source}` {{`{schema.key(batch.source)}`: row.src}}) "
        f"MATCH (b:`{batch.target}` {{`{schema.key(batch.target)}`: row.dst}}) "
        f"MERGE (a)-[r:`{batch.type}` {{query: $query{matched}}}]->(b) SET r.load = $load{updated}"
    )


def detach_stale(writer: GraphWriter, schema: GraphSchema, query: str, load: str) -> int:
    """Delete the partition's relationships that the current load did not write."""
    return sum(
        writer.run(
            f"MATCH ()-[r:`{rel_type}`]->() WHERE r.query = $query AND r.load <> $load DELETE r RETURN count(*)",
            {"query": query, "load": load},
        )
        for rel_type in schema.relationships
    )


def prune_orphans(writer: GraphWriter, schema: GraphSchema) -> int:
    """Delete nodes (other than Query nodes) that no relationship reaches any more."""
    return sum(
        writer.run(f"MATCH (n:`{label}`) WHERE NOT EXISTS {{ MATCH (n)--() }} DELETE n RETURN count(*)", {})
        for label in schema.nodes
        if label != "Query"
    )


def partition_loaded(store: GraphStore, query: str) -> bool:
    """Whether the graph holds a load of partition ``query`` (its Query node; a load is one transaction, so an
    interrupted one leaves none). False for a store no load ever gave tables."""
    try:
        found = store.query("MATCH (q:Query {key: $query}) RETURN count(q) AS n", {"query": query})
    except GraphStoreError:
        return False
    return int(found.iloc[0, 0]) > 0


def partition_relationships(store: GraphStore, query: str, types: Sequence[str]) -> dict[str, int]:
    """How many relationships of each of ``types`` partition ``query`` holds (every load tags its own)."""
    return {
        rel_type: int(
            store.query(
                f"MATCH ()-[r:`{rel_type}`]->() WHERE r.query = $query RETURN count(r) AS n", {"query": query}
            ).iloc[0, 0]
        )
        for rel_type in types
    }


def count_by_schema(store: GraphStore, schema: GraphSchema) -> GraphCounts:
    """Node counts per label and relationship counts per type, as declared in the schema."""
    nodes = {label: int(store.query(f"MATCH (n:`{label}`) RETURN count(n) AS n").iloc[0, 0]) for label in schema.nodes}
    relationships = {
        rel_type: int(store.query(f"MATCH ()-[r:`{rel_type}`]->() RETURN count(r) AS n").iloc[0, 0])
        for rel_type in schema.relationships
    }
    return GraphCounts(nodes, relationships)


def load_partition(
    store: GraphStore,
    schema: GraphSchema,
    graph: PartitionGraph,
    *,
    batch_size: int = GRAPH_BATCH_SIZE,
    progress: Callable[[int, int], None] | None = None,
) -> LoadSummary:
    """Write one partition atomically; re-loading the same input changes nothing."""
    load = uuid.uuid4().hex
    total = sum(len(b.rows) for b in graph.nodes) + sum(len(b.rows) for b in graph.relationships)
    started = time.perf_counter()

    def work(writer: GraphWriter) -> tuple[int, int]:
        steps: list[tuple[Callable[[list[Row]], None], list[Row]]] = [
            *((partial(writer.upsert_nodes, b.label), b.rows) for b in graph.nodes),
            *(
                (partial(writer.upsert_relationships, b, query=graph.query, load=load), b.rows)
                for b in graph.relationships
            ),
        ]
        done = 0
        for write_rows, rows in steps:
            for batch in batched(rows, batch_size):
                write_rows(batch)
                done += len(batch)
                if progress:
                    progress(done, total)
        return detach_stale(writer, schema, graph.query, load), prune_orphans(writer, schema)

    try:
        detached, pruned = store.write(work)
    except GraphStoreError as exc:
        raise GraphStoreError(
            f"Loading partition {graph.query!r} failed and was rolled back "
            f"(the graph keeps its previous load of this partition): {exc}"
        ) from exc
    return LoadSummary(
        query=graph.query,
        load_id=load,
        nodes=graph.node_counts(),
        relationships=graph.relationship_counts(),
        detached=detached,
        pruned=pruned,
        seconds=time.perf_counter() - started,
        counts=store.counts(),
    )
