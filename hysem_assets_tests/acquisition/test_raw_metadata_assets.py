"""raw_metadata assets end to end: sample mirror, faulty servers, missing keys."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pandas as pd
import pytest
from aiohttp import web
from dagster import AssetCheckSeverity, DagsterInstance

from hysem_assets.mirror.server import MirrorServer, default_snapshot_dir
from hysem_assets.settings.environment import asset_file
from hysem_assets_tests.acquisition.helpers import (
    SAMPLE,
    check_result,
    materialization,
    metadata_value,
    run_raw_metadata,
    write_profile,
)

TRUTH = json.loads((default_snapshot_dir() / "truth.json").read_text(encoding="utf-8"))


def test_embedded_default_fetches_the_whole_sample_through_the_mirror():
    with DagsterInstance.ephemeral() as instance:
        result = run_raw_metadata(instance, raise_on_error=True)
    for source, expected in TRUTH["expected_counts"].items():
        frame = pd.read_parquet(asset_file(f"raw_metadata/{source}", SAMPLE))
        assert len(frame) == expected, source
        assert frame["source_id"].is_unique and (frame["source"] == source).all()
        assert metadata_value(result, source, "dagster/row_count") == expected
        assert metadata_value(result, source, "failures") == 0
        assert "source_id" in metadata_value(result, source, "preview").splitlines()[0]
        assert metadata_value(result, source, "source_url").startswith("http://127.0.0.1:")
    pubmed = pd.read_parquet(asset_file("raw_metadata/pubmed", SAMPLE))
    assert pubmed["raw"].str.startswith("<Pubmed").all()
    assert pubmed["doi"].dropna().str.match(r"^10\.\d{4,}/").all()


def _faulty_middleware(counter: dict[str, int]):
    """429 bursts for OpenAlex, a malformed efetch batch, and a Scopus page that always fails."""

    @web.middleware
    async def inject(request: web.Request, handler):
        path, query = request.path, request.query
        form = await request.post() if request.method == "POST" else {}
        if path.endswith("/works"):
            counter["openalex"] += 1
            if counter["openalex"] <= 3:
                return web.Response(status=429, headers={"Retry-After": "0"}, text="slow down")
        if path.endswith("/efetch.fcgi") and form.get("retstart") == "10":
            return web.Response(text="<PubmedArticleSet><PubmedArticle><MedlineCit", content_type="text/xml")
        if path.endswith("/content/search/scopus") and query.get("start") == "10":
            return web.Response(status=500, text="internal error")
        return await handler(request)

    return inject


def test_partial_failures_keep_what_succeeded_and_are_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    profile = write_profile(tmp_path / "profile.yaml", page_size=10, max_retries=4, allow_partial_results=True)
    monkeypatch.setenv("HYSEM_PROFILE", str(profile))
    monkeypatch.setenv("SCOPUS_API_KEY", "test-key-not-logged")
    counter = {"openalex": 0}
    with MirrorServer(middlewares=[_faulty_middleware(counter)]) as mirror:
        for source in ("pubmed", "openalex", "scopus"):
            monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", mirror.base_urls[source])
        with DagsterInstance.ephemeral() as instance:
            result = run_raw_metadata(instance)
    assert result.success  # partial results are allowed: marked, checked (a warning) and kept
    counts = TRUTH["expected_counts"]
    # PubMed: the malformed second batch of 10 is lost (after a retry round), the rest kept.
    assert metadata_value(result, "pubmed", "dagster/row_count") == counts["pubmed"] - 10
    assert metadata_value(result, "pubmed", "failures") == 1
    assert metadata_value(result, "pubmed", "partial") is True
    pubmed_check = check_result(result, "pubmed")
    assert not pubmed_check.passed and pubmed_check.severity == AssetCheckSeverity.WARN
    assert metadata_value(result, "openalex", "partial") is False and check_result(result, "openalex").passed
    details = metadata_value(result, "pubmed", "failure_details")
    assert "efetch retstart=10" in details and "not valid XML" in details
    # OpenAlex: three 429s in a row are retried, nothing lost.
    assert metadata_value(result, "openalex", "dagster/row_count") == counts["openalex"]
    assert metadata_value(result, "openalex", "retries") >= 3
    # Scopus: one page of 10 fails after its retries; the key never shows.
    assert metadata_value(result, "scopus", "dagster/row_count") == counts["scopus"] - 10
    scopus_details = metadata_value(result, "scopus", "failure_details")
    assert "search start=10" in scopus_details and "HTTP 500" in scopus_details
    all_metadata = json.dumps(
        {s: {k: str(v.value) for k, v in materialization(result, s).metadata.items()} for s in counts}
    )
    assert "test-key-not-logged" not in all_metadata


def test_a_source_that_returns_nothing_fails_its_step_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    async def stall(request: web.Request) -> web.Response:
        await asyncio.sleep(3)
        return web.Response(text="too late")

    monkeypatch.setenv(
        "HYSEM_PROFILE", str(write_profile(tmp_path / "profile.yaml", max_retries=1, read_timeout_s=0.3))
    )
    with MirrorServer(middlewares=[_stall_openalex(stall)]) as mirror:
        for source in ("pubmed", "openalex", "scopus"):
            monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", mirror.base_urls[source])
        with DagsterInstance.ephemeral() as instance:
            result = run_raw_metadata(instance)
            failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert not result.success
    [failure] = failures
    assert failure.step_key == "raw_metadata__openalex"
    message = failure.event_specific_data.error.message
    assert "openalex returned no records" in message and "works page 1" in message and "Timeout" in message
    # The other sources still materialized; Scopus without a key is skipped, not failed.
    assert metadata_value(result, "pubmed", "dagster/row_count") == TRUTH["expected_counts"]["pubmed"]
    assert metadata_value(result, "scopus", "dagster/row_count") == 0
    assert "SCOPUS_API_KEY" in metadata_value(result, "scopus", "skipped")


def _stall_openalex(stall):
    @web.middleware
    async def inject(request: web.Request, handler):
        return await (stall(request) if request.path.endswith("/works") else handler(request))

    return inject


def _bad_values_middleware():
    """OpenAlex page 1 gains a work dated 10**20; page 2 answers with ``meta`` as a list."""

    @web.middleware
    async def inject(request: web.Request, handler):
        response = await handler(request)
        if not (request.path.endswith("/works") and "search" in request.query):
            return response
        page = json.loads(response.body)
        if request.query.get("cursor") == "*":
            page["results"].append({"id": "https://openalex.org/W999", "title": "Absurd", "publication_year": 10**20})
        else:
            page["meta"] = [page["meta"]]
        return web.json_response(page)

    return inject


def test_bad_upstream_values_reject_the_record_or_page_not_the_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    profile = write_profile(tmp_path / "profile.yaml", page_size=10, max_retries=0, allow_partial_results=True)
    monkeypatch.setenv("HYSEM_PROFILE", str(profile))
    with MirrorServer(middlewares=[_bad_values_middleware()]) as mirror:
        for source in ("pubmed", "openalex", "scopus"):
            monkeypatch.setenv(f"HYSEM_{source.upper()}_URL", mirror.base_urls[source])
        with DagsterInstance.ephemeral() as instance:
            result = run_raw_metadata(instance)
    assert result.success, "a bad record or page must not fail the whole source"
    assert metadata_value(result, "openalex", "dagster/row_count") == 10  # page 1 kept, the walk stopped at page 2
    assert metadata_value(result, "openalex", "rejected_records") == 1
    rejected = metadata_value(result, "openalex", "rejected_details")
    assert "W999" in rejected and "publication_year 100000…(21 digits) is not a publication year" in rejected
    assert "works page 2" in metadata_value(result, "openalex", "failure_details")
    assert "'meta' is list, not an object" in metadata_value(result, "openalex", "failure_details")
    assert metadata_value(result, "openalex", "partial") is True
