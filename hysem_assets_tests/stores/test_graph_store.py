"""The graph stores, each test against ladybug and a real Neo4j 5."""

from __future__ import annotations

import pytest

from hysem_assets.knowledge.reports import load_reports, run_report
from hysem_assets.stores.graph import GraphStore, GraphStoreError, load_partition
from hysem_assets_tests.knowledge.partition import ARTICLES, EXPECTED_REPORT, ODD_TERM, QUERY, partition, schema
from hysem_assets_tests.paths import PROJECT_ROOT

REPORT = {r.name: r for r in load_reports(PROJECT_ROOT / "config" / "reports")}["ml_methods_ozone_heart"]


def report_rows(store: GraphStore, query: str = QUERY) -> list[tuple[str, int]]:
    frame = run_report(store, REPORT, query)
    return [(method, int(articles)) for method, articles in frame.itertuples(index=False)]


def test_load_builds_the_graph_and_answers_the_report(graph_store: GraphStore) -> None:
    graph = partition()
    summary = load_partition(graph_store, schema(), graph)

    # the store also declares the other protocols' labels, empty here
    assert {label: n for label, n in summary.counts.nodes.items() if n} == {
        "Query": 1, "Article": 6, "Chunk": 12, "Region": 2, "HealthOutcome": 4, "Pollutant": 3,
        "MLMethod": 6,
    }  # fmt: skip
    assert {kind: n for kind, n in summary.counts.relationships.items() if n} == graph.relationship_counts()
    assert summary.counts.relationships["MENTIONS"] == 24
    assert report_rows(graph_store) == EXPECTED_REPORT
    article = graph_store.query(
        "MATCH (a:Article {key: $key}) RETURN a.doi AS doi, a.year AS year, a.authors AS authors, "
        "a.zotero_key AS zotero_key, a.study_type AS study_type",
        {"key": "10.1000/a1"},
    )
    assert article.to_dict("records") == [
        {"doi": "10.1000/A1", "year": 2016, "authors": ["Doe, Jane", "Roe, Richard"],
         "zotero_key": "ZK000001", "study_type": "cohort"},
    ]  # fmt: skip
    no_doi = graph_store.query("MATCH (a:Article {key: 'c-3'})-[:HAS_CHUNK]->(c:Chunk) RETURN count(c) AS n")
    assert no_doi.iloc[0, 0] == 2


def test_reloading_the_same_partition_creates_nothing_twice(graph_store: GraphStore) -> None:
    first = load_partition(graph_store, schema(), partition())
    second = load_partition(graph_store, schema(), partition())

    assert second.counts == first.counts
    assert (second.detached, second.pruned) == (0, 0)
    assert report_rows(graph_store) == EXPECTED_REPORT


def test_records_that_left_the_query_are_detached_but_kept_for_other_queries(graph_store: GraphStore) -> None:
    load_partition(graph_store, schema(), partition())
    load_partition(graph_store, schema(), partition(ARTICLES[1:2], query="other"))
    without_a2 = [ARTICLES[0] | {"ml": ["random forest"]}, *ARTICLES[2:]]
    summary = load_partition(graph_store, schema(), partition(without_a2))

    assert report_rows(graph_store) == [("long short-term memory network", 1), ("random forest", 1)]
    assert report_rows(graph_store, "other") == [("random forest", 1)]
    included = graph_store.query(
        "MATCH (q:Query)-[:INCLUDES]->(a:Article) RETURN q.key AS query, a.key AS article ORDER BY query, article"
    )
    assert ("ozone-heart", "10.1000/a2") not in set(included.itertuples(index=False, name=None))
    assert ("other", "10.1000/a2") in set(included.itertuples(index=False, name=None))
    # a1's XGBoost link and a2's chunks, links and membership of this query are gone; the
    # XGBoost node had nothing else and went with them.
    assert summary.detached > 0 and summary.pruned == 1
    assert graph_store.query("MATCH (m:MLMethod {name: 'XGBoost'}) RETURN count(m)").iloc[0, 0] == 0
    assert summary.counts.nodes["Article"] == 6


def test_terms_with_quotes_and_backslashes_and_100_kb_values_round_trip(graph_store: GraphStore) -> None:
    graph = partition()
    big = "ozone " + "x" * 100_000 + ' "quoted" \\ end'
    next(b for b in graph.nodes if b.label == "Chunk").rows[0]["props"]["text"] = big
    load_partition(graph_store, schema(), graph)

    odd = graph_store.query(
        "MATCH (a:Article)-[:USES_ML_METHOD]->(m:MLMethod {name: $name}) RETURN a.key AS key, m.name AS name",
        {"name": ODD_TERM},
    )
    assert odd.to_dict("records") == [{"key": "10.1000/a6", "name": ODD_TERM}]
    text = graph_store.query("MATCH (c:Chunk {chunk_id: 'c-1:0'}) RETURN c.text AS text").iloc[0, 0]
    assert text == big


@pytest.mark.parametrize("batch_size", [2, 1000])
def test_a_failed_load_leaves_the_previous_load_in_place(graph_store: GraphStore, batch_size: int) -> None:
    before = load_partition(graph_store, schema(), partition(ARTICLES[:3])).counts
    broken = partition()
    chunks = next(b for b in broken.nodes if b.label == "Chunk")
    chunks.rows[-1]["props"]["chunk_index"] = {"not": "a number"}

    with pytest.raises(GraphStoreError, match="ozone-heart.*rolled back"):
        load_partition(graph_store, schema(), broken, batch_size=batch_size)
    assert graph_store.counts() == before
    assert report_rows(graph_store) == EXPECTED_REPORT


def test_read_queries_cannot_write(graph_store: GraphStore) -> None:
    with pytest.raises(GraphStoreError):
        graph_store.query("MERGE (q:Query {key: 'sneaky'}) RETURN q.key")
    assert graph_store.counts().nodes["Query"] == 0


def test_schema_can_be_ensured_again(graph_store: GraphStore) -> None:
    load_partition(graph_store, schema(), partition())
    graph_store.ensure_schema(schema())
    assert report_rows(graph_store) == EXPECTED_REPORT
