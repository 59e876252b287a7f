"""The entity route's and the entity ranking's Cypher in both graph stores: the same names, counts and chunks."""

from __future__ import annotations

from hysem_assets.qa.cypher import validate_cypher
from hysem_assets.qa.entity_questions import EntityNames, entity_plan, entity_question, load_entity_kinds
from hysem_assets.qa.retrieval import ENTITY_CHUNKS_CYPHER
from hysem_assets.qa.terms import Filters
from hysem_assets.stores.graph import GraphStore, load_partition
from hysem_assets_tests.knowledge.partition import QUERY, schema
from hysem_assets_tests.stores.test_graph_entities import MENTIONS, entity_partition


def works_per_name(store: GraphStore, question: str) -> dict[str, int]:
    asked = entity_question(question, load_entity_kinds(), EntityNames.of_partition(store, QUERY))
    assert asked is not None
    plan = entity_plan(schema(), QUERY, asked, Filters({}))
    validate_cypher(plan, schema())
    rows = store.query(plan.cypher, plan.parameters)
    return rows.groupby("name")["article"].nunique().to_dict()


def test_entity_questions_read_the_same_counts_in_both_stores(graph_store: GraphStore) -> None:
    load_partition(graph_store, schema(), entity_partition())
    methods = {}
    for _, chunk, kind, _, name in MENTIONS:
        if kind == "Method":
            methods.setdefault(name, set()).add(chunk.split(":")[0])
    assert works_per_name(graph_store, "Which methods are most often used?") == {n: len(c) for n, c in methods.items()}
    # a topic: only the works that mention AUC (c-1, c-2); an exclusion of another type takes its works out
    assert works_per_name(graph_store, "Which models are evaluated with AUC?") == {"random forest": 2, "xgboost": 1}
    assert works_per_name(graph_store, "Which methods are used most, excluding forecasting?") == {
        "random forest": 2, "xgboost": 1
    }  # fmt: skip


def test_the_entity_ranking_reads_mentions_and_one_hop_in_both_stores(graph_store: GraphStore) -> None:
    load_partition(graph_store, schema(), entity_partition())
    rows = graph_store.query(ENTITY_CHUNKS_CYPHER, {"query": QUERY, "ids": ["Method:random forest"], "near": 100})
    direct = set(rows.loc[rows["hop"] == 0, "chunk_id"])
    assert direct == {"c-1:0", "c-1:1", "c-2:0"}
    near = set(rows.loc[rows["hop"] == 1, "chunk_id"])
    assert near == {"c-1:1", "c-2:0"}  # XGBoost and AUC (related and co-occurring) are mentioned there
    bounded = graph_store.query(ENTITY_CHUNKS_CYPHER, {"query": QUERY, "ids": ["Method:random forest"], "near": 1})
    assert (bounded["hop"] == 1).sum() == 1
