"""The numeric route on a real embedded graph: which field a comparison means, the Cypher it runs, the rows it
returns with their evidence, and records fields filtered by name and value."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pandas as pd
import pytest

from hysem_assets.knowledge.build import build_partition_graph
from hysem_assets.qa.comparisons import parse_comparison
from hysem_assets.qa.cypher import CypherPlan, CypherRejected, validate_cypher
from hysem_assets.qa.number_fields import NumericTarget, number_fields, numeric_target
from hysem_assets.qa.numeric import numeric_draft, numeric_plan, run_numeric, sentence_stating
from hysem_assets.qa.sources import ChunkRow, library_records
from hysem_assets.qa.terms import Filters
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph import load_partition
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets_tests.knowledge.partition import PROTOCOL, QUERY, frames

SIZES = {"c-1": 48_213, "c-2": 9_800, "c-3": 2_300_000, "c-4": None, "c-5": 61_540, "c-6": 10_000}
EVIDENCE = {
    "c-1": "We linked 48,213 emergency admissions to daily ozone.",
    "c-3": "We followed 2.3 million adults in a national registry.",
}
#: c-5's sentence is in its text only: the extraction kept no evidence for it.
TEXTS = {"c-5": ["Among 61 540 adults of three cohorts, exposure was modelled."]}
METRICS = {
    "c-1": [{"name": "AUC", "value": 0.86, "unit": None, "ci_low": 0.81, "ci_high": 0.9, "context": None}],
    "c-2": [{"name": "AUC", "value": 0.71, "unit": None, "ci_low": None, "ci_high": None, "context": None},
            {"name": "RMSE", "value": 4.2, "unit": None, "ci_low": None, "ci_high": None, "context": None}],
    "c-6": [{"name": "hazard ratio", "value": 0.83, "unit": None, "ci_low": 0.7, "ci_high": 0.95, "context": None}],
}  # fmt: skip


@pytest.fixture(scope="module")
def schema():
    return graph_schema(load_protocols(), load_protocol(PROTOCOL))


@pytest.fixture(scope="module")
def extracted() -> pd.DataFrame:
    rows = []
    for cluster_id, size in SIZES.items():
        evidence = {}
        if cluster_id in EVIDENCE:
            evidence["sample_size"] = [{"value": size, "sentence": EVIDENCE[cluster_id], "start": 0, "end": 9}]
        if cluster_id == "c-1":
            evidence["metrics"] = [{"value": METRICS["c-1"][0], "sentence": "The AUC was 0.86 (95% CI 0.81-0.90)."}]
        rows.append(
            {
                "cluster_id": cluster_id,
                "sample_size": size,
                "metrics": json.dumps(METRICS.get(cluster_id, [])),
                "evidence": json.dumps(evidence),
            }
        )
    return pd.DataFrame(rows).astype({"sample_size": "Int64"})


@pytest.fixture(scope="module")
def graph(tmp_path_factory, schema, extracted) -> Iterator[LadybugGraphStore]:
    data = frames()
    fields = data["fields"].merge(extracted[["cluster_id", "sample_size"]], on="cluster_id")
    store = LadybugGraphStore(tmp_path_factory.mktemp("numeric") / "kg.lbug")
    store.ensure_schema(schema)
    load_partition(store, schema, build_partition_graph(schema, QUERY, corpus=data["corpus"], fields=fields))
    yield store
    store.close()


@pytest.fixture(scope="module")
def numbers(schema, extracted):
    return number_fields(schema, load_protocol(PROTOCOL), extracted)


def keys() -> dict[str, str]:
    corpus = frames()["corpus"]
    return {c: (d or c).lower() for c, d in zip(corpus["cluster_id"], corpus["doi"], strict=True)}


def target(question: str, numbers) -> NumericTarget:
    found = numeric_target(question, parse_comparison(question), numbers)
    assert found is not None, question
    return found


def run(question: str, graph, schema, extracted, numbers, terms=None):
    return run_numeric(
        target(question, numbers),
        graph=graph,
        schema=schema,
        query=QUERY,
        filters=Filters(terms or {}),
        extracted=extracted,
        texts=TEXTS,
        article_keys=keys(),
    )


def test_a_count_comparison_filters_the_graph_property_with_parameters(graph, schema, extracted, numbers):
    found = run("Which studies had a sample size above 10,000 participants?", graph, schema, extracted, numbers)
    assert [(row.cluster_id, row.value) for row in found.rows] == [("c-3", 2_300_000), ("c-5", 61_540), ("c-1", 48_213)]
    assert found.known == 5 and found.plan.parameters["bound"] == 10_000  # c-6 (exactly 10,000) is not above
    assert "10,000" not in found.plan.cypher and "$bound" in found.plan.cypher
    validate_cypher(found.plan, schema)


def test_each_row_keeps_its_evidence_sentence_from_the_extraction_or_the_text(graph, schema, extracted, numbers):
    found = run("Which studies enrolled more than 10k patients?", graph, schema, extracted, numbers)
    evidence = {row.cluster_id: (row.evidence, row.evidence_from) for row in found.rows}
    assert evidence["c-1"] == (EVIDENCE["c-1"], "extracted_fields")
    assert evidence["c-5"] == ("Among 61 540 adults of three cohorts, exposure was modelled.", "text")


def test_at_least_and_between_include_their_bounds(graph, schema, extracted, numbers):
    at_least = run("Which studies had a sample size of at least ten thousand?", graph, schema, extracted, numbers)
    assert {row.cluster_id for row in at_least.rows} == {"c-1", "c-3", "c-5", "c-6"}
    between = run("Which studies had between 9,800 and 48,213 participants?", graph, schema, extracted, numbers)
    assert [row.cluster_id for row in between.rows] == ["c-1", "c-6", "c-2"]


def test_terms_named_in_the_question_filter_the_rows_too(graph, schema, extracted, numbers):
    question = "Which studies of nitrogen dioxide had more than 10,000 participants?"
    found = run(question, graph, schema, extracted, numbers, terms={"Pollutant": ["NO2"]})
    assert [row.cluster_id for row in found.rows] == ["c-5"]


def test_records_fields_are_filtered_by_the_metric_named_and_its_value(graph, schema, extracted, numbers):
    auc = run("Which studies report an AUC above 0.8?", graph, schema, extracted, numbers)
    assert auc.plan is None and [(row.cluster_id, row.measure, row.value) for row in auc.rows] == [("c-1", "AUC", 0.86)]
    assert (auc.rows[0].ci_lower, auc.rows[0].ci_upper) == (0.81, 0.9)
    assert auc.rows[0].evidence == "The AUC was 0.86 (95% CI 0.81-0.90)."
    hazard = run("Which studies report an HR below 1?", graph, schema, extracted, numbers)
    assert [(row.cluster_id, row.measure) for row in hazard.rows] == [("c-6", "hazard ratio")]


def test_the_field_comes_from_name_unit_or_kind_and_unrelated_numbers_find_none(numbers):
    assert target("Which studies had a sample size of more than 500?", numbers).field.name == "sample_size"
    assert target("List the studies with fewer than 200 children", numbers).field.name == "sample_size"
    year = target("Which studies were published after 2020?", numbers)
    assert (year.field.article_property, year.comparison.op, year.comparison.low) == ("year", ">", 2020)
    for question in ("Which days had ozone above 100 µg/m3?", "How does blood pressure above 140 mmHg change?"):
        assert numeric_target(question, parse_comparison(question), numbers) is None


def test_durations_convert_to_the_unit_of_the_field():
    generic = load_protocol("generic")
    numbers = number_fields(graph_schema(load_protocols(), generic), generic)
    found = target("Which cohorts had a follow-up of at least 18 months?", numbers)
    assert (found.field.article_property, found.comparison.low) == ("follow_up_years", 1.5)
    assert target("Which trials report a hazard ratio below 1?", numbers).field.name == "effect_estimates"


def test_the_draft_gives_a_total_then_each_value_with_its_evidence_citing_where_it_stands(
    graph, schema, extracted, numbers
):
    found = run("Which studies had a sample size above 10,000 participants?", graph, schema, extracted, numbers)
    corpus = frames()["corpus"]
    library = library_records(corpus, retracted=["c-3"])
    chunks = {"c-5": [ChunkRow("c-5:0", "c-5", 0, "Abstract", TEXTS["c-5"][0], "abstract")]}
    draft, sources, retracted = numeric_draft(found, library, chunks)
    texts = [claim.text for claim in draft.claims]
    assert texts[0] == "2 works report sample size above 10,000 participants (of 5 with a stated sample size)."
    # each value as its sentence writes it, with the field's unit, so the claim quotes its source
    assert texts[1:] == [
        f"sample size 61 540 participants: {TEXTS['c-5'][0]}",
        f"sample size 48,213 participants: {EVIDENCE['c-1']}",
    ]
    assert retracted == ["c-3"]  # left out of the answer, and reported
    assert {(s.PDF_DocIndex, s.PDF_ChunkIndex) for s in sources} == {("c-5", 0), ("c-1", None)}


def test_a_number_without_an_evidence_sentence_is_given_with_its_work(graph, schema, extracted, numbers):
    found = run("Which studies were published after 2019?", graph, schema, extracted, numbers)
    assert [(row.cluster_id, row.value, row.title) for row in found.rows] == [("c-6", 2021, "Study 6"),
                                                                             ("c-5", 2020, "Study 5")]  # fmt: skip
    draft, _, _ = numeric_draft(found, library_records(frames()["corpus"]), {})
    assert [claim.text for claim in draft.claims[1:]] == [
        "publication year 2021: Study 6.",
        "publication year 2020: Study 5.",
    ]


def test_numbers_are_found_in_text_whatever_their_spelling():
    assert (
        sentence_stating("Intro. We followed 2.3 million adults. End.", 2_300_000) == "We followed 2.3 million adults."
    )
    assert sentence_stating("A total of 12 436 people took part.", 12_436) == "A total of 12 436 people took part."
    assert sentence_stating("We studied 12,437 people.", 12_436) is None


def test_numeric_plans_pass_validation_and_unknown_properties_are_refused(schema, numbers):
    plan = numeric_plan(schema, QUERY, target("Which studies had more than 500 participants?", numbers), Filters({}))
    validate_cypher(plan, schema)
    bad = CypherPlan("MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article) RETURN a.secret AS article", {"query": "q"})
    with pytest.raises(CypherRejected, match="unknown properties: secret"):
        validate_cypher(bad, schema)
