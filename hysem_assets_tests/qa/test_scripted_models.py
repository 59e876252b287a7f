"""Generator, auditor and Cypher writer as models behind a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from hysem_assets.qa.agents import CYPHER_SCHEMA
from hysem_assets.qa.answer import answer_questions
from hysem_assets.qa.drafts import DRAFT_SCHEMA, VERDICT_SCHEMA
from hysem_assets_tests.llm.scripted_server import ScriptedLLMServer, Step, json_reply
from hysem_assets_tests.qa.corpus import EVIL_DOI

MODEL = "qwen2.5-7b-instruct"
QUESTION = "Which models relate ozone to heart failure?"


def backend(server: ScriptedLLMServer) -> dict[str, Any]:
    return {"backend": "openai", "model": MODEL, "base_url": server.url + "/v1", "cache": False, "max_retries": 0}


def sources(body: dict) -> list[dict[str, Any]]:
    """The metadata objects the request offered, as a model reads them from the prompt."""
    return [json.loads(line) for line in re.findall(r"^SOURCE (\{.*\})$", body["messages"][-1]["content"], re.M)]


def cite_first(claim: str, tamper: Callable[[dict], dict] = lambda c: c) -> Callable[[dict], Step]:
    def step(body: dict) -> Step:
        return Step(json_reply({"claims": [{"text": claim, "citations": [tamper(sources(body)[0])]}]}))

    return step


def verdict(approved: bool, feedback: str = "") -> Step:
    finding = {"claim": 0, "supported": approved, "logical": True, "citations_ok": True, "note": feedback}
    return Step(json_reply({"approved": approved, "findings": [finding], "feedback": feedback}))


def test_rejected_draft_then_approved_lands_in_the_preference_log(partition, embedder):
    drafts = [cite_first("Ozone causes all heart disease."), cite_first("Random forest linked ozone to heart failure.")]
    auditor_steps = [verdict(False, "overstated: the source reports an association"), verdict(True)]

    def revision_sees_feedback(body: dict) -> None:
        assert "overstated" in body["messages"][-1]["content"]

    with (
        ScriptedLLMServer(lambda body: drafts.pop(0)(body), model=MODEL, schema=DRAFT_SCHEMA) as generator,
        ScriptedLLMServer(auditor_steps, model=MODEL, schema=VERDICT_SCHEMA) as auditor,
    ):
        engine = partition.engine(embedder, generator=backend(generator), auditor=backend(auditor))
        answers, preferences = answer_questions([QUESTION], engine)
        revision = generator.requests[1]
    assert generator.failures == auditor.failures == []
    revision_sees_feedback(revision)
    answer = answers[0]
    assert (answer["rounds"], answer["approved"], answer["unverified"]) == (2, True, False)
    assert (answer["prompt_tokens"], answer["completion_tokens"]) == (400, 80)
    assert len(preferences) == 1
    pair = preferences[0]
    assert "Ozone causes all heart disease." in pair["rejected"] and "Random forest" in pair["chosen"]
    assert pair["chosen_approved"] and pair["rejected_round"] == 1 and pair["generator_model"] == MODEL
    assert json.loads(pair["rejected_verdict"])["feedback"].startswith("overstated")
    assert pair["prompt"].startswith(f"Question: {QUESTION}")


@pytest.mark.parametrize(
    "tamper, problem",
    [
        (lambda c: {**c, "DOI": "10.1234/fabricated.99"}, "DOI '10.1234/fabricated.99' does not match"),
        (lambda c: {**c, "DOI": EVIL_DOI, "InTextCitation": "(Evil et al., 2020)"}, "does not match"),
        (lambda c: {**c, "PDF_ChunkIndex": 7}, "was not retrieved"),
    ],
    ids=["fabricated-doi", "injected-source", "unretrieved-chunk"],
)
def test_post_hoc_audit_removes_claims_whose_citations_do_not_resolve(partition, embedder, tamper, problem):
    with (
        ScriptedLLMServer(
            cite_first("Ozone predicts heart failure.", tamper), model=MODEL, schema=DRAFT_SCHEMA
        ) as generator,
        ScriptedLLMServer([verdict(True)], model=MODEL, schema=VERDICT_SCHEMA) as auditor,
    ):
        engine = partition.engine(embedder, generator=backend(generator), auditor=backend(auditor))
        answers, _ = answer_questions([QUESTION], engine)
    answer = answers[0]
    details = json.loads(answer["json"])
    assert answer["approved"] and answer["unverified"] and answer["claims"] == 0
    assert answer["unresolved_citations"] == 1
    assert problem in details["removed_claims"][0]["reasons"][0]
    assert "removed by the citation audit" in answer["unverified_reason"]


COUNT_CYPHER = (
    "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)-[:USES_ML_METHOD]->(m:MLMethod) "
    "WHERE EXISTS { MATCH (a)-[:STUDIES_POLLUTANT]->(p:Pollutant) WHERE p.name IN $pollutants } "
    "RETURN m.name AS name, a.key AS article"
)


def cypher(query: str, parameters: dict[str, Any], seed: int) -> Step:
    """A candidate query, from a request that carries the schema's examples and the candidate's own seed."""

    def check(body: dict) -> None:
        system = body["messages"][0]["content"]
        assert "Queries that answer similar questions" in system and system.count("Cypher: MATCH") == 3, system
        assert body.get("seed") == seed and body.get("temperature") == (0.0 if seed == 0 else 0.7), body

    return Step(json_reply({"cypher": query, "parameters": parameters}), check)


def test_model_candidates_agree_on_an_exact_count_and_an_empty_one_falls_back(partition, embedder):
    ozone, dioxide = {"pollutants": ["ozone"]}, {"pollutants": ["sulphur dioxide"]}
    deleting = "MATCH (a:Article) WHERE a.key <> $query DETACH DELETE a"
    steps = [cypher(COUNT_CYPHER, ozone, 0), cypher(deleting, {}, 1), cypher(COUNT_CYPHER, ozone, 2),
             *(cypher(COUNT_CYPHER, dioxide, seed) for seed in range(3))]  # fmt: skip
    with ScriptedLLMServer(steps, model=MODEL, schema=CYPHER_SCHEMA) as writer:
        engine = partition.engine(embedder, cypher=backend(writer))
        answers, _ = answer_questions(
            ["How many articles on ozone use each method?", "How many articles on sulphur dioxide use each method?"],
            engine,
        )
    assert writer.failures == []
    counted, empty = answers
    details = json.loads(counted["json"])
    claims = [c["text"] for c in details["claims"]]
    assert counted["route"] == "counting" and claims[0].startswith("5 of 6 included studies match")
    assert "random forest: 3 articles." in claims and "long short-term memory network: 1 article." in claims
    assert details["symbolic"]["author"] == MODEL
    fates = [(c["outcome"], c.get("agreeing")) for c in details["symbolic"]["candidates"]]
    assert fates == [("chosen", 2), ("discarded", None), ("ran", 2)]
    assert details["symbolic"]["candidates"][1]["reason"] == "not read-only: DETACH is not allowed"
    assert empty["route_chain"] == "counting->local"
    assert json.loads(empty["json"])["symbolic"]["fallback"] == "the symbolic query found nothing"


def test_when_no_candidate_holds_the_templates_answer_and_nothing_is_written(partition, embedder):
    before = partition.graph.counts()
    every_article = "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article) RETURN NULL AS name, a.key AS article"
    steps = [cypher("MATCH (a:Article) WHERE a.key <> $query DETACH DELETE a", {}, 0),
             cypher("MATCH (:Query {key: $query})-[:INCLUDES]->(a:Paper) RETURN a.key AS article", {}, 1),
             cypher(every_article, {}, 2)]  # fmt: skip
    with ScriptedLLMServer(steps, model=MODEL, schema=CYPHER_SCHEMA) as writer:
        engine = partition.engine(embedder, cypher=backend(writer), cypher_max_rows=4)
        answers, _ = answer_questions(["How many articles on ozone are there?"], engine)
    assert writer.failures == []
    details = json.loads(answers[0]["json"])["symbolic"]
    assert [c["reason"] for c in details["candidates"]] == [
        "not read-only: DETACH is not allowed",
        "unknown labels or relationship types: Paper",
        "it answered with 6 rows, more than 4",
    ]
    assert answers[0]["route"] == "counting" and details["author"] == "template"
    assert partition.graph.counts() == before
