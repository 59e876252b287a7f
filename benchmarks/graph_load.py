"""Graph load rate: the batched loader against one-row-at-a-time MERGE, on both stores.

A synthetic partition (articles with ML methods, pollutants, outcomes, regions and
chunks that mention them) is built with the production builder. On each store the
script then writes the partition's relationships twice under fresh partition keys:
in UNWIND batches of 1,000 inside one transaction (the loader), and one MERGE per
transaction (the baseline, on the first rows only). It prints relationships per second
for both and their ratio (goal: at least 30). Neo4j is the server at HYSEM_NEO4J_URI
when set (the script removes what it wrote), otherwise the project's launcher.

    python benchmarks/graph_load.py [--articles 2000] [--baseline-rows 1000] [--backends ladybug,neo4j]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path

import pandas as pd

from hysem_assets.knowledge.build import build_partition_graph
from hysem_assets.settings.profile import GRAPH_BATCH_SIZE as BATCH_SIZE
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph import (
    GraphStore,
    GraphWriter,
    PartitionGraph,
    RelationshipBatch,
    Row,
    batched,
    load_partition,
)
from hysem_assets.stores.graph_schema import GraphSchema, graph_schema
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets.stores.neo4j_graph import Neo4jGraphStore
from hysem_assets_tests.neo4j_launcher import running_neo4j

GOAL = 30.0
PREFIX = "bench-"


def synthetic_graph(schema: GraphSchema, articles: int, seed: int) -> PartitionGraph:
    rng = random.Random(seed)
    vocabulary = {
        "ml_methods_used": [f"method {n}" for n in range(300)],
        "pollutant_terms": [f"pollutant {n}" for n in range(40)],
        "health_outcome": [f"outcome {n}" for n in range(80)],
        "geography": [f"region {n}" for n in range(120)],
    }
    counts = {"ml_methods_used": 4, "pollutant_terms": 2, "health_outcome": 2, "geography": 1}
    clusters = [f"c-{n:06d}" for n in range(articles)]
    corpus = pd.DataFrame(
        {"cluster_id": c, "doi": f"10.5555/bench.{n}", "title": f"Synthetic article {n}", "year": 2000 + n % 25}
        for n, c in enumerate(clusters)
    )
    fields = pd.DataFrame(
        {"cluster_id": c, "study_type": "cohort", **{f: rng.sample(vocabulary[f], counts[f]) for f in vocabulary}}
        for c in clusters
    )
    chunks = pd.DataFrame(
        {
            "chunk_id": f"{c}:{i}",
            "cluster_id": c,
            "chunk_index": i,
            "section": "Methods",
            "text": "synthetic text " * 20,
            "mentions": {f: rng.sample(vocabulary[f], 1) for f in ("ml_methods_used", "pollutant_terms")},
        }
        for c in clusters
        for i in range(3)
    )
    return build_partition_graph(schema, PREFIX + "nodes", corpus=corpus, fields=fields, chunks=chunks)


def relationship_rows(graph: PartitionGraph) -> list[tuple[RelationshipBatch, Row]]:
    return [(batch, row) for batch in graph.relationships for row in batch.rows]


def batched_rate(store: GraphStore, graph: PartitionGraph) -> tuple[int, float]:
    def work(writer: GraphWriter) -> None:
        for batch in graph.relationships:
            for rows in batched(batch.rows, BATCH_SIZE):
                writer.upsert_relationships(batch, rows, query=PREFIX + "batched", load="1")

    started = time.perf_counter()
    store.write(work)
    return sum(len(b.rows) for b in graph.relationships), time.perf_counter() - started


def write_one(writer: GraphWriter, *, batch: RelationshipBatch, row: Row) -> None:
    writer.upsert_relationships(batch, [row], query=PREFIX + "single", load="1")


def one_at_a_time_rate(store: GraphStore, graph: PartitionGraph, limit: int) -> tuple[int, float]:
    rows = relationship_rows(graph)
    sample = random.Random(1).sample(rows, min(limit, len(rows)))
    started = time.perf_counter()
    for batch, row in sample:
        store.write(partial(write_one, batch=batch, row=row))
    return len(sample), time.perf_counter() - started


def remove_benchmark_data(store: GraphStore, schema: GraphSchema) -> None:
    """Load every benchmark partition empty (detaching and pruning what it wrote), then drop its Query nodes."""
    for suffix in ("nodes", "batched", "single"):
        load_partition(store, schema, PartitionGraph(PREFIX + suffix, [], []))
    store.write(
        lambda writer: writer.run(
            "MATCH (q:Query) WHERE q.key STARTS WITH $prefix DETACH DELETE q RETURN count(*)", {"prefix": PREFIX}
        )
    )


@contextmanager
def open_store(backend: str, stack: ExitStack, scratch: Path) -> Iterator[GraphStore]:
    if backend == "ladybug":
        store: GraphStore = LadybugGraphStore(scratch / "kg.lbug")
    else:
        uri = os.environ.get("HYSEM_NEO4J_URI") or stack.enter_context(running_neo4j(scratch / "neo4j"))
        store = Neo4jGraphStore(uri, password=os.environ.get("HYSEM_NEO4J_PASSWORD") or None)
    try:
        yield store
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=2000)
    parser.add_argument("--baseline-rows", type=int, default=1000)
    parser.add_argument("--backends", default="ladybug,neo4j")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    schema = graph_schema(load_protocols(), load_protocol("pollution-cardio-ml"))
    graph = synthetic_graph(schema, args.articles, args.seed)
    nodes, relationships = sum(graph.node_counts().values()), sum(graph.relationship_counts().values())
    print(f"partition: {nodes:,} nodes, {relationships:,} relationships")
    ratios = {}
    with ExitStack() as stack, tempfile.TemporaryDirectory() as scratch:
        for backend in args.backends.split(","):
            with open_store(backend, stack, Path(scratch) / backend) as store:
                store.ensure_schema(schema)
                full = load_partition(store, schema, graph)
                loaded, loaded_s = batched_rate(store, graph)
                single, single_s = one_at_a_time_rate(store, graph, args.baseline_rows)
                remove_benchmark_data(store, schema)
            batched_per_s, single_per_s = loaded / loaded_s, single / single_s
            ratios[backend] = batched_per_s / single_per_s
            print(f"== {backend}")
            rows_per_s = (nodes + relationships) / full.seconds
            print(f"  whole partition load:   {full.seconds:6.2f} s  ({rows_per_s:,.0f} rows/s)")
            print(f"  batched relationships:  {loaded:,} in {loaded_s:.2f} s  ({batched_per_s:,.0f}/s)")
            print(f"  one MERGE per tx:       {single:,} in {single_s:.2f} s  ({single_per_s:,.0f}/s)")
            verdict = "met" if ratios[backend] >= GOAL else "NOT met"
            print(f"  ratio: {ratios[backend]:.1f}x  (goal {GOAL:.0f}x: {verdict})")


if __name__ == "__main__":
    main()
