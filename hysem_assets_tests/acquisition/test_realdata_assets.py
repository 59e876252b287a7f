"""The assets on real third-party responses, served by other servers on loopback.

PubMed: the mirror serving a snapshot made of real efetch files (linked, not copied).
OpenAlex: a server that replays real /works pages byte for byte, following their cursors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from aiohttp import web
from dagster import DagsterInstance

from hysem_assets.mirror.server import MirrorServer
from hysem_assets.settings.environment import asset_file
from hysem_assets_tests.acquisition.helpers import metadata_value, run_raw_metadata, write_profile
from hysem_assets_tests.local_server import ThreadedServer

QUERY = "realdata"


def replay_openalex_app(pages: list[Path]) -> web.Application:
    """Serve ``pages`` in order: cursor ``*`` is the first, each page's next_cursor leads to the next."""
    by_cursor: dict[str, bytes] = {}
    cursor = "*"
    for page in pages:
        body = page.read_bytes()
        by_cursor[cursor] = body
        cursor = json.loads(body)["meta"]["next_cursor"]

    async def works(request: web.Request) -> web.Response:
        body = by_cursor.get(request.query.get("cursor", ""))
        if body is None:
            return web.json_response({"error": "Invalid query parameters error.", "message": "bad cursor"}, status=400)
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/works", works)
    return app


@pytest.fixture
def realdata_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "queries.yaml").write_text(
        f"queries:\n  - slug: {QUERY}\n    query: anything\n    sources: [pubmed, openalex]\n"
    )
    monkeypatch.setenv("HYSEM_CONFIG_DIR", str(config))
    monkeypatch.setenv("HYSEM_PROFILE", str(write_profile(tmp_path / "profile.yaml", page_size=25)))


def test_assets_hold_correct_rows_from_real_responses(realdata: Path, realdata_query, tmp_path: Path, monkeypatch):
    snapshot = tmp_path / "snapshot" / "pubmed"
    snapshot.mkdir(parents=True)
    efetch_files = sorted((realdata / "pubmed_metapub_efetch").glob("*.xml"))
    for path in efetch_files:
        (snapshot / path.name).symlink_to(path)
    # the query these records answer: the mirror returns all of them for it, whatever their text
    (snapshot.parent / "harvest.yaml").write_text("pubmed: anything\n", encoding="utf-8")
    pages = [realdata / "openalex" / "openalexPro" / f"json_chunk_1_results_page_{n}.json" for n in (1, 2)]

    replay = ThreadedServer(replay_openalex_app(pages))
    try:
        with MirrorServer(snapshot.parent) as mirror:
            monkeypatch.setenv("HYSEM_PUBMED_URL", mirror.base_urls["pubmed"])
            monkeypatch.setenv("HYSEM_OPENALEX_URL", replay.url)
            expected_pmids = sorted(mirror.snapshot.pubmed)
            with DagsterInstance.ephemeral() as instance:
                result = run_raw_metadata(instance, partition=QUERY, raise_on_error=True)
    finally:
        replay.close()

    pubmed = pd.read_parquet(asset_file("raw_metadata/pubmed", QUERY)).set_index("source_id")
    assert sorted(pubmed.index) == expected_pmids and len(pubmed) >= len(efetch_files) - 1
    assert metadata_value(result, "pubmed", "failures") == 0
    # Values read from the XML by hand.
    assert pubmed.loc["38833988", "item_type"] == "erratum"
    assert pubmed.loc["38962805", "item_type"] == "erratum"
    assert (pubmed["pmid"] == pubmed.index).all()
    assert pubmed["title"].notna().all() and pubmed["year"].notna().all()

    openalex = pd.read_parquet(asset_file("raw_metadata/openalex", QUERY))
    first_page = json.loads(pages[0].read_text())["results"]
    assert len(openalex) == len(first_page) == 50
    assert metadata_value(result, "openalex", "total_available") == 50
    assert list(openalex["openalex_id"]) == [w["id"].rsplit("/", 1)[-1] for w in first_page]
    assert list(openalex["year"]) == [w["publication_year"] for w in first_page]
    with_abstract = [w for w in first_page if w.get("abstract_inverted_index")]
    assert openalex["abstract"].notna().sum() == len(with_abstract)
