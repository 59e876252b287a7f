"""deduped_corpus on the sample: exactly the works the snapshot was written with."""

from __future__ import annotations

import json

import pandas as pd
from aiohttp import web
from dagster import DagsterInstance, materialize

from hysem_assets.defs.acquisition import CHECKS, deduped_corpus, raw_metadata_assets
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import build_resources
from hysem_assets.mirror.server import MirrorServer, default_snapshot_dir
from hysem_assets.settings.environment import asset_file
from hysem_assets_tests.acquisition.helpers import SAMPLE, write_profile

TRUTH = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))


def run_corpus(instance: DagsterInstance, run_config: dict | None = None):
    instance.add_dynamic_partitions(queries_partitions.name, [SAMPLE])
    return materialize(
        [*raw_metadata_assets, deduped_corpus],
        instance=instance,
        resources=build_resources(),
        partition_key=SAMPLE,
        run_config=run_config,
    )


def test_sample_corpus_has_exactly_the_true_works_and_passes_its_checks():
    with DagsterInstance.ephemeral() as instance:
        result = run_corpus(instance)
    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE))
    assert len(corpus) == TRUTH["unique_works"]
    expected = {frozenset(f"{r['source']}:{r['source_id']}" for r in work["records"]) for work in TRUTH["works"]}
    assert {frozenset(ids) for ids in corpus["record_ids"]} == expected
    assert int((corpus["sources"].map(len) > 1).sum()) == TRUTH["multi_source_works"]
    for record_ids, evidence in zip(corpus["record_ids"], corpus["merge_evidence"].map(json.loads)):
        linked = {record_id for link in evidence for record_id in (link["record_id_a"], link["record_id_b"])}
        assert linked == (set(record_ids) if len(record_ids) > 1 else set())
        assert all(link["rule"] and link["evidence"] for link in evidence)
    checks = {
        e.check_name: e.passed for e in result.get_asset_check_evaluations() if e.asset_key.path == ["deduped_corpus"]
    }
    assert checks == dict.fromkeys(CHECKS, True)


def test_enrichment_backfills_without_overwriting_and_flags_retractions():
    with DagsterInstance.ephemeral() as instance:
        run_corpus(instance)
    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE)).set_index("doi", drop=False)
    provenance = corpus["provenance"].map(json.loads)
    # Citation counts come only from enrichment; every DOI known to Crossref has one.
    crossref = json.loads((default_snapshot_dir() / "crossref" / "works.json").read_text(encoding="utf-8"))
    for message in crossref:
        doi = message["DOI"].lower()
        if doi in corpus.index:
            assert corpus.loc[doi, "cited_by_count"] >= message["is-referenced-by-count"]
    # Source values keep their source as provenance; backfilled ones name the lookup.
    for doi, fields in provenance.items():
        assert fields["title"].split(":")[0] in {"pubmed", "openalex", "scopus"}
        if fields.get("abstract", "").startswith("enrichment:"):
            assert fields["abstract"] in {f"enrichment:crossref:{doi}", f"enrichment:openalex:{doi}"}
        assert fields.get("cited_by_count", f"enrichment:crossref:{doi}").startswith("enrichment:")
    retracted = set(corpus.index[corpus["is_retracted"].fillna(False).astype(bool)])
    assert retracted == set(TRUTH.get("retracted_dois", []))


def test_enrichment_can_be_switched_off():
    with DagsterInstance.ephemeral() as instance:
        result = run_corpus(instance, {"ops": {"deduped_corpus": {"config": {"enrich": False}}}})
    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE))
    assert corpus["cited_by_count"].isna().all() and len(corpus) == TRUTH["unique_works"]
    assert result.success


def test_enrichment_failures_are_listed_and_the_corpus_still_materializes(tmp_path, monkeypatch):
    @web.middleware
    async def crossref_down(request, handler):
        if request.path.startswith("/crossref/"):
            return web.Response(status=503, text="maintenance")
        return await handler(request)

    monkeypatch.setenv("HYSEM_PROFILE", str(write_profile(tmp_path / "profile.yaml", max_retries=1)))
    with MirrorServer(middlewares=[crossref_down]) as mirror:
        for source, url in mirror.base_urls.items():
            monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", url)
        with DagsterInstance.ephemeral() as instance:
            result = run_corpus(instance)
    assert result.success
    [materialization] = [
        e.materialization for e in result.get_asset_materialization_events() if e.asset_key.path == ["deduped_corpus"]
    ]
    metadata = {key: value.value for key, value in materialization.metadata.items()}
    assert metadata["enriched_from_crossref"] == 0 and metadata["crossref_failures"] == metadata["with_doi"]
    assert metadata["enriched_from_openalex"] > 0
    corpus = pd.read_parquet(asset_file("deduped_corpus", SAMPLE))
    # OpenAlex still says which work is retracted.
    assert set(corpus.loc[corpus["is_retracted"].astype(bool), "doi"]) == set(TRUTH["retracted_dois"])
