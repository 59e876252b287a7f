from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.settings import ProfileError, load_profile
from hysem_assets.sources.endpoints import needs_mirror, resolve_endpoint


def test_local_profile_uses_the_mirror_and_gpu_profile_the_public_apis():
    local, gpu = load_profile("local"), load_profile("gpu")
    assert local.mirror and not gpu.mirror
    mirror = {"pubmed": "http://127.0.0.1:9/pubmed/entrez/eutils"}
    assert resolve_endpoint("pubmed", local, mirror_urls=mirror).base_url == mirror["pubmed"]
    assert resolve_endpoint("pubmed", gpu).base_url == "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"


def test_environment_overrides_profile_and_mirror(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HYSEM_OPENALEX_URL", "http://127.0.0.1:1234/")
    for name in ("local", "gpu"):
        assert resolve_endpoint("openalex", load_profile(name), mirror_urls={"openalex": "http://m"}).base_url == "http://127.0.0.1:1234"
    assert needs_mirror(load_profile("local"), ["openalex"]) is False
    assert needs_mirror(load_profile("local"), ["openalex", "pubmed"]) is True


def test_api_key_raises_ncbi_rate_and_never_shows_in_repr(monkeypatch: pytest.MonkeyPatch):
    gpu = load_profile("gpu")
    assert resolve_endpoint("pubmed", gpu).requests_per_second == 3
    monkeypatch.setenv("NCBI_API_KEY", "top-secret-key")
    monkeypatch.setenv("HYSEM_MAILTO", "team@example.org")
    endpoint = resolve_endpoint("pubmed", gpu)
    assert endpoint.requests_per_second == 10 and endpoint.api_key == "top-secret-key"
    assert "top-secret-key" not in repr(endpoint) and endpoint.mailto == "team@example.org"
    assert resolve_endpoint("pubmed", gpu, declared_mailto="query@example.org").mailto == "query@example.org"


def test_profile_selected_by_environment_and_errors_are_clear(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("HYSEM_PROFILE", "gpu")
    assert load_profile().name == "gpu"
    monkeypatch.setenv("HYSEM_PROFILE", "nope")
    with pytest.raises(ProfileError, match=r"nope.yaml does not exist.*\['gpu', 'local'\]"):
        load_profile()
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nsources:\n  pubmed:\n    requests_per_second: -1\n")
    with pytest.raises(ProfileError, match="(?s)bad.yaml is invalid.*requests_per_second"):
        load_profile(str(bad))


@pytest.mark.parametrize("profile", ["local", "gpu"])
def test_every_asset_section_of_the_bundled_profiles_is_valid(profile: str):
    from hysem_assets.extraction.assets import ExtractionSettings
    from hysem_assets.llm import parse_backend_config
    from hysem_assets.parsing.assets import ParsingSettings
    from hysem_assets.qa import QASettings
    from hysem_assets.retrieval.settings import VectorIndexSettings
    from hysem_assets.stores.settings import GraphSettings
    from hysem_assets.terms.assets import TermsSettings
    from hysem_assets.topics.assets import TopicsPlacement

    loaded = load_profile(profile)
    models = {
        "parsed_docs": ParsingSettings, "extracted_fields": ExtractionSettings, "topics": TopicsPlacement,
        "canonical_terms": TermsSettings, "vector_index": VectorIndexSettings, "knowledge_graph": GraphSettings,
        "answers": QASettings,
    }
    assert set(loaded.assets) == set(models)
    for name, model in models.items():
        settings = loaded.asset_settings(name, model)
        for role in ("llm", "generator", "auditor", "cypher"):
            config = getattr(settings, role, None)
            if config and config.get("backend") not in ("extractive", "rules"):
                parse_backend_config(config)
    if profile == "gpu":
        assert loaded.asset_settings("parsed_docs", ParsingSettings).devices == ["cuda:0", "cuda:1"]
