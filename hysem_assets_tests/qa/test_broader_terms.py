"""config/broader_terms.yaml: broader terms a question may use, checked against the dictionaries."""

from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.qa.engine import broader_terms
from hysem_assets.qa.terms import BroaderTermsError, QuestionMatcher, load_broader_terms
from hysem_assets.terms import TermMatcher

CANONICAL = {"health_outcome": {"heart failure", "myocardial infarction", "coronary heart disease", "stroke"}}


def test_the_shipped_broader_terms_name_only_canonical_terms() -> None:
    terms = broader_terms()
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
        ("outcomes:\n  heart disease: [heart failure]\n", "'outcomes' is not a field with a dictionary"),
    ],
)
def test_a_bad_broader_terms_file_names_the_file_and_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "broader_terms.yaml"
    path.write_text(text)
    with pytest.raises(BroaderTermsError, match=message):
        load_broader_terms(path, canonical=CANONICAL)


def test_no_file_means_no_broader_terms(tmp_path: Path) -> None:
    assert load_broader_terms(tmp_path / "missing.yaml") == {}
