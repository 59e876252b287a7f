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


def test_model_written_cypher_counts_exactly_and_falls_back_when_empty(partition, embedder):
    steps = [Step(json_reply({"cypher": COUNT_CYPHER, "parameters": {"pollutants": ["ozone"]}})),
             Step(json_reply({"cypher": COUNT_CYPHER, "parameters": {"pollutants": ["sulphur dioxide"]}}))]  # fmt: skip
    with ScriptedLLMServer(steps, model=MODEL, schema=CYPHER_SCHEMA) as writer:
        engine = partition.engine(embedder, cypher=backend(writer))
        answers, _ = answer_questions(
            ["How many articles on ozone use each method?", "How many articles on sulphur dioxide use each method?"],
            engine,
        )
    assert writer.failures == []
    counted, empty = answers
    claims = [c["text"] for c in json.loads(counted["json"])["claims"]]
    assert counted["route"] == "counting" and claims[0].startswith("5 articles")
    assert "random forest: 3 articles." in claims and "long short-term memory network: 1 article." in claims
    assert json.loads(counted["json"])["symbolic"]["author"] == MODEL
    assert empty["route_chain"] == "counting->local"
    assert json.loads(empty["json"])["symbolic"]["fallback"] == "the symbolic query found nothing"


def test_invalid_generated_cypher_is_refused_and_never_runs(partition, embedder):
    before = partition.graph.counts()
    steps = [Step(json_reply({"cypher": "MATCH (a:Article) WHERE a.key <> $query DETACH DELETE a", "parameters": {}})),
             Step(json_reply({"cypher": "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Paper) RETURN a.key AS article",
                              "parameters": {}}))]  # fmt: skip
    with ScriptedLLMServer(steps, model=MODEL, schema=CYPHER_SCHEMA) as writer:
        engine = partition.engine(embedder, cypher=backend(writer))
        answers, _ = answer_questions(["How many articles on ozone are there?"] * 2, engine)
    reasons = [json.loads(a["json"])["symbolic"]["refused"] for a in answers]
    assert reasons == ["not read-only: DETACH is not allowed", "unknown labels or relationship types: Paper"]
    assert all(a["route_chain"] == "counting->local" for a in answers)
    assert partition.graph.counts() == before
