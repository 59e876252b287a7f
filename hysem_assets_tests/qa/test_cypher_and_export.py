"""Cypher validation rules, templates, and the preference dataset's file formats."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hysem_assets.qa.cypher import CypherPlan, CypherRejected, validate_cypher
from hysem_assets.qa.cypher_candidates import closest_examples, example_patterns
from hysem_assets.qa.preferences import DPO_KEYS, export_preferences
from hysem_assets.qa.questions import QuestionsError, load_questions, questions_for
from hysem_assets.qa.symbolic import target_label, template_plan
from hysem_assets.qa.terms import Filters
from hysem_assets_tests.knowledge.partition import schema

SCOPE = "MATCH (:Query {key: $query})-[:INCLUDES]->(a:Article)"


@pytest.mark.parametrize(
    "cypher, parameters, message",
    [
        (f"{SCOPE} SET a.title = $t RETURN a.key AS article", {"t": "x"}, "SET is not allowed"),
        (f"{SCOPE} CALL db.labels() YIELD label RETURN label", {}, "CALL is not allowed"),
        ("LOAD CSV FROM $url AS row RETURN row", {"url": "file:///etc/passwd"}, "LOAD is not allowed"),
        (f"{SCOPE}-[:CITES]->(b:Article) RETURN a.key AS article", {}, "unknown labels or relationship types: CITES"),
        (f"{SCOPE}-[:USES_ML_METHOD|FUNDS]->(m) RETURN a.key AS article", {}, "FUNDS"),
        (f"{SCOPE} WHERE a.doi = '10.1/x' RETURN a.key AS article", {}, "string literals are not allowed"),
        ("MATCH (a:Article) RETURN a.key AS article", {}, "scoped to the partition"),
        (f"{SCOPE} WHERE a.year > $year RETURN a.key AS article", {}, "parameters without values: year"),
        (f"{SCOPE} RETURN a.key AS article; MATCH (n) RETURN n", {}, "more than one statement"),
        (f"{SCOPE} RETURN a.key AS article // DELETE", {}, "comments are not allowed"),
    ],
)
def test_unsafe_or_ungrounded_cypher_is_rejected(cypher, parameters, message):
    with pytest.raises(CypherRejected, match=message):
        validate_cypher(CypherPlan(cypher, {"query": "q", **parameters}), schema())


def test_template_queries_pass_validation():
    terms = {"Pollutant": ["ozone"], "HealthOutcome": ["heart failure"], "MLMethod": ["random forest"]}
    for target in ("MLMethod", "Region", None):
        validate_cypher(template_plan(schema(), "q", target, Filters(terms, {"Region": ["China"]})), schema())


def test_target_kind_comes_from_the_question_wording():
    assert target_label("Which countries were studied?", schema()) == "Region"
    assert target_label("How many articles study ozone?", schema()) is None


def test_preference_export_is_dpo_ready_jsonl_and_parquet(tmp_path):
    records = [
        {"prompt": "Q1", "chosen": "good", "rejected": "bad", "chosen_approved": True, "chosen_cited": True},
        {"prompt": "Q2", "chosen": "meh", "rejected": "bad", "chosen_approved": False, "chosen_cited": True},
    ]
    assert export_preferences(records, tmp_path / "prefs.jsonl") == 1
    lines = [json.loads(line) for line in (tmp_path / "prefs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == [{"prompt": "Q1", "chosen": "good", "rejected": "bad"}]
    assert export_preferences(records, tmp_path / "prefs.parquet", format="parquet", approved_only=False) == 2
    assert tuple(pd.read_parquet(tmp_path / "prefs.parquet").columns) == DPO_KEYS
    with pytest.raises(ValueError, match="jsonl or parquet"):
        export_preferences(records, tmp_path / "prefs.csv", format="csv")


def test_configured_questions_load_for_the_sample_query():
    questions = load_questions()
    assert any("how many articles" in q for q in questions["air-pollution-cardio-ml"])
    assert questions_for("air-pollution-cardio-ml") == questions["air-pollution-cardio-ml"]


def test_a_query_without_questions_of_its_own_gets_the_default_ones(tmp_path):
    path = tmp_path / "questions.yaml"
    path.write_text("questions:\n  known: ['Own question?']\ndefault:\n  - ' Shared question? '\n")
    assert questions_for("known", path) == ["Own question?"]
    assert questions_for("brand-new", path) == ["Shared question?"]
    path.write_text("questions:\n  known: ['Own question?']\n")
    assert questions_for("brand-new", path) == []


@pytest.mark.parametrize(
    "text", ["default: 'not a list'\n", "default: ['']\n", "questions: [a, b]\n", "- just a list\n"]
)
def test_a_malformed_questions_file_names_the_file_and_the_shape(tmp_path, text):
    path = tmp_path / "questions.yaml"
    path.write_text(text)
    with pytest.raises(QuestionsError, match=f"{path} must hold 'questions: .*'default: "):
        questions_for("any", path)


def test_example_patterns_pass_validation_and_the_closest_share_the_question_s_words():
    examples = example_patterns(schema())
    for example in examples:
        validate_cypher(CypherPlan(example.cypher, {**example.parameters, "query": "q"}), schema())
    [listing] = closest_examples("Which outcomes are studied?", examples, k=1)
    assert "(x:`HealthOutcome`)" in listing.cypher and "EXISTS" not in listing.cypher
    [negated] = closest_examples("How many works report an outcome but not stroke?", examples, k=1)
    assert "HealthOutcome" in negated.cypher and "NOT EXISTS" in negated.cypher
    assert closest_examples("anything", examples, k=3) == closest_examples("anything", examples, k=3)
