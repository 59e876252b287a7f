"""Routing: rules on wording and on the protocol's words, the router model when no rule applies, and the
fallback chain when a route finds nothing, recorded in the answer."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace

import pandas as pd
import pytest

from hysem_assets.qa.aggregates import category_fields
from hysem_assets.qa.number_fields import number_fields
from hysem_assets.qa.router import FALLBACKS, ROUTER_SCHEMA, ModelRouter, RouteDecision, choose_route, rule_route
from hysem_assets.qa.terms import asks_everything_found
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets_tests.knowledge.partition import PROTOCOL
from hysem_assets_tests.llm.scripted_server import ScriptedLLMServer, Step, json_reply


def routed(protocol: str, question: str) -> str:
    chosen = load_protocol(protocol)
    schema = graph_schema(load_protocols(), chosen)
    decision = rule_route(question, schema, number_fields(schema, chosen), category_fields(schema, chosen))
    return decision.route if decision else "none"


@pytest.mark.parametrize(
    "question, route",
    [
        ("Which studies had a sample size above 10,000 participants?", "numeric"),
        ("List the studies with more than 500 patients", "numeric"),
        ("Which cohorts had a follow-up of at least 18 months?", "numeric"),
        ("Which trials report a hazard ratio below 1?", "numeric"),
        ("Which studies were published after 2020?", "numeric"),
        ("How many studies report stroke as an outcome?", "counting"),
        ("How many outcomes were measured?", "counting"),
        ("Which outcomes were studied?", "listing"),
        ("Which studies used exercise therapy?", "listing"),
        ("What are the main research themes in this literature?", "global"),
        ("Summarize the literature on statins and dementia.", "global"),
        ("What are the key findings across this body of research?", "global"),
        ("How many patients were enrolled in the trial of drug X?", "none"),
        ("What is known about children under 5 years?", "none"),
        ("How does blood pressure above 140 mmHg change with exposure?", "none"),
        ("What is the effect of statins on dementia risk?", "synthesis"),
        ("Which exposure had the strongest association with dementia?", "none"),
        ("How has the median sample size of studies changed over time?", "statistics"),
        ("Which outcomes are typically measured in studies?", "listing"),
        ("Which trials lasted over a year?", "none"),
        ("How does the risk of dementia rise with statin dose?", "none"),
        ("Which studies compared statins versus placebo?", "none"),  # a comparison within studies
    ],
)
def test_rules_route_on_wording_and_the_protocols_words(question, route):
    assert routed("generic", question) == route


def test_the_sample_protocol_routes_its_metric_and_entity_questions():
    assert routed(PROTOCOL, "Which studies report an AUC above 0.8?") == "numeric"
    assert routed(PROTOCOL, "Which machine-learning methods are used in studies of ozone?") == "listing"
    assert routed(PROTOCOL, "Which studies had a follow-up of at least 18 months?") == "none"  # no such field
    assert routed(PROTOCOL, "Which models relate ozone to heart failure?") == "none"  # a finding, not a list


def test_every_route_falls_back_to_retrieval_and_retrieval_ends_the_chain():
    assert all(chain[-1] == "local" for route, chain in FALLBACKS.items() if route != "local")
    assert RouteDecision("numeric", "why").chain == ("numeric", "local") and FALLBACKS["local"] == ()


def test_the_router_model_decides_only_when_no_rule_applies():
    schema = graph_schema(load_protocols(), load_protocol("generic"))
    steps = [Step(json_reply({"route": "global", "reason": "asks for an overview"}))]
    config = {"backend": "openai", "model": "router-model", "cache": False, "max_retries": 0}

    async def both(server: ScriptedLLMServer) -> tuple[RouteDecision, RouteDecision]:
        from hysem_assets.llm.registry import build_backend

        router = ModelRouter(build_backend({**config, "base_url": server.url + "/v1"}))
        try:
            ruled = await choose_route("How many studies report stroke?", schema, [], router)
            modelled = await choose_route("Where does this field stand?", schema, [], router)
        finally:
            await router.backend.aclose()
        return ruled, modelled

    with ScriptedLLMServer(steps, model="router-model", schema=ROUTER_SCHEMA) as server:
        ruled, modelled = asyncio.run(both(server))
        assert len(server.requests) == 1  # the counting question never reached the model
    assert (ruled.route, ruled.by) == ("counting", "rules")
    assert (modelled.route, modelled.reason, modelled.by) == ("global", "asks for an overview", "router-model")


def with_metrics(engine, records: dict[str, list[dict]]):
    """The engine with an ``extracted_fields`` table holding metric records (and their numeric route)."""
    extracted = pd.DataFrame(
        {"cluster_id": cluster, "metrics": json.dumps(found), "evidence": json.dumps({})}
        for cluster, found in records.items()
    )
    engine.extracted = extracted
    engine.numbers = number_fields(engine.schema, load_protocol(PROTOCOL), extracted)
    return engine


def ask(engine, question: str) -> dict:
    from hysem_assets.qa.answer import answer_question

    return asyncio.run(answer_question(question, engine)).answer


AUC = {"name": "AUC", "value": 0.86, "unit": None, "ci_low": None, "ci_high": None, "context": None}


def test_a_numeric_answer_lists_each_value_with_its_unit_and_source(partition, embedder):
    engine = with_metrics(partition.engine(embedder), {"c-1": [AUC], "c-2": [{**AUC, "value": 0.7}]})
    answer = ask(engine, "Which studies report an AUC above 0.8?")
    details = json.loads(answer["json"])
    assert (answer["route"], answer["route_chain"], answer["router"]) == ("numeric", "numeric", "rules")
    assert answer["route_reason"].startswith("compares metrics above 0.8: it names AUC")
    rows = details["numeric"]["rows"]
    assert [(r["cluster_id"], r["measure"], r["value"]) for r in rows] == [("c-1", "AUC", 0.86)]
    assert details["claims"][1]["text"] == "AUC 0.86 (extracted value)."
    assert details["claims"][1]["citations"][0]["PDF_DocIndex"] == "c-1" and answer["unresolved_citations"] == 0


def test_a_route_that_finds_nothing_hands_over_and_the_record_says_why(partition, embedder):
    engine = with_metrics(partition.engine(embedder), {"c-1": [AUC]})
    answer = ask(engine, "Which studies report an AUC above 0.95 for ozone?")
    attempts = json.loads(answer["json"])["routing"]["attempts"]
    assert (answer["route"], answer["route_chain"]) == ("local", "numeric->local")
    assert attempts[0] == {
        "route": "numeric",
        "outcome": "found nothing",
        "reason": "no work's metrics is above 0.95 (1 work states one)",
    }
    assert attempts[1]["outcome"] == "answered" and "fell back (numeric: no work's metrics" in answer["route_reason"]


def test_global_without_a_summary_tree_is_refused_and_retrieval_answers(partition, embedder):
    answer = ask(partition.engine(embedder), "What are the main themes of this literature on ozone?")
    attempts = json.loads(answer["json"])["routing"]["attempts"]
    assert answer["route_chain"] == "global->local" and attempts[0]["outcome"] == "refused"
    assert "materialize summary_tree" in attempts[0]["reason"]


def test_a_listing_of_works_names_each_work(partition, embedder):
    answer = ask(partition.engine(embedder), "Which studies used XGBoost?")
    claims = [c["text"] for c in json.loads(answer["json"])["claims"]]
    assert answer["route"] == "listing" and claims[1:] == ["Study 1."]
    assert re.fullmatch(r"1 of \d+ included studies match \(filters: MLMethod: XGBoost\)\.", claims[0]), claims


def test_graph_routes_leave_retracted_works_out_and_say_so(partition, embedder):
    engine = partition.engine(embedder)
    library = dict(engine.retriever.library)
    library["c-2"] = replace(library["c-2"], retracted=True)
    engine.retriever = replace(engine.retriever, library=library)
    answer = ask(engine, "How many articles use random forest in studies of ozone?")
    details = json.loads(answer["json"])
    assert answer["route"] == "counting" and details["claims"][0]["text"].startswith("2 of ")
    assert [r["document"] for r in details["retracted"]] == ["c-2"] and "retracted" in answer["markdown"]


@pytest.mark.parametrize(
    ("question", "everything"),
    [
        ("How many studies used random forest across all records found?", True),
        ("Which methods are used most among all the works retrieved?", True),
        ("What is the median sample size over every record identified?", True),
        ("How many studies used random forest?", False),
        ("Which records were found to use random forest?", False),
        ("What did all studies find about ozone?", False),
    ],
)
def test_a_question_counts_across_all_records_found_only_when_it_says_so(question, everything):
    assert asks_everything_found(question) is everything
