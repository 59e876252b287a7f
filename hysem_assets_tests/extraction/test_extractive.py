"""The embedded extractive backend on the sample abstracts with the sample protocol, offline, through the whole path."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from hysem_assets.extraction.backends import build_backend
from hysem_assets.extraction.documents import Document, extract_documents_sync
from hysem_assets.llm.completion import LLMError
from hysem_assets.settings.dictionaries import load_dictionary
from hysem_assets.settings.environment import config_dir
from hysem_assets.settings.protocols import load_protocol
from hysem_assets_tests.paths import PROJECT_ROOT

ARTICLES = {
    a["id"]: a
    for a in yaml.safe_load((PROJECT_ROOT / "hysem_assets/sample/articles.yaml").read_text(encoding="utf-8"))[
        "articles"
    ]
}


def sample_document(work_id: str) -> Document:
    article = ARTICLES[work_id]
    abstract = "\n\n".join(f"{label}: {text}" for label, text in article["abstract"].items())
    return Document(work_id, f"{article['title']}\n\n{abstract}", {"title": article["title"]})


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def test_canonical_terms_numbers_and_sentences_from_sample_abstracts(offline: None, tmp_path: Path):
    documents = [sample_document(work) for work in ("w01", "w02", "w23")]
    protocol = load_protocol("pollution-cardio-ml")
    backend = build_backend({"backend": "extractive", "cache_dir": tmp_path}, protocol=protocol)
    results = extract_documents_sync(documents, protocol.extraction_fields(), backend)
    w01, w02, w23 = (result.values for result in results)

    assert (w01["ml_methods_used"], w01["pollutant_terms"], w01["health_outcome"]) == (
        ["random forest"],
        ["PM2.5"],
        ["heart failure"],
    )
    assert w01["geography"] == ["Bavaria", "Europe"]  # "European limit values": matched, though not a study place
    assert w01["sample_size"] == 48213
    assert set(w02["ml_methods_used"]) == {"gradient boosting", "XGBoost"} and w02["geography"] == ["Madrid"]
    assert {"ozone", "NO2", "PM10"} <= set(w02["pollutant_terms"]) and w02["sample_size"] == 21406
    assert w23["health_outcome"] == ["out-of-hospital cardiac arrest"] and w23["geography"] == ["Kanto"]
    assert [(m["name"], m["value"], m["ci_low"], m["ci_high"]) for m in w23["metrics"]] == [
        ("R2", 0.86, None, None),
        ("odds ratio", 1.04, 1.02, 1.06),
    ]
    # a design column holds one of its categories, the canonical terms of its dictionary, never a sentence
    assert (w23["study_type"], w02["study_type"]) == ("case-crossover", "case-crossover")
    assert w01["study_type"] in load_dictionary(config_dir() / "dictionaries" / "study_type.yaml").entries
    assert backend.usage.as_metadata() == {
        "llm_requests": 3,
        "llm_cache_hits": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
    }


def test_requests_without_a_schema_are_refused():
    backend = build_backend({"backend": "extractive", "cache": False})
    with pytest.raises(LLMError, match="JSON schema"):
        asyncio.run(backend.complete([{"role": "user", "content": "What is PM2.5?"}]))
