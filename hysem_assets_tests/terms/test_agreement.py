"""Extraction, canonical terms, graph mentions and the QA parser agree on what a term is.

Each phrase (a variant, plural, abbreviation or ordinary word) goes through each
component's own entry point with the same small dictionaries; all four must name the same
canonical term, or none. They once used three rule sets and disagreed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.knowledge.fields import chunk_mentions
from hysem_assets.qa.engine import term_spellings
from hysem_assets.qa.terms import entity_matchers, recognise_terms
from hysem_assets.settings.dictionaries import load_dictionaries
from hysem_assets.settings.protocols import load_protocol, load_protocols, read_protocol
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets.terms.mapping import map_terms

DICTIONARIES = {
    "ml_methods_used": (
        "random forest: [RF]\n"
        "XGBoost: [extreme gradient boosting]\n"
        "long short-term memory network: [LSTM, long short-term memory]\n"
    ),
    "pollutant_terms": "PM2.5: [fine particulate matter]\nNO2: [nitrogen dioxide]\nnitric oxide: ['NO']\n",
    "health_outcome": "heart failure: []\n",
}

#: (field, phrase, canonical term or None)
PHRASES = [
    ("ml_methods_used", "Random Forests", "random forest"),
    ("ml_methods_used", "random-forest", "random forest"),
    ("ml_methods_used", "RandomForest", "random forest"),
    ("ml_methods_used", "RF", "random forest"),
    ("ml_methods_used", "rf", None),
    ("ml_methods_used", "XGBoost", "XGBoost"),
    ("ml_methods_used", "xgboost", "XGBoost"),
    ("ml_methods_used", "LSTM", "long short-term memory network"),
    ("ml_methods_used", "LSTMs", "long short-term memory network"),
    ("ml_methods_used", "long short-term memory", "long short-term memory network"),
    ("ml_methods_used", "Long Short Term Memory", "long short-term memory network"),
    ("pollutant_terms", "PM2.5", "PM2.5"),
    ("pollutant_terms", "PM 2.5", "PM2.5"),
    ("pollutant_terms", "pm2.5", "PM2.5"),
    ("pollutant_terms", "PM₂.₅", "PM2.5"),
    ("pollutant_terms", "PM2,5", "PM2.5"),
    ("pollutant_terms", "NO₂", "NO2"),
    ("pollutant_terms", "NO2", "NO2"),
    ("pollutant_terms", "NO", "nitric oxide"),
    ("pollutant_terms", "no", None),
    ("pollutant_terms", "PM25", None),
    ("health_outcome", "heart failures", "heart failure"),
    ("health_outcome", "Heart Failure", "heart failure"),
]


def sentence(phrase: str) -> str:
    return f"Which studies examined {phrase} in adults?"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("agreement")
    (folder / "dictionaries").mkdir()
    for field, text in DICTIONARIES.items():
        (folder / "dictionaries" / f"{field}.yaml").write_text(text, encoding="utf-8")
    fields = "".join(
        f"  {field}:\n    type: terms\n    description: {field}\n    dictionary: {field}\n" for field in DICTIONARIES
    )
    (folder / "protocols").mkdir()
    (folder / "protocols" / "agreement.yaml").write_text(f"fields:\n{fields}", encoding="utf-8")
    return folder


def expected() -> list[list[str]]:
    return [[canonical] if canonical else [] for _, _, canonical in PHRASES]


def test_extraction_finds_the_canonical_term(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYSEM_CONFIG_DIR", str(config))  # the protocol's dictionaries are read from there
    protocol = read_protocol(config / "protocols" / "agreement.yaml")
    backend = build_backend(
        {"backend": "extractive", "cache": False}, cache_dir=config / "llm_cache", protocol=protocol
    )
    documents = [Document(str(index), sentence(phrase)) for index, (_, phrase, _) in enumerate(PHRASES)]
    results = extract_documents_sync(documents, protocol.extraction_fields(), backend)
    assert [result.values[field] for result, (field, _, _) in zip(results, PHRASES, strict=True)] == expected()


def test_canonical_terms_map_the_phrase_without_embeddings(config: Path, tmp_path: Path) -> None:
    raw = pd.DataFrame(
        [(str(index), field, phrase) for index, (field, phrase, _) in enumerate(PHRASES)],
        columns=["doc_id", "field", "raw_term"],
    )
    mapping = map_terms(raw, load_dictionaries(config / "dictionaries"), cache_dir=tmp_path, encoder=Encoder()).mapping
    by_phrase = mapping.set_index(["field", "raw_term"])
    found = []
    for field, phrase, _ in PHRASES:
        row = by_phrase.loc[(field, phrase)]
        # Only the term matcher's steps count here; the embedding fallback is a different question.
        found.append([row["canonical"]] if row["method"] in ("exact", "normalized") else [])
    assert found == expected()


def test_graph_mentions_name_the_canonical_term(config: Path) -> None:
    schema = graph_schema(load_protocols(), load_protocol("pollution-cardio-ml"))
    spellings = {field: dict(d.spellings) for field, d in load_dictionaries(config / "dictionaries").items()}
    chunks = pd.DataFrame({"text": [sentence(phrase) for _, phrase, _ in PHRASES]})
    no_mapping = pd.DataFrame(columns=["field", "raw_term", "canonical"])
    mentions = chunk_mentions(schema, chunks, no_mapping, spellings)
    assert [found[field] for found, (field, _, _) in zip(mentions, PHRASES, strict=True)] == expected()


def test_the_question_parser_names_the_canonical_term(config: Path) -> None:
    schema = graph_schema(load_protocols(), load_protocol("pollution-cardio-ml"))
    matchers = entity_matchers(schema, term_spellings(load_dictionaries(config / "dictionaries")))
    labels = {field: label for field, (label, _) in schema.entity_fields().items()}
    found = [recognise_terms(sentence(phrase), matchers).get(labels[field], []) for field, phrase, _ in PHRASES]
    assert found == expected()
