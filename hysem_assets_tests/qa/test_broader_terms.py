"""A protocol's broader terms: what a question may say for several canonical terms, checked against dictionaries."""

from __future__ import annotations

import pytest
import yaml

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.qa.engine import broader_terms
from hysem_assets.qa.terms import BroaderTermsError, QuestionMatcher, checked_broader_terms
from hysem_assets.settings.protocols import load_protocol

CANONICAL = {"health_outcome": {"heart failure", "myocardial infarction", "coronary heart disease", "stroke"}}


def test_the_shipped_broader_terms_name_only_canonical_terms() -> None:
    protocol = load_protocol("pollution-cardio-ml")
    terms = broader_terms(protocol, protocol.dictionaries())
    assert "stroke" not in terms["health_outcome"]["heart disease"]
    assert {"heart failure", "myocardial infarction"} <= set(terms["health_outcome"]["heart disease"])


def test_a_longer_canonical_spelling_wins_over_the_broader_term_inside_it() -> None:
    matcher = QuestionMatcher(
        TermMatcher({"coronary heart disease": "coronary heart disease", "heart disease": "heart disease"}),
        {"heart disease": ["heart failure", "coronary heart disease"]},
    )
    assert matcher.find("ozone and coronary heart disease") == ["coronary heart disease"]
    assert matcher.find("ozone and heart disease") == ["heart failure", "coronary heart disease"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("health_outcome: [heart failure]\n", "must map each field to"),
        ("health_outcome:\n  heart disease: []\n", "must map each field to"),
        (
            "health_outcome:\n  heart disease: [heart failur]\n",
            r"covers \['heart failur'\], not canonical terms of .*health_outcome",
        ),
        ("health_outcome:\n  stroke: [heart failure]\n", "'stroke' is already a canonical term of health_outcome"),
        ("outcomes:\n  heart disease: [heart failure]\n", "'outcomes', not a field with a dictionary"),
    ],
)
def test_bad_broader_terms_name_the_protocol_and_the_problem(text: str, message: str) -> None:
    with pytest.raises(BroaderTermsError, match=f"^review.yaml: .*{message}"):
        checked_broader_terms(yaml.safe_load(text), canonical=CANONICAL, where="review.yaml")


def test_a_protocol_without_broader_terms_has_none() -> None:
    protocol = load_protocol("generic")
    assert broader_terms(protocol, protocol.dictionaries()) == {}
