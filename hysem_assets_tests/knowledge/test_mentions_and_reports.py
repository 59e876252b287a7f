from __future__ import annotations

from pathlib import Path

import pandas as pd

from hysem_assets.core.matcher import TermMatcher
from hysem_assets.knowledge.mentions import find_mentions, merge_vocabularies
from hysem_assets.knowledge.reports import load_reports
from hysem_assets_tests.paths import PROJECT_ROOT

DICTIONARIES = {
    "pollutant_terms": {"O3": "ozone", "ground-level ozone": "ozone", "PM": "particulate matter", "PM2.5": "PM2.5"},
    "health_outcome": {"MI": "myocardial infarction", "heart attack": "myocardial infarction"},
}


def test_mentions_use_canonical_names_whole_words_and_longest_spellings() -> None:
    vocabulary = merge_vocabularies(DICTIONARIES, {"ml_methods_used": {"Random forests": "random forest"}})
    texts = pd.Series(
        [
            "Ground-level ozone (O3) and PM2.5 with random forests; a heart attack (MI).",
            "o3, pm and mi are not abbreviations here; ozonesonde is not ozone-free",
            None,
        ]
    )
    found = find_mentions(texts, vocabulary)

    assert found[0] == {
        "pollutant_terms": ["ozone", "PM2.5"],
        "health_outcome": ["myocardial infarction"],
        "ml_methods_used": ["random forest"],
    }
    assert found[1]["pollutant_terms"] == ["ozone"] and found[1]["health_outcome"] == []
    assert found[2] == {field: [] for field in vocabulary}


def test_first_mention_comes_first() -> None:
    matcher = TermMatcher({"daily counts": "time-series", "case crossover": "case-crossover"})
    assert matcher.find("A case crossover design on daily counts") == ["case-crossover", "time-series"]


def test_reports_come_with_their_description(tmp_path: Path) -> None:
    (tmp_path / "b.cypher").write_text("// Second\nMATCH (n) RETURN n\n// not a description", encoding="utf-8")
    (tmp_path / "a.cypher").write_text("// First,\n// in two lines\nRETURN 1", encoding="utf-8")
    reports = load_reports(tmp_path)
    assert [(r.name, r.description) for r in reports] == [("a", "First, in two lines"), ("b", "Second")]
    project = {r.name for r in load_reports(PROJECT_ROOT / "config" / "reports")}
    assert "ml_methods_ozone_heart" in project
