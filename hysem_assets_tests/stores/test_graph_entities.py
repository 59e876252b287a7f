"""The entity graph in both graph stores: Entity nodes of the entities tables, linked from works and chunks,
related and co-occurring, loaded incrementally; works per entity counted in the graph as in the table."""

from __future__ import annotations

import pandas as pd
import pytest

from hysem_assets.entities.mentions import MENTION_COLUMNS, RELATION_COLUMNS
from hysem_assets.knowledge.build import build_partition_graph, co_occurrences
from hysem_assets.stores.graph import GraphStore, load_partition
from hysem_assets_tests.knowledge.partition import ARTICLES, QUERY, frames, schema

#: (cluster_id, chunk_id, type, text, name): c-1 and c-2 use random forest and AUC, c-3 an LSTM network.
MENTIONS = [
    ("c-1", "c-1:0", "Method", "random forests", "random forest"),
    ("c-1", "c-1:1", "Method", "RF", "random forest"),
    ("c-1", "c-1:1", "Method", "XGBoost", "xgboost"),
    ("c-1", None, "Metric", "AUC", "auc"),
    ("c-1", "c-1:1", "Generic", "method", "method"),
    ("c-2", "c-2:0", "Method", "Random Forest", "random forest"),
    ("c-2", "c-2:0", "Metric", "AUC", "auc"),
    ("c-3", "c-3:0", "Method", "LSTM network", "lstm network"),
    ("c-3", "c-3:1", "Task", "forecasting", "forecasting"),
]
#: (cluster_id, first, first_type, second, second_type, label, probability)
RELATIONS = [
    ("c-1", "random forest", "Method", "xgboost", "Method", "COMPARE", 0.91),
    ("c-1", "auc", "Metric", "random forest", "Method", "EVALUATE-FOR", 0.62),
    ("c-1", "auc", "Metric", "random forest", "Method", "EVALUATE-FOR", 0.87),  # the likelier sentence is kept
    ("c-2", "auc", "Metric", "random forest", "Method", "EVALUATE-FOR", 0.7),
    ("c-1", "method", "Generic", "xgboost", "Method", "USED-FOR", 0.99),  # generic: no node, no relation
    ("c-3", "lstm network", "Method", "forecasting", "Task", "USED-FOR", 0.8),
]
WORKS_PER_METHOD = (
    "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)-[r:HAS_ENTITY]->(e:Entity {type: 'Method'}) "
    "WHERE r.query = $query RETURN e.name AS name, count(DISTINCT a) AS works ORDER BY name"
)


def tables(mentions: list[tuple] = MENTIONS, relations: list[tuple] = RELATIONS) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [
        dict(zip(MENTION_COLUMNS, (c, chunk, "abstract", kind, text, name, 0, len(text), f"{text} here."), strict=True))
        for c, chunk, kind, text, name in mentions
    ]
    related = [dict(zip(RELATION_COLUMNS, (*row, f"{row[1]} and {row[3]}."), strict=True)) for row in relations]
    return pd.DataFrame(rows, columns=list(MENTION_COLUMNS)), pd.DataFrame(related, columns=list(RELATION_COLUMNS))


def entity_partition(mentions: list[tuple] = MENTIONS, relations: list[tuple] = RELATIONS):
    found, related = tables(mentions, relations)
    return build_partition_graph(schema(), QUERY, **frames(ARTICLES), entity_mentions=found, entity_relations=related)


def test_the_entity_graph_is_built_from_the_tables() -> None:
    graph = entity_partition()
    assert graph.node_counts()["Entity"] == 5  # the generic "method" is no node
    counts = graph.relationship_counts()
    assert (counts["HAS_ENTITY"], counts["MENTIONS_ENTITY"], counts["RELATED"]) == (7, 7, 4)
    has = {(r["src"], r["dst"]): r["props"]["mentions"] for b in graph.relationships if b.type == "HAS_ENTITY"
           for r in b.rows}  # fmt: skip
    assert has[("10.1000/a1", "Method:random forest")] == 2


def test_co_occurrence_weights_count_works_and_are_bounded_per_entity() -> None:
    works = {"w1": {"a", "b", "c"}, "w2": {"a", "b"}, "w3": {"a", "d"}}
    assert co_occurrences(works) == [("a", "b", 2), ("a", "c", 1), ("a", "d", 1), ("b", "c", 1)]
    # each keeps its one partner of most works (then by name): a-b, c-a, d-a
    assert co_occurrences(works, per_entity=1) == [("a", "b", 2), ("a", "c", 1), ("a", "d", 1)]


@pytest.fixture
def store(graph_store: GraphStore) -> GraphStore:
    graph_store.ensure_schema(schema())
    return graph_store


def test_entities_load_into_both_stores_and_count_works_as_the_table_does(store: GraphStore) -> None:
    summary = load_partition(store, schema(), entity_partition())
    assert summary.counts.nodes["Entity"] == 5 and summary.counts.relationships["CO_OCCURS"] == 4
    mentions, _ = tables()
    methods = mentions[mentions["type"] == "Method"].groupby("name")["cluster_id"].nunique()
    in_graph = store.query(WORKS_PER_METHOD, {"query": QUERY})
    assert dict(zip(in_graph["name"], in_graph["works"], strict=True)) == methods.to_dict()

    related = store.query(
        "MATCH (a:Entity)-[r:RELATED]->(b:Entity {entity_id: 'Method:random forest'}) "
        "RETURN a.name AS first, r.label AS label, r.article AS article, r.probability AS p, r.sentence AS sentence "
        "ORDER BY article"
    )
    assert related.to_dict("records") == [
        {"first": "auc", "label": "EVALUATE-FOR", "article": "10.1000/a1", "p": 0.87, "sentence": "auc and random forest."},
        {"first": "auc", "label": "EVALUATE-FOR", "article": "10.1000/a2", "p": 0.7, "sentence": "auc and random forest."},
    ]  # fmt: skip
    weights = store.query(
        "MATCH (a:Entity)-[r:CO_OCCURS]->(b:Entity) RETURN a.name AS one, b.name AS other, r.weight AS weight "
        "ORDER BY one, other"
    )
    assert [tuple(row) for row in weights.itertuples(index=False)] == [
        ("lstm network", "forecasting", 1), ("random forest", "auc", 2), ("random forest", "xgboost", 1),
        ("xgboost", "auc", 1),
    ]  # fmt: skip
    chunked = store.query("MATCH (c:Chunk)-[:MENTIONS_ENTITY]->(e:Entity) RETURN c.chunk_id AS chunk, e.name AS name")
    assert ("c-1:1", "random forest") in set(chunked.itertuples(index=False, name=None))


def test_entities_are_loaded_incrementally(store: GraphStore) -> None:
    first = load_partition(store, schema(), entity_partition())
    again = load_partition(store, schema(), entity_partition())
    assert again.counts == first.counts and (again.detached, again.pruned) == (0, 0)

    # c-2 no longer mentions anything: its links go, random forest and AUC now share one work
    load_partition(
        store,
        schema(),
        entity_partition([m for m in MENTIONS if m[0] != "c-2"], [r for r in RELATIONS if r[0] != "c-2"]),
    )
    weight = store.query(
        "MATCH (:Entity {entity_id: 'Method:random forest'})-[r:CO_OCCURS]->(:Entity {entity_id: 'Metric:auc'}) "
        "RETURN r.weight AS weight"
    )
    assert weight["weight"].tolist() == [1]
    assert store.query(WORKS_PER_METHOD, {"query": QUERY}).to_dict("records") == [
        {"name": "lstm network", "works": 1}, {"name": "random forest", "works": 1}, {"name": "xgboost", "works": 1},
    ]  # fmt: skip
    assert store.query("MATCH ()-[r:RELATED]->() RETURN count(r) AS n")["n"].tolist() == [3]
