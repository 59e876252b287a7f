from __future__ import annotations

import json

import pandas as pd

from hysem_assets.knowledge.fields import canonical_fields, chunk_mentions, raw_values
from hysem_assets.settings.dictionaries import load_dictionaries
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.knowledge.partition import PROTOCOL, schema

MAPPING = pd.DataFrame(
    [
        ("ml_methods_used", "RF", "random forest", 1.0, "exact"),
        ("ml_methods_used", "Random Forests", "random forest", 1.0, "normalized"),
        ("ml_methods_used", "a new net", None, 0.3, "unmatched"),
        ("pollutant_terms", "O3", "ozone", 1.0, "exact"),
    ],
    columns=["field", "raw_term", "canonical", "score", "method"],
)


def test_raw_values_read_json_text_lists_and_plain_values() -> None:
    assert raw_values('["RF", " O3 ", ""]') == ["RF", "O3"]
    assert raw_values("[not json") == ["[not json"]
    assert raw_values(None) == [] and raw_values(["a"]) == ["a"]


def test_fields_become_canonical_and_study_designs_are_read_from_text() -> None:
    extracted = pd.DataFrame(
        {
            "cluster_id": ["c-1", "c-2"],
            "ml_methods_used": [json.dumps(["RF", "Random Forests", "a new net"]), None],
            "pollutant_terms": [json.dumps(["O3"]), json.dumps([])],
            "study_type": ["We used a time-stratified case-crossover design.", None],
        }
    )
    spellings = {field: dict(d.spellings) for field, d in load_dictionaries().items()}
    table = canonical_fields(schema(), load_protocol(PROTOCOL), extracted, MAPPING, spellings)

    assert table.columns.tolist() == [
        "cluster_id", "ml_methods_used", "pollutant_terms", "health_outcome", "geography", "study_type", "sample_size",
    ]  # fmt: skip
    first, second = table.to_dict("records")
    assert first["ml_methods_used"] == ["random forest"]
    assert first["pollutant_terms"] == ["ozone"] and first["health_outcome"] == []
    assert first["study_type"] == "case-crossover"
    assert second["ml_methods_used"] == [] and second["study_type"] is None
    assert first["sample_size"] is None  # numbers stay as extracted: none was


def test_chunk_mentions_use_dictionaries_and_the_mapping() -> None:
    chunks = pd.DataFrame({"text": ["An RF model of O3 and ground-level ozone.", "Nothing here."]})
    spellings = {field: dict(d.spellings) for field, d in load_dictionaries().items()}
    mentions = chunk_mentions(schema(), chunks, MAPPING, spellings)
    assert mentions[0]["ml_methods_used"] == ["random forest"]
    assert mentions[0]["pollutant_terms"] == ["ozone"]
    assert set(mentions[0]) == set(schema().entity_fields())
    assert all(found == [] for found in mentions[1].values())
