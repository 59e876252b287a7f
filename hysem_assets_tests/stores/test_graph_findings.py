"""Finding nodes in both graph stores: results counted by direction, loaded incrementally, shared across queries."""

from __future__ import annotations

import pytest

from hysem_assets.findings.schema import DECREASED, INCREASED, NO_DIFFERENCE
from hysem_assets.stores.graph import GraphStore, load_partition
from hysem_assets_tests.knowledge.findings_partition import BY_DIRECTION, FINDINGS, QUERY, partition, schema

#: Results per direction: each comparison once (preferred rows), in works of the query, as this partition loaded them.
BY_DIRECTION_CYPHER = (
    "MATCH (:Query {key: $query})-[:INCLUDES]->(:Article)-[r:REPORTS_FINDING]->(f:Finding) "
    "WHERE r.query = $query AND f.preferred "
    "RETURN f.direction AS direction, count(f) AS findings ORDER BY direction"
)


#: The same per outcome, for primary studies (docs/stages/knowledge.md).
PER_OUTCOME_CYPHER = (
    "MATCH (:Query {key: $query})-[:INCLUDES]->(:Article)-[r:REPORTS_FINDING]->(f:Finding)-[:OUTCOME_TERM]->"
    "(o:Outcome) WHERE r.query = $query AND f.preferred AND f.study_kind = $kind "
    "RETURN o.name AS outcome, f.direction AS direction, count(f) AS findings ORDER BY outcome, direction"
)


def by_direction(store: GraphStore, query: str = QUERY) -> dict[str, int]:
    return {d: int(n) for d, n in store.query(BY_DIRECTION_CYPHER, {"query": query}).itertuples(index=False)}


@pytest.fixture
def store(graph_store: GraphStore) -> GraphStore:
    graph_store.ensure_schema(schema())  # the generic protocol's partition: its arms have entity labels
    return graph_store


def test_findings_are_counted_by_direction_and_joined_to_their_terms(store: GraphStore) -> None:
    summary = load_partition(store, schema(), partition())

    assert summary.counts.nodes["Finding"] == 5 and summary.counts.relationships["REPORTS_FINDING"] == 5
    assert by_direction(store) == BY_DIRECTION
    per_outcome = store.query(PER_OUTCOME_CYPHER, {"query": QUERY, "kind": "primary"})
    assert [tuple(row) for row in per_outcome.itertuples(index=False)] == [
        ("major bleeding", INCREASED, 1), ("stroke", NO_DIFFERENCE, 1), ("stroke", DECREASED, 2),
    ]  # fmt: skip
    stroke = store.query(
        "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)-[:REPORTS_FINDING]->(f:Finding)-[:OUTCOME_TERM]->"
        "(o:Outcome {name: $outcome}), (f)-[:INTERVENTION_TERM]->(i:Exposure), (f)-[:COMPARATOR_TERM]->(c:Exposure) "
        "WHERE f.preferred RETURN a.key AS work, i.name AS intervention, c.name AS comparator, f.direction AS "
        "direction, f.source AS source ORDER BY work",
        {"query": QUERY, "outcome": "stroke"},
    )
    assert stroke.to_dict("records") == [
        {"work": "10.2000/t1", "intervention": "Aspirin", "comparator": "placebo", "direction": DECREASED,
         "source": "fulltext"},
        {"work": "10.2000/t2", "intervention": "Aspirin", "comparator": "clopidogrel", "direction": NO_DIFFERENCE,
         "source": "abstract"},
        {"work": "t-3", "intervention": "statin", "comparator": "placebo", "direction": DECREASED,
         "source": "fulltext"},
    ]  # fmt: skip
    estimate = store.query(
        "MATCH (f:Finding) WHERE f.measure IS NOT NULL "
        "RETURN f.estimate AS estimate, f.ci_low AS low, f.ci_high AS high, f.p_value AS p, f.confidence AS confidence"
    )
    assert estimate.to_dict("records") == [{"estimate": 1.5, "low": 1.1, "high": 2.05, "p": 0.01, "confidence": 0.9}]


def test_reloading_the_same_findings_changes_nothing(store: GraphStore) -> None:
    first = load_partition(store, schema(), partition())
    second = load_partition(store, schema(), partition())
    assert second.counts == first.counts and (second.detached, second.pruned) == (0, 0)
    assert by_direction(store) == BY_DIRECTION


def test_a_changed_finding_replaces_the_old(store: GraphStore) -> None:
    load_partition(store, schema(), partition())
    statin = FINDINGS[-1]
    # the same comparison with another result: the node is updated; another outcome: another finding
    changed = [*FINDINGS[:3], dict(FINDINGS[3], direction=DECREASED, confidence=None)]
    changed.append(
        statin | {"finding_id": "t-3:statin:placebo:myopathy", "outcome": "myopathy", "outcome_term": "myopathy"}
    )
    summary = load_partition(store, schema(), partition(changed))

    assert by_direction(store) == {DECREASED: 3, INCREASED: 1}
    t2 = store.query(
        "MATCH (f:Finding) WHERE f.comparator_term = $c RETURN f.direction AS d, f.confidence AS p",
        {"c": "clopidogrel"},
    )
    assert t2.to_dict("records") == [{"d": DECREASED, "p": None}]
    gone = store.query("MATCH (f:Finding {finding_id: $id}) RETURN count(f) AS n", {"id": statin["finding_id"]})
    assert gone.iloc[0, 0] == 0 and summary.pruned == 1 and summary.counts.nodes["Finding"] == 5
    myopathy = store.query(
        "MATCH (:Finding)-[:OUTCOME_TERM]->(o:Outcome {name: $name}) RETURN count(o) AS n", {"name": "myopathy"}
    )
    assert myopathy.iloc[0, 0] == 1


def test_a_work_in_two_queries_has_its_findings_once_and_keeps_them_for_the_other(store: GraphStore) -> None:
    load_partition(store, schema(), partition())
    load_partition(store, schema(), partition(FINDINGS[-1:], query="statins"))
    assert store.counts().nodes["Finding"] == 5
    assert by_direction(store, "statins") == {DECREASED: 1}

    summary = load_partition(store, schema(), partition(FINDINGS[:-1]))
    assert by_direction(store) == {DECREASED: 1, INCREASED: 1, NO_DIFFERENCE: 1}
    assert by_direction(store, "statins") == {DECREASED: 1} and summary.counts.nodes["Finding"] == 5
