"""Questions over the entity graph: reviewers' phrasings routed to it (and others kept off it), rankings, counts and
listings equal to an independent count of the entity mentions over the included works, topics and exclusions
honoured, the entity ranking in the local fusion, and E²GraphRAG's choice between the summary tree and passages.

The entity graph is loaded through the store from an entity-mentions table written for the QA partition's
sentences, as the ``entities`` asset tags them: c-6 is found but not included, so it never counts.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml

from hysem_assets.core.matcher import matchable
from hysem_assets.qa.aggregates import category_fields
from hysem_assets.qa.answer import answer_question
from hysem_assets.qa.entity_questions import (
    EntityNames,
    EntityQuestionsError,
    contains_phrase,
    entity_question,
    excluded_phrases,
    load_entity_kinds,
)
from hysem_assets.qa.number_fields import number_fields
from hysem_assets.qa.retrieval import entity_hits, retrieve
from hysem_assets.qa.router import choose_route, entity_ask, rule_route
from hysem_assets.settings.protocols import load_protocol, load_protocols
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets_tests.knowledge.partition import ARTICLES
from hysem_assets_tests.qa.corpus import Partition, build_partition

PHRASINGS = yaml.safe_load((Path(__file__).with_name("data") / "entity_questions.yaml").read_text(encoding="utf-8"))
KINDS = load_entity_kinds()
INCLUDED = ["c-1", "c-2", "c-3", "c-4", "c-5"]
#: (chunk, type, name) as the tagger reads the QA partition's sentences (hysem_assets_tests/qa/corpus.py).
MENTIONS = [
    ("c-1:0", "Method", "random forest"), ("c-1:0", "Disease", "myocardial infarction"),
    ("c-1:1", "Method", "XGBoost"), ("c-1:1", "Disease", "cardiac events"),
    ("c-2:0", "Method", "time-series analysis"), ("c-2:0", "Disease", "heart failure"),
    ("c-2:1", "Method", "random forest"), ("c-2:1", "Disease", "heart failure"),
    ("c-3:0", "Method", "long short-term memory network"), ("c-3:0", "Disease", "coronary heart disease"),
    ("c-4:0", "Method", "random forest"), ("c-4:0", "Disease", "heart failure"),
    ("c-4:1", "Method", "regression models"),
    ("c-5:0", "Method", "support vector machines"), ("c-5:0", "Disease", "heart failure"),
    ("c-6:0", "Method", "gradient boosting"), ("c-6:0", "Disease", "stroke"),
    ("c-6:1", "Method", "Bayesian kernel machine regression"),
]  # fmt: skip
CLAIM = re.compile(r"^(?P<name>.+): (?P<works>\d+) of (?P<reporting>\d+) works \([\d.]+%\)\.$")
LISTED = re.compile(r"^(?P<name>.+): (?P<works>\d+) articles?\.$")


def mentions_table() -> pd.DataFrame:
    return pd.DataFrame(
        {"cluster_id": chunk.split(":")[0], "chunk_id": chunk, "type": kind, "name": name, "text": name}
        for chunk, kind, name in MENTIONS
    )


def independent_counts(kind: str, within: set[str] | None = None) -> dict[str, int]:
    """Included works per entity name of type ``kind`` (names as the graph keeps them), counted off the table."""
    works = defaultdict(set)
    for chunk, found, name in MENTIONS:
        cluster = chunk.split(":")[0]
        if found == kind and cluster in INCLUDED and (within is None or cluster in within):
            works[name.casefold()].add(cluster)
    return {name: len(clusters) for name, clusters in works.items()}


@pytest.fixture(scope="module")
def entity_partition(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[Partition]:
    """The QA partition with an entity graph; c-2 also reports cardiovascular mortality (an extracted outcome)."""
    articles = [
        {**a, "out": [*a["out"], "cardiovascular mortality"]} if a["cluster_id"] == "c-2" else a for a in ARTICLES
    ]
    relations = pd.DataFrame(
        [{"cluster_id": "c-2", "first": "random forest", "first_type": "Method", "second": "heart failure",
          "second_type": "Disease", "label": "USED-FOR", "sentence": "Random forest ... heart failure",
          "probability": 0.9}]
    )  # fmt: skip
    built = build_partition(
        tmp_path_factory.mktemp("entities"),
        embedder,
        articles,
        included=INCLUDED,
        entity_mentions=mentions_table(),
        entity_relations=relations,
    )
    yield built
    built.store.close()
    built.graph.close()


def ask(partition: Partition, embedder, question: str) -> tuple[dict, dict]:
    answer = asyncio.run(answer_question(question, partition.engine(embedder))).answer
    return answer, json.loads(answer["json"])


def ranked(details: dict) -> dict[str, int]:
    return {m["name"]: int(m["works"]) for c in details["claims"][1:] if (m := CLAIM.match(c["text"]))}


# -- routing ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["pollution-cardio-ml", "generic"])
def test_reviewers_phrasings_go_to_the_entity_route_with_their_type_and_mode(protocol):
    chosen = load_protocol(protocol)
    schema = graph_schema(load_protocols(), chosen)
    numbers, categories = number_fields(schema, chosen), category_fields(schema, chosen)
    wrong = []
    for question, expected in PHRASINGS["entities"].items():
        decision = rule_route(question, schema, numbers, categories, KINDS)
        asked = entity_ask(question, KINDS, categories)
        kind = KINDS.first(matchable(question))
        got = f"{kind.name if kind else None} {asked.mode if asked else None}"
        if decision is None or decision.route != "entities" or got != expected:
            wrong.append((question, expected, decision.route if decision else None, got))
    others = [q for q in PHRASINGS["others"] if (d := rule_route(q, schema, numbers, categories, KINDS)) and
              d.route == "entities"]  # fmt: skip
    assert len(PHRASINGS["entities"]) >= 30 and len(PHRASINGS["others"]) >= 15
    assert wrong == [] and others == []


def test_the_entity_route_hands_over_to_the_route_the_protocols_words_choose():
    chosen = load_protocol("pollution-cardio-ml")
    schema = graph_schema(load_protocols(), chosen)
    numbers, categories = number_fields(schema, chosen), category_fields(schema, chosen)
    ranking = rule_route("Which machine learning methods are most often used?", schema, numbers, categories, KINDS)
    assert ranking is not None and ranking.chain == ("entities", "ranking", "local")
    plain = rule_route("Which data sources were used?", schema, numbers, categories, KINDS)
    assert plain is not None and plain.chain == ("entities", "local")
    assert rule_route("Which data sources were used?", schema, numbers, categories) is None  # without the words


def test_the_entity_words_file_is_checked_when_read(tmp_path: Path):
    path = tmp_path / "entity_questions.yaml"
    path.write_text("types:\n  Methods: [method]\n", encoding="utf-8")
    with pytest.raises(EntityQuestionsError, match=r"entity_questions.yaml:2: 'Methods' is no tagger type"):
        load_entity_kinds(path)
    path.write_text("types:\n  Method: [method]\nwords: []\n", encoding="utf-8")
    with pytest.raises(EntityQuestionsError, match="unknown key 'words'"):
        load_entity_kinds(path)
    assert load_entity_kinds(tmp_path / "absent.yaml") is None


# -- reading a question -----------------------------------------------------------------------------


def test_topics_qualifiers_and_exclusions_are_read_off_the_question():
    named = ["Method:machine learning", "Disease:heart failure", "Task:heart failure prediction", "Disease:stroke",
             "Method:random forest"]  # fmt: skip
    names = EntityNames.of_rows((key, key.partition(":")[2]) for key in named)
    ranking = entity_question("Which machine learning methods are most often used?", KINDS, names)
    assert ranking is not None and (ranking.type, ranking.kind, ranking.topics) == ("Method", "methods", ())
    topic = entity_question("Which methods are used for heart failure prediction?", KINDS, names)
    assert topic is not None and topic.topic_names == ("heart failure prediction",)
    before = entity_question("Which stroke models are used most?", KINDS, names)  # a disease before the kind: a topic
    assert before is not None and before.topic_names == ("stroke",)
    task = entity_question("Which heart failure prediction models are used most?", KINDS, names)
    assert task is not None and task.topics == ()  # a task before the kind narrows it
    excluding = entity_question("Which methods are used most, excluding random forest and stroke?", KINDS, names)
    assert excluding is not None and excluding.excluded_names == ("stroke",)  # another type: its works leave
    assert excluding.dropped == ("random forest", "stroke") and excluding.topics == ()
    assert excluded_phrases("excluding studies of mortality") == ["mortality"]
    assert contains_phrase("all-cause mortality", "mortality") and not contains_phrase("mortality rate", "rate of")


# -- answers from the entity graph -------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Which machine learning methods are most often used?",
        "What ML algorithms do the studies use most?",
        "List the most common modelling approaches.",
    ],
)
def test_a_ranking_equals_an_independent_count_of_the_entity_mentions(entity_partition, embedder, question):
    answer, details = ask(entity_partition, embedder, question)
    assert answer["route"] == "entities" and details["entities"]["mode"] == "ranking"
    expected = independent_counts("Method")
    assert ranked(details) == expected  # gradient boosting (c-6, not included) is never counted
    reporting = len({c.split(":")[0] for c, kind, _ in MENTIONS if kind == "Method"} & set(INCLUDED))
    assert details["claims"][0]["text"].startswith(f"{reporting} of {len(INCLUDED)} included studies report ")
    top = details["claims"][1]
    assert top["text"].startswith("random forest: 3 of") and len(top["citations"]) == 3  # it cites its works
    assert {c["PDF_DocIndex"] for c in top["citations"]} == {"c-1", "c-2", "c-4"}


def listed(details: dict) -> dict[str, int]:
    return {m["name"]: int(m["works"]) for c in details["claims"][1:] if (m := LISTED.match(c["text"]))}


def test_a_listing_names_a_topic_and_counts_only_the_works_that_mention_it(entity_partition, embedder):
    answer, details = ask(entity_partition, embedder, "Which methods are used for cardiac events?")
    assert answer["route"] == "entities" and details["entities"]["topics"] == ["cardiac events"]
    assert details["claims"][0]["text"].startswith("1 of 5 included studies match (filters: mentioning: cardiac")
    assert listed(details) == independent_counts("Method", within={"c-1"})


def test_a_term_of_the_protocol_filters_as_the_protocol_says(entity_partition, embedder):
    """Heart failure is an outcome the review's dictionary knows: the works linked to it, not a name as written."""
    answer, details = ask(entity_partition, embedder, "Which methods are used for heart failure prediction?")
    assert answer["route"] == "entities" and details["entities"]["topics"] == []
    outcome = {a["cluster_id"] for a in ARTICLES if "heart failure" in a["out"] and a["cluster_id"] in INCLUDED}
    assert details["claims"][0]["text"].startswith(f"{len(outcome)} of 5 included studies match (filters: ")
    assert "heart failure" in details["claims"][0]["text"]
    assert listed(details) == independent_counts("Method", within=outcome)
    _, details = ask(entity_partition, embedder, "Which random forest models are used most?")
    assert details["terms"] == {"MLMethod": ["random forest"]} and details["entities"]["cypher"].count("EXISTS") == 0
    assert ranked(details) == independent_counts("Method")  # a term right before the kind narrows, never filters


def test_exclusions_drop_names_and_the_works_of_other_entities(entity_partition, embedder):
    _, details = ask(entity_partition, embedder, "Which methods are most often used, excluding random forest?")
    expected = independent_counts("Method")
    assert ranked(details) == {name: n for name, n in expected.items() if name != "random forest"}
    assert details["claims"][0]["text"].startswith("5 of 5 included studies")  # its works still count
    _, details = ask(entity_partition, embedder, "Which methods are most often used, except myocardial infarction?")
    assert ranked(details) == independent_counts("Method", within={"c-2", "c-3", "c-4", "c-5"})


def test_excluding_a_word_leaves_out_every_outcome_named_with_it(entity_partition, embedder):
    """The protocol's ranking: "mortality" is no term, yet "excluding mortality" means cardiovascular mortality."""
    answer, details = ask(entity_partition, embedder, "Which outcomes are studied most often, excluding mortality?")
    assert answer["route"] == "ranking"
    names = ranked(details)
    assert "heart failure" in names and not any("mortality" in name for name in names)


def test_without_an_entity_graph_the_protocols_route_answers(partition, embedder):
    answer = asyncio.run(answer_question("Which machine learning methods are most often used?",
                                         partition.engine(embedder))).answer  # fmt: skip
    attempts = json.loads(answer["json"])["routing"]["attempts"]
    assert answer["route"] == "ranking" and answer["route_chain"] == "entities->ranking"
    assert attempts[0]["outcome"] == "refused" and "materialize entities" in attempts[0]["reason"]


# -- local retrieval and the choice of the summary tree -------------------------------------------------


def test_the_entity_ranking_leads_first_to_the_chunks_where_the_question_entities_meet(entity_partition, embedder):
    retriever = entity_partition.engine(embedder).retriever
    hits, hops = entity_hits(retriever, "How does random forest relate to heart failure?")
    ids = [hit.chunk_id for hit in hits]
    assert ids[:2] == ["c-2:1", "c-4:0"] and hops == 1  # both entities in one chunk first
    assert {"c-1:0", "c-2:0", "c-5:0"} <= set(ids)  # then each entity's own chunks
    assert not any("entities" in c.routes for c in retrieve("How does random forest relate?", retriever).context)
    retriever.settings = replace(retriever.settings, entity_list=True)  # off by default, as measured
    context = retrieve("How does random forest relate to heart failure?", retriever).context
    assert any("entities" in chunk.routes for chunk in context)


def test_a_question_naming_no_entity_of_the_graph_goes_to_the_summary_tree(entity_partition, embedder):
    engine = entity_partition.engine(embedder)
    names = engine.retriever.entities

    def route(question: str) -> str:
        decision = asyncio.run(choose_route(question, engine.schema, [], None, [], KINDS, names))
        return decision.route

    assert route("What limitations do the authors acknowledge?") == "global"
    assert route("How was random forest validated?") == "local"
    assert asyncio.run(choose_route("What limitations do the authors acknowledge?", engine.schema, [])).route == "local"
