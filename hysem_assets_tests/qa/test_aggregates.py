"""Statistics, group comparisons, trends and distributions of categories answered from a real embedded graph,
each number checked against a computation made here from the partition's own rows."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hysem_assets.knowledge.build import build_partition_graph
from hysem_assets.qa.aggregates import category_fields, statistics_question, trend_question
from hysem_assets.qa.answer import answer_question
from hysem_assets.qa.cypher import CypherPlan, validate_cypher
from hysem_assets.qa.engine import build_engine
from hysem_assets.qa.number_fields import number_fields
from hysem_assets.qa.router import entity_words
from hysem_assets.qa.terms import question_filters
from hysem_assets.settings.profile import AnswerSettings
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph import load_partition
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets_tests.aggregations import per_year, per_year_in, summary, summary_in
from hysem_assets_tests.knowledge.partition import ARTICLES, PROTOCOL, QUERY, frames
from hysem_assets_tests.qa.corpus import SPELLINGS

SIZES = {"c-1": 48_213, "c-2": 9_800, "c-3": 2_300_000, "c-4": None, "c-5": 61_540, "c-6": 10_000}
STUDY = {a["cluster_id"]: a["study"] for a in ARTICLES}
YEAR = {a["cluster_id"]: 2015 + n for n, a in enumerate(ARTICLES, 1)}
METHODS = {a["cluster_id"]: a["ml"] for a in ARTICLES}


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> Iterator[LadybugGraphStore]:
    schema = graph_schema(load_protocols(), load_protocol(PROTOCOL))
    data = frames()
    fields = data["fields"].assign(sample_size=data["fields"]["cluster_id"].map(SIZES)).astype({"sample_size": "Int64"})
    store = LadybugGraphStore(tmp_path_factory.mktemp("aggregates") / "kg.lbug")
    store.ensure_schema(schema)
    load_partition(store, schema, build_partition_graph(schema, QUERY, corpus=data["corpus"], fields=fields))
    yield store
    store.close()


@pytest.fixture
def engine(partition, embedder, graph):
    """The QA engine over the partition's chunks and the graph with sample sizes, with the sample protocol."""
    return build_engine(
        AnswerSettings.model_validate({"k": 4}),
        query=QUERY,
        store=partition.store,
        embedder=embedder,
        graph=graph,
        schema=partition.schema,
        spellings=SPELLINGS,
        chunks=partition.chunks,
        library=partition.library,
        protocol=load_protocol(PROTOCOL),
    )


def ask(engine, question: str) -> tuple[dict, dict]:
    answer = asyncio.run(answer_question(question, engine)).answer
    return answer, json.loads(answer["json"])


def independent_summary(works: list[str]) -> tuple[float, ...]:
    return summary([SIZES[w] for w in works if SIZES[w] is not None])


def test_a_median_iqr_range_and_mean_equal_an_independent_computation(engine):
    answer, details = ask(engine, "What is the median sample size?")
    assert (answer["route"], answer["router"]) == ("statistics", "rules")
    claims = [claim["text"] for claim in details["claims"]]
    stated = [w for w, size in SIZES.items() if size is not None]
    assert claims[0].startswith(f"{len(stated)} of {len(SIZES)} included studies state a sample size: ")
    assert summary_in(claims[0], "participants") == independent_summary(stated)
    assert {c["PDF_DocIndex"] for c in details["claims"][0]["citations"]} == set(stated)
    assert claims[1:] == [
        "Largest sample size: 2,300,000 participants, Study 3.",
        "Smallest sample size: 9,800 participants, Study 2.",
    ]
    plan = details["statistics"]
    assert "$query" in plan["cypher"] and "2300000" not in plan["cypher"]


def test_groups_named_in_the_question_are_compared_each_with_its_own_works(engine):
    answer, details = ask(engine, "Compare the median sample size of cohort studies versus time-series studies")
    assert answer["route"] == "statistics"
    by_group = {claim["text"].split(":")[0]: claim for claim in details["claims"][1:3]}
    assert set(by_group) == {"cohort", "time-series"}
    cohort = [w for w, study in STUDY.items() if study == "cohort"]
    assert summary_in(by_group["cohort"]["text"], "participants") == independent_summary(cohort)
    assert by_group["time-series"]["text"] == "time-series: 1 work, 9,800 participants."
    assert {c["PDF_DocIndex"] for c in by_group["cohort"]["citations"]} == set(cohort)


def test_by_a_category_field_every_group_is_summarised(engine):
    _, details = ask(engine, "Median sample size by study type")
    groups = Counter(STUDY[w] for w, size in SIZES.items() if size is not None)
    claimed = {
        m[1]: int(m[2])
        for claim in details["claims"][1:]
        if (m := re.match(r"^([\w -]+): (\d+) works?,", claim["text"]))
    }
    assert claimed == dict(groups)


def test_the_largest_works_come_in_order_and_conditions_narrow_the_works(engine):
    _, details = ask(engine, "Which are the largest studies?")
    values = [
        int(m[1].replace(",", ""))
        for c in details["claims"][1:]
        if (m := re.search(r": ([\d,]+) participants", c["text"]))
    ]
    assert values == sorted((s for s in SIZES.values() if s is not None), reverse=True)

    _, since = ask(engine, "What is the median sample size of studies published since 2018?")
    recent = [w for w in SIZES if YEAR[w] >= 2018]
    assert summary_in(since["claims"][0]["text"], "participants") == independent_summary(recent)
    assert "publication year at least 2018" in since["claims"][0]["text"]

    _, forest = ask(engine, "What is the median sample size of studies using random forest?")
    using = [w for w in SIZES if "random forest" in METHODS[w]]
    assert summary_in(forest["claims"][0]["text"], "participants") == independent_summary(using)


def test_a_retracted_work_leaves_the_statistics(engine):
    library = dict(engine.retriever.library)
    library["c-3"] = replace(library["c-3"], retracted=True)
    engine.retriever = replace(engine.retriever, library=library)
    answer, details = ask(engine, "What is the median sample size?")
    kept = [w for w, size in SIZES.items() if size is not None and w != "c-3"]
    assert summary_in(details["claims"][0]["text"], "participants") == independent_summary(kept)
    assert details["claims"][0]["text"].startswith(f"{len(kept)} of {len(SIZES) - 1} included studies")
    assert "retracted" in answer["markdown"].casefold()


def test_a_trend_counts_works_per_year_against_all_works_with_a_chart(engine):
    answer, details = ask(engine, "How many studies using random forest were published per year?")
    assert answer["route"] == "trend"
    using = [w for w in YEAR if "random forest" in METHODS[w]]
    claimed = per_year_in(claim["text"] for claim in details["claims"])
    assert claimed == per_year(YEAR, using, set(YEAR))
    years = details["trend"]["years"]
    assert list(years) == [str(y) for y in range(min(YEAR.values()), max(YEAR.values()) + 1)]
    svg = Path(answer["chart"])
    assert svg.is_file() and svg.with_suffix(".png").is_file() and f"Chart: {svg}" in answer["markdown"]
    assert "publication year" in svg.read_text(encoding="utf-8")

    _, bounded = ask(engine, "How has the number of studies changed since 2019?")
    assert set(bounded["trend"]["years"]) == {str(y) for y in YEAR.values() if y >= 2019}


def test_a_distribution_of_categories_ranks_them_by_their_works(engine):
    answer, details = ask(engine, "What is the distribution of study types?")
    assert answer["route"] == "ranking" and answer["chart"]
    ranked = {
        m[1]: int(m[2])
        for c in details["claims"][1:]
        if (m := re.fullmatch(r"(.+): (\d+) of \d+ works \([\d.]+%\)\.", c["text"]))
    }
    assert ranked == dict(Counter(STUDY.values()))


def test_questions_are_read_for_their_number_groups_and_conditions():
    protocol = load_protocol("generic")
    schema = graph_schema(load_protocols(), protocol)
    numbers, categories = number_fields(schema, protocol), category_fields(schema, protocol)
    asked = statistics_question("Median sample size of randomised trials versus cohort studies", numbers, categories)
    assert asked is not None and asked.field.name == "sample_size"
    assert asked.groups is not None and asked.groups.values == ("randomised controlled trial", "cohort study")
    follow_up = statistics_question("What is the median follow-up of RCTs?", numbers, categories)
    assert follow_up is not None and follow_up.field.name == "follow_up"
    assert follow_up.groups.values == ("randomised controlled trial",)  # "follow-up" is no cue of a cohort here
    assert statistics_question("What is the effect of statins compared with placebo?", numbers, categories) is None
    trend = trend_question("How has the use of statins changed since 2010?", "Exposure", numbers, categories)
    assert trend.bound is not None and trend.bound.comparison.op == ">=" and trend.bound.comparison.low == 2010


def test_every_aggregate_plan_passes_the_cypher_checks(engine):
    for question in ("What is the median sample size?", "Median sample size by study type", "Publications by year"):
        _, details = ask(engine, question)
        section = details.get("statistics") or details.get("trend")
        validate_cypher(CypherPlan(section["cypher"], section["parameters"]), engine.schema)


def test_terms_combine_with_and_or_and_not(engine):
    filters = question_filters(
        "Which studies of ozone or NO2, excluding those on stroke, used random forest?",
        engine.retriever.matchers,
        entity_words(engine.schema),
    )
    assert filters.required == {"Pollutant": ["ozone", "NO2"], "MLMethod": ["random forest"]}
    assert filters.excluded == {"HealthOutcome": ["stroke"]}

    answer, details = ask(engine, "How many studies used random forest but not XGBoost?")
    forest = {w for w in METHODS if "random forest" in METHODS[w] and "XGBoost" not in METHODS[w]}
    assert answer["route"] == "counting" and details["excluded_terms"] == {"MLMethod": ["XGBoost"]}
    assert {c["PDF_DocIndex"] for c in details["claims"][0]["citations"]} == forest
    assert "NOT EXISTS" in details["symbolic"]["cypher"] and "XGBoost" not in details["symbolic"]["cypher"]

    _, sizes = ask(engine, "What is the median sample size of studies of ozone without random forest?")
    ozone = [
        w for w, a in zip(METHODS, ARTICLES, strict=True) if "ozone" in a["pol"] and "random forest" not in METHODS[w]
    ]
    assert summary_in(sizes["claims"][0]["text"], "participants") == independent_summary(ozone)
    assert "not MLMethod: random forest" in sizes["claims"][0]["text"]


def test_what_the_works_on_a_term_measure_is_counted_among_those_works(engine):
    answer, details = ask(engine, "Which outcomes do studies using random forest or XGBoost measure, and how often?")
    assert answer["route"] == "ranking" and details["terms"] == {"MLMethod": ["random forest", "XGBoost"]}
    works = [a for a in ARTICLES if {"random forest", "XGBoost"} & set(a["ml"])]
    ranked = {
        m[1]: int(m[2])
        for c in details["claims"][1:]
        if (m := re.fullmatch(r"(.+): (\d+) of \d+ works \([\d.]+%\)\.", c["text"]))
    }
    assert ranked == dict(Counter(outcome for a in works for outcome in a["out"]))


@pytest.mark.parametrize(
    "question",
    [
        "Which studies with no more than 500 participants used random forest?",
        "Did any study find no association between random forest and stroke?",
        "Which studies used random forest, not only for prediction?",
    ],
)
def test_a_negation_that_qualifies_something_else_excludes_no_term(engine, question):
    filters = question_filters(question, engine.retriever.matchers, entity_words(engine.schema))
    assert filters.excluded == {} and "random forest" in filters.required["MLMethod"]


def test_an_excluded_term_of_the_kind_asked_for_leaves_the_list_not_its_works(engine):
    _, details = ask(engine, "Which methods other than random forest are most often used?")
    ranked = {c["text"].split(":")[0] for c in details["claims"][1:]}
    assert "random forest" not in ranked and "XGBoost" in ranked  # c-1 uses both: it still counts for XGBoost
    reporting = sum(bool(set(a["ml"]) - {"random forest"}) for a in ARTICLES)
    assert details["claims"][0]["text"].startswith(f"{reporting} of {len(ARTICLES)} included studies")


@pytest.mark.parametrize(
    "question, values, excluded",
    [
        ("What is the median sample size of the studies included?", None, None),
        ("How large were the studies in this review, on average?", None, None),
        ("Median sample size excluding randomised trials", (), ("randomised controlled trial",)),
        (
            "Median sample size of RCTs versus case-control studies",
            ("randomised controlled trial", "case-control study"),
            (),
        ),
    ],
)
def test_groups_come_from_category_names_and_distinctive_cues_only(question, values, excluded):
    protocol = load_protocol("generic")
    schema = graph_schema(load_protocols(), protocol)
    asked = statistics_question(question, number_fields(schema, protocol), category_fields(schema, protocol))
    assert asked is not None and asked.field.name == "sample_size"
    found = None if asked.groups is None else (asked.groups.values, asked.groups.excluded)
    assert found == (None if values is None else (values, excluded))


def test_answers_count_over_the_included_studies_unless_asked_across_all_records_found(partition, embedder, tmp_path):
    """Two works left out of the included set: the statistics count over the other four, and over all six when
    the question asks across everything found; each answer names the set it counted over."""
    schema = graph_schema(load_protocols(), load_protocol(PROTOCOL))
    data = frames()
    fields = data["fields"].assign(sample_size=data["fields"]["cluster_id"].map(SIZES)).astype({"sample_size": "Int64"})
    included = [a["cluster_id"] for a in ARTICLES][2:]
    store = LadybugGraphStore(tmp_path / "kg.lbug")
    store.ensure_schema(schema)
    load_partition(store, schema, build_partition_graph(schema, QUERY, corpus=data["corpus"], fields=fields,
                                                        included=included))  # fmt: skip
    counted = build_engine(
        AnswerSettings.model_validate({"k": 4}), query=QUERY, store=partition.store, embedder=embedder, graph=store,
        schema=partition.schema, spellings=SPELLINGS, chunks=partition.chunks, library=partition.library,
        protocol=load_protocol(PROTOCOL),
    )  # fmt: skip
    try:
        _, details = ask(counted, "What is the median sample size?")
        stated = [w for w in included if SIZES[w] is not None]
        assert details["claims"][0]["text"].startswith(f"{len(stated)} of {len(included)} included studies state")
        _, everything = ask(counted, "What is the median sample size across all records found?")
        every = [w for w, size in SIZES.items() if size is not None]
        assert everything["claims"][0]["text"].startswith(f"{len(every)} of {len(SIZES)} records found state")
    finally:
        store.close()
