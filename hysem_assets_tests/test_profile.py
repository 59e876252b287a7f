from __future__ import annotations

from pathlib import Path

import pytest

from hysem_assets.defs.resources import build_resources
from hysem_assets.settings.profile import ProfileError, load_profile
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
        assert (
            resolve_endpoint("openalex", load_profile(name), mirror_urls={"openalex": "http://m"}).base_url
            == "http://127.0.0.1:1234"
        )
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
    with pytest.raises(ProfileError, match=r"nope.yaml does not exist.*\['gpu', 'local', 'online'\]"):
        load_profile()
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nsources:\n  pubmed:\n    requests_per_second: -1\n")
    with pytest.raises(ProfileError, match="(?s)bad.yaml is invalid.*requests_per_second"):
        load_profile(str(bad))


def test_a_misspelled_key_names_the_file_the_key_and_the_allowed_keys(tmp_path: Path):
    bad = tmp_path / "typo.yaml"
    bad.write_text("name: typo\nassets:\n  vector_index:\n    modle: all-mpnet-base-v2\n  answerz: {}\n")
    with pytest.raises(ProfileError) as raised:
        load_profile(str(bad))
    message = str(raised.value)
    assert str(bad) in message
    assert "unknown key `assets.vector_index.modle` (allowed here: batch_size, collection, device," in message
    assert "unknown key `assets.answerz` (allowed here: answers, canonical_terms, extracted_fields," in message
    listed = tmp_path / "list.yaml"
    listed.write_text("- name: x\n")
    with pytest.raises(ProfileError, match="must be a mapping"):
        load_profile(str(listed))


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        (
            "extracted_fields:\n    llm: {backend: extractive, sentencez: 3}",
            "`assets.extracted_fields.llm`: Value error, unknown key `sentencez` for backend 'extractive' "
            "(allowed: backend, cache, cache_dir, device,",
        ),
        (
            "answers:\n    generator: {backend: vllm, model: m, temprature: 0.2}",
            "unknown key `temprature` for backend 'vllm' (allowed: api_key_env, backend, backoff_base_s,",
        ),
        (
            "answers:\n    auditor: {backend: extractive}",
            "`assets.answers.auditor`: Value error, `backend` must be one of openai, rules, vllm, vllm_inproc "
            "(got 'extractive')",
        ),
        ("answers:\n    router: {backend: openai}", "`model`: Field required"),
        ("topics:\n    llm: {backend: rules}", "`backend` must be one of openai, vllm, vllm_inproc (got 'rules')"),
        ("answers:\n    generator: {backend: [vllm]}", "`backend` must be one of extractive, openai, vllm,"),
        (
            "answers:\n    cypher: {backend: vllm, model: m, params: {temprature: 0.2}}",
            "unknown key `params.temprature` for backend 'vllm' (allowed: max_tokens, seed, temperature, top_p)",
        ),
    ],
)
def test_a_model_section_is_checked_against_its_backends_own_keys(tmp_path: Path, section: str, expected: str):
    bad = tmp_path / "models.yaml"
    bad.write_text(f"name: models\nassets:\n  {section}\n")
    with pytest.raises(ProfileError) as raised:
        load_profile(str(bad))
    assert str(bad) in str(raised.value)
    assert expected in str(raised.value)


@pytest.mark.parametrize("profile", ["local", "online", "gpu"])
def test_every_section_of_the_bundled_profiles_builds_its_resource(profile: str):
    from hysem_assets.settings.backends import parse_backend_config

    resources = build_resources(load_profile(profile))
    assert set(resources) == {
        "io_manager", "scholarly_apis", "pdf_fetcher", "screener", "pdf_parser", "field_extractor", "topic_modeller",
        "term_unifier", "chunk_store", "graph_database", "answer_models", "review_config",
    }  # fmt: skip
    for resource in resources.values():
        settings = getattr(resource, "settings", None)
        for role in ("llm", "generator", "auditor", "cypher"):
            config = getattr(settings, role, None)
            if config and config.get("backend") not in ("extractive", "rules"):
                parse_backend_config(config)
    assert resources["screener"].settings.undecided_top_share == (1.0 if profile == "local" else 0.2)
    if profile == "gpu":
        assert resources["pdf_parser"].settings.devices == ["cuda:0", "cuda:1"]
        assert resources["graph_database"].settings.backend == "neo4j"


def test_the_online_profile_reads_the_public_apis_on_the_embedded_stores_without_a_model(
    monkeypatch: pytest.MonkeyPatch,
):
    for variable in ("HYSEM_LLM_URL", "HYSEM_LLM_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    online = load_profile("online")
    assert not online.mirror and resolve_endpoint("crossref", online).base_url == "https://api.crossref.org"
    assert resolve_endpoint("pubmed", online).requests_per_second == 3  # NCBI's polite limit without a key
    assets = online.assets
    assert (assets.knowledge_graph.backend, assets.vector_index.url, assets.parsed_docs.devices) == (
        "ladybug",
        None,
        [],
    )
    assert assets.extracted_fields.llm["backend"] == "extractive" and assets.answers.auditor == {"backend": "rules"}
    assert assets.topics.llm is None and assets.answers.router is None


def test_a_model_endpoint_in_the_environment_serves_the_roles_the_profile_lists(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HYSEM_LLM_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("HYSEM_LLM_MODEL", "qwen2.5:7b-instruct")
    assets = load_profile("online").assets
    served = [assets.extracted_fields.llm, assets.topics.llm, assets.answers.generator, assets.answers.auditor]
    for config in [*served, assets.answers.router]:
        assert config["backend"] == "openai" and config["model"] == "qwen2.5:7b-instruct"
        assert config["base_url_env"] == "HYSEM_LLM_URL" and config["structured_output"] == "json_schema"
    assert assets.answers.cypher is None  # not in `serves`: Cypher stays with the templates
    assert load_profile("local").assets.extracted_fields.llm["backend"] == "extractive"  # no endpoint section
    monkeypatch.delenv("HYSEM_LLM_MODEL")
    with pytest.raises(ProfileError, match="HYSEM_LLM_URL names a model server but HYSEM_LLM_MODEL is not set"):
        load_profile("online")
