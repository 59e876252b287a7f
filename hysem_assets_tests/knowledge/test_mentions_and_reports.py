from __future__ import annotations

from pathlib import Path

import pandas as pd

from hysem_assets.knowledge.mentions import find_mentions, vocabulary_from_fields
from hysem_assets.knowledge.reports import load_reports
from hysem_assets.settings import PROJECT_ROOT
from hysem_assets_tests.knowledge.partition import frames, schema


def test_mentions_use_canonical_names_whole_words_and_longest_forms() -> None:
    vocabulary = vocabulary_from_fields(
        schema(), frames()["fields"], synonyms={"pollutant_terms": {"O3": "ozone", "PM": "particulate matter"}}
    )
    texts = pd.Series(
        ["O3 and PM2.5 with a Random Forest; ozone again.", "no terms; ozonesonde is not ozone-free", None]
    )
    found = find_mentions(texts, vocabulary)

    assert found[0]["pollutant_terms"] == ["ozone", "PM2.5"]
    assert found[0]["ml_methods_used"] == ["random forest"]
    assert found[1]["pollutant_terms"] == ["ozone"]  # "ozone-free", not "ozonesonde"
    assert found[2] == {field: [] for field in vocabulary if vocabulary[field]}


def test_reports_come_with_their_description(tmp_path: Path) -> None:
    (tmp_path / "b.cypher").write_text("// Second\nMATCH (n) RETURN n\n// not a description", encoding="utf-8")
    (tmp_path / "a.cypher").write_text("// First,\n// in two lines\nRETURN 1", encoding="utf-8")
    reports = load_reports(tmp_path)
    assert [(r.name, r.description) for r in reports] == [("a", "First, in two lines"), ("b", "Second")]
    project = {r.name for r in load_reports(PROJECT_ROOT / "config" / "reports")}
    assert "ml_methods_ozone_heart" in project
