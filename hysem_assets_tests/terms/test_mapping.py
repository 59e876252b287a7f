from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.settings.dictionaries import build_dictionary, load_dictionaries
from hysem_assets.terms.mapping import map_terms

DICTIONARIES = {
    "ml_methods_used": build_dictionary(
        "ml_methods_used",
        {
            "random forest": ["RF"],
            "gradient boosting": ["XGBoost", "gradient boosted trees"],
            "long short-term memory": ["LSTM"],
            "support vector machine": ["SVM"],
        },
    ),
    "pollutant_terms": build_dictionary(
        "pollutant_terms",
        {
            "PM2.5": ["fine particulate matter"],
            "NO2": ["nitrogen dioxide"],
            "ozone": ["O3"],
        },
    ),
}


def raw(*rows: tuple[str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["doc_id", "field", "raw_term"])


TERMS = raw(
    ("a", "ml_methods_used", "XGBoost"),
    ("b", "ml_methods_used", "XGBoost"),
    ("b", "ml_methods_used", "Random-Forests"),
    ("c", "ml_methods_used", "extreme gradient boosting"),
    ("c", "ml_methods_used", "banana bread recipe"),
    ("d", "pollutant_terms", "PM₂.₅"),
    ("d", "pollutant_terms", "ground-level ozone"),
    ("e", "geography", "Bavaria"),
    ("e", "geography", " "),
)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("term_embeddings")


@pytest.fixture(scope="module")
def first_run(cache_dir: Path):
    encoder = Encoder()
    return map_terms(TERMS, DICTIONARIES, cache_dir=cache_dir, encoder=encoder), encoder


def test_exact_normalized_and_embedding_matches(first_run) -> None:
    mapping = first_run[0].mapping.set_index(["field", "raw_term"])
    assert mapping.loc[("ml_methods_used", "XGBoost"), ["canonical", "method", "score", "occurrences"]].tolist() == [
        "gradient boosting",
        "exact",
        1.0,
        2,
    ]
    assert mapping.loc[("ml_methods_used", "Random-Forests"), ["canonical", "method"]].tolist() == [
        "random forest",
        "normalized",
    ]
    assert mapping.loc[("pollutant_terms", "PM₂.₅"), ["canonical", "method"]].tolist() == ["PM2.5", "normalized"]
    for key, canonical in {
        ("ml_methods_used", "extreme gradient boosting"): "gradient boosting",
        ("pollutant_terms", "ground-level ozone"): "ozone",
    }.items():
        assert mapping.loc[key, "canonical"] == canonical and mapping.loc[key, "method"] == "embedding"
        assert 0.55 <= mapping.loc[key, "score"] < 1.0


def test_out_of_domain_terms_stay_unmatched_with_their_nearest_candidates(first_run) -> None:
    result = first_run[0]
    unmatched = result.unmatched.set_index(["field", "raw_term"])
    banana = unmatched.loc[("ml_methods_used", "banana bread recipe")]
    assert len(banana["candidates"]) == 3 and max(banana["candidate_scores"]) < 0.55
    assert set(banana["candidates"]) <= set(DICTIONARIES["ml_methods_used"].entries)
    # A field without a dictionary maps nothing; its terms still feed the suggestions.
    assert unmatched.loc[("geography", "Bavaria"), "candidates"] == []
    assert " " not in result.mapping["raw_term"].tolist()
    fields = result.fields.set_index("field")
    assert fields.loc["ml_methods_used", ["terms", "exact", "normalized", "embedding", "unmatched"]].tolist() == [
        4,
        1,
        1,
        1,
        1,
    ]
    assert fields.loc["ml_methods_used", "match_rate"] == pytest.approx(0.75)
    assert fields.loc["geography", "dictionary_cache"] == "none"


def test_dictionary_embeddings_are_cached_by_content(first_run, cache_dir: Path) -> None:
    result, encoder = first_run
    spellings = sum(len(d.spellings) for d in DICTIONARIES.values())
    embedded_raw = 4  # the terms no exact or normalized match took
    assert encoder.encoded == embedded_raw + spellings
    assert set(result.fields["dictionary_cache"]) == {"miss", "none"}
    files = {path: path.stat().st_mtime_ns for path in cache_dir.glob("*.npy")}
    assert len(files) == 2

    again = Encoder()
    second = map_terms(TERMS, DICTIONARIES, cache_dir=cache_dir, encoder=again)
    assert again.encoded == embedded_raw
    assert {path: path.stat().st_mtime_ns for path in cache_dir.glob("*.npy")} == files
    assert set(second.fields["dictionary_cache"]) == {"hit", "none"}
    pd.testing.assert_frame_equal(second.mapping, result.mapping)


def test_per_field_thresholds_override_the_default(cache_dir: Path) -> None:
    terms = raw(("a", "ml_methods_used", "extreme gradient boosting"), ("a", "pollutant_terms", "ground-level ozone"))
    result = map_terms(terms, DICTIONARIES, cache_dir=cache_dir, thresholds={"ml_methods_used": 0.99})
    assert result.mapping["method"].tolist() == ["unmatched", "embedding"]
    assert result.fields["threshold"].tolist() == [0.99, 0.55]


def test_unmatched_terms_become_pasteable_suggestions(cache_dir: Path) -> None:
    terms = raw(
        ("a", "ml_methods_used", "graph neural network"),
        ("b", "ml_methods_used", "graph neural network"),
        ("c", "ml_methods_used", "graph neural networks (GNN)"),
        ("d", "ml_methods_used", "graph neural networks"),
        ("e", "ml_methods_used", "sourdough baking"),
    )
    result = map_terms(terms, DICTIONARIES, cache_dir=cache_dir)
    entries = yaml.safe_load(result.suggestions_yaml()["ml_methods_used"])
    assert entries == {"graph neural network": ["graph neural networks (GNN)"], "sourdough baking": []}
    assert result.suggestions["occurrences"].tolist() == [4, 1]


def test_empty_input_gives_empty_tables_without_loading_a_model(first_run, cache_dir: Path) -> None:
    encoder = Encoder(model="/nonexistent/model")
    result = map_terms(raw(), DICTIONARIES, cache_dir=cache_dir, encoder=encoder)
    assert encoder.encoded == 0
    for table in (result.mapping, result.unmatched, result.suggestions, result.fields, result.conflicts):
        assert table.empty and len(table.columns) > 0
    assert result.mapping.dtypes.to_dict() == first_run[0].mapping.dtypes.to_dict()


def test_sample_keywords_map_onto_the_shipped_dictionaries(cache_dir: Path) -> None:
    """Keywords of the bundled sample articles against config/dictionaries."""
    terms = raw(
        ("s1", "pollutant_terms", "nitrogen dioxide"),
        ("s2", "pollutant_terms", "dióxido de nitrógeno"),
        ("s3", "health_outcome", "ischaemic stroke"),
        ("s4", "ml_methods_used", "bosques aleatorios"),
        ("s5", "ml_methods_used", "neural networks"),
        ("s6", "ml_methods_used", "CNN-LSTM"),
        ("s7", "geography", "atrial fibrillation"),
    )
    result = map_terms(terms, load_dictionaries(), cache_dir=cache_dir)
    mapping = result.mapping.set_index("raw_term")
    assert mapping.loc["nitrogen dioxide", ["canonical", "method"]].tolist() == ["NO2", "exact"]
    assert mapping.loc["dióxido de nitrógeno", "canonical"] == "NO2"
    assert mapping.loc["ischaemic stroke", "canonical"] == "stroke"
    assert mapping.loc["bosques aleatorios", "canonical"] == "random forest"
    assert mapping.loc["neural networks", ["canonical", "method"]].tolist() == ["neural network", "normalized"]
    assert mapping.loc["CNN-LSTM", ["canonical", "method"]].tolist() == ["long short-term memory network", "embedding"]
    assert mapping.loc["atrial fibrillation", "method"] == "unmatched"
    assert result.conflicts.empty
