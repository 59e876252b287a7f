"""Europe PMC on the mirror, fetched over loopback HTTP by the production client.

A temporary snapshot holds real Europe PMC results (core, plus lite-only ones) and real JATS
full texts from the shared real data; the sample's own Europe PMC snapshot is checked against
its PubMed records.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import pytest
from aiohttp import web

from hysem_assets.mirror.search import Document, compile_query
from hysem_assets.mirror.server import MirrorServer, Snapshot, default_snapshot_dir
from hysem_assets.net.http import FetchError, HttpClient, RetryPolicy
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint, FetchOutcome
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.europepmc import fetch_europepmc, fetch_jats
from hysem_assets_tests.paths import REALDATA, needs_realdata

SEARCH = REALDATA / "europepmc" / "search"
JATS = REALDATA / "europepmc" / "jats"
#: The sample query in Europe PMC syntax (config/queries.yaml declares it for the other sources).
SAMPLE_QUERY = (
    '("air pollution" OR "particulate matter" OR ozone OR "nitrogen dioxide") '
    'AND (cardiovascular OR "heart disease" OR stroke OR hypertension) '
    'AND ("machine learning" OR "deep learning" OR "random forest")'
)
T = TypeVar("T")


def real_results() -> list[dict[str, Any]]:
    """Core results, then the lite-only ones of another search (by id, once each)."""
    results: dict[str, dict[str, Any]] = {}
    for name in ("search_cancer_core.json", "search_post_cancer.json"):
        for result in json.loads((SEARCH / name).read_text(encoding="utf-8"))["resultList"]["result"]:
            results.setdefault(f"{result['source']}:{result['id']}", result)
    return list(results.values())


@pytest.fixture(scope="module")
def snapshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SEARCH.is_dir():
        pytest.skip(f"real third-party data not found at {SEARCH}")
    root = tmp_path_factory.mktemp("epmc")
    (root / "europepmc").mkdir()
    (root / "europepmc" / "results.json").write_text(json.dumps(real_results()), encoding="utf-8")
    (root / "jats").mkdir()
    for path in sorted(JATS.glob("PMC*.nxml"))[:3]:
        shutil.copy(path, root / "jats" / path.name)
    (root / "jats" / "PMC999999.nxml").write_text("<html><body>Not an article</body></html>", encoding="utf-8")
    # The real engine found these records for "cancer" through full text the snapshot lacks.
    (root / "harvest.yaml").write_text("europepmc: cancer\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def mirror(snapshot_dir: Path) -> Iterator[MirrorServer]:
    with MirrorServer(snapshot_dir) as server:
        yield server


def endpoint(server: MirrorServer, page_size: int = 1000) -> Endpoint:
    return Endpoint("europepmc", server.base_urls["europepmc"], 1000, 4, page_size, mailto="test@example.org")


def with_client(work: Callable[[HttpClient], Awaitable[T]]) -> T:
    async def run() -> T:
        async with aiohttp.ClientSession() as session:
            client = HttpClient(session, requests_per_second=1000, retry=RetryPolicy(max_retries=0))
            return await work(client)

    return asyncio.run(run())


def fetch(server: MirrorServer, spec: QuerySpec, page_size: int, window: EntryWindow | None = None) -> FetchOutcome:
    return with_client(lambda client: fetch_europepmc(client, endpoint(server, page_size), spec, window=window))


def get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def search_url(server: MirrorServer, **params: str) -> str:
    return f"{server.base_urls['europepmc']}/search?{urllib.parse.urlencode({'format': 'json', **params})}"


@needs_realdata
def test_paging_with_a_small_page_size_returns_every_record_once(mirror: MirrorServer) -> None:
    expected = [f"{r['source']}:{r['id']}" for r in real_results()]
    seen: list[tuple[int, int | None]] = []

    async def work(client: HttpClient) -> FetchOutcome:
        spec = QuerySpec(slug="cancer", query="cancer", date_from="2000-01-01")
        outcome = await fetch_europepmc(
            client, endpoint(mirror, 7), spec, lambda done, total: seen.append((done, total))
        )
        assert client.stats.requests == math.ceil(len(expected) / 7)  # no request past the last page
        return outcome

    outcome = with_client(work)
    assert not outcome.partial and not outcome.rejected
    assert [record["source_id"] for record in outcome.records] == expected
    assert outcome.total_available == len(expected)
    assert seen[-1] == (len(expected), len(expected))


@needs_realdata
def test_max_records_stops_the_walk(mirror: MirrorServer) -> None:
    outcome = fetch(mirror, QuerySpec(slug="cancer", query="cancer", max_records=10), page_size=4)
    assert len(outcome.records) == 10 and outcome.total_available == len(real_results())


@needs_realdata
def test_a_window_returns_only_the_records_first_indexed_in_it(mirror: MirrorServer) -> None:
    since, until = dt.date(2025, 6, 11), dt.date(2025, 6, 16)
    expected = [
        f"{r['source']}:{r['id']}"
        for r in real_results()
        if since <= dt.date.fromisoformat(r["firstIndexDate"]) <= until
    ]
    assert 0 < len(expected) < len(real_results())
    outcome = fetch(mirror, QuerySpec(slug="cancer", query="cancer"), page_size=3, window=EntryWindow(since, until))
    assert [record["source_id"] for record in outcome.records] == expected
    assert outcome.total_available == len(expected)


@needs_realdata
def test_the_query_is_evaluated_against_titles(mirror: MirrorServer, snapshot_dir: Path) -> None:
    wanted = [r for r in real_results() if "screening" in r["title"].lower()]
    outcome = fetch(mirror, QuerySpec(slug="q", query="TITLE:screening"), page_size=25)
    assert wanted and [record["source_id"] for record in outcome.records] == [
        f"{r['source']}:{r['id']}" for r in wanted
    ]
    nothing = get_json(search_url(mirror, query="TITLE:zzzunheardofword", resultType="core"))
    no_results = json.loads((SEARCH / "search_no_results.json").read_text(encoding="utf-8"))
    assert set(nothing) == set(no_results) and nothing["hitCount"] == 0 and nothing["resultList"] == {"result": []}


@needs_realdata
def test_pages_carry_hit_count_and_the_next_cursor_as_the_api_does(mirror: MirrorServer) -> None:
    first = get_json(search_url(mirror, query="cancer", resultType="lite", pageSize="5", cursorMark="*"))
    assert first["hitCount"] == len(real_results()) and len(first["resultList"]["result"]) == 5
    assert "abstractText" not in first["resultList"]["result"][0] and "journalTitle" in first["resultList"]["result"][0]
    second = get_json(
        search_url(mirror, query="cancer", resultType="idlist", pageSize="5", cursorMark=first["nextCursorMark"])
    )
    assert set(second["resultList"]["result"][0]) <= {"id", "source", "pmid", "pmcid", "fullTextIdList"}
    assert second["nextCursorMark"] != first["nextCursorMark"]
    ids = [r["id"] for r in first["resultList"]["result"] + second["resultList"]["result"]]
    assert len(set(ids)) == 10
    with pytest.raises(urllib.error.HTTPError) as caught:
        get_json(search_url(mirror, query="cancer", cursorMark="not-a-cursor"))
    assert caught.value.code == 400


@needs_realdata
def test_a_failing_page_is_retried_once_then_recorded_as_a_failure(snapshot_dir: Path) -> None:
    calls: list[str] = []

    @web.middleware
    async def second_page_fails(request: web.Request, handler):
        if request.path.endswith("/search") and request.query.get("cursorMark") != "*":
            calls.append(request.query["cursorMark"])
            return web.Response(status=500, text="boom")
        return await handler(request)

    with MirrorServer(snapshot_dir, middlewares=[second_page_fails]) as server:
        outcome = fetch(server, QuerySpec(slug="cancer", query="cancer"), page_size=10)
    assert outcome.partial and len(calls) == 2 and len(set(calls)) == 1
    assert [failure.where for failure in outcome.failures] == ["search page 2"]
    assert "HTTP 500" in outcome.failures[0].reason
    assert len(outcome.records) == 10


@needs_realdata
def test_fetch_jats_returns_the_full_text_and_a_404_raises(mirror: MirrorServer, snapshot_dir: Path) -> None:
    path = sorted((snapshot_dir / "jats").glob("PMC*.nxml"))[0]
    body = with_client(lambda client: fetch_jats(client, endpoint(mirror), path.stem))
    assert body == (JATS / path.name).read_bytes()
    with pytest.raises(FetchError) as caught:
        with_client(lambda client: fetch_jats(client, endpoint(mirror), "PMC1"))
    assert caught.value.status == 404
    with pytest.raises(SourceFormatError, match="not a JATS <article>"):
        with_client(lambda client: fetch_jats(client, endpoint(mirror), "PMC999999"))
    with urllib.request.urlopen(f"{mirror.base_urls['europepmc']}/{path.stem}/fullTextXML", timeout=30) as response:
        assert response.headers["Content-Type"].startswith("application/xml")


def test_the_sample_search_finds_only_works_pubmed_holds() -> None:
    sample = Snapshot.load(default_snapshot_dir())
    with MirrorServer(default_snapshot_dir()) as server:
        spec = QuerySpec(
            slug="air-pollution-cardio-ml", query=SAMPLE_QUERY, date_from="2015-01-01", date_to="2025-12-31"
        )
        outcome = fetch(server, spec, page_size=10)
    pmids = {record["pmid"] for record in outcome.records}
    assert not outcome.partial and outcome.records
    assert pmids <= set(sample.pubmed)
    assert all(record["source_id"] == f"MED:{record['pmid']}" for record in outcome.records)


def test_the_europepmc_query_syntax() -> None:
    record = Document.build(
        title="Ozone and stroke",
        abstract="Random forest models of nitrogen dioxide.",
        keywords=["air quality"],
        mesh=["Air Pollution"],
        authors=["Smith Anna A"],
        journal="Stroke Res",
        types=["Journal Article"],
    )

    def selects(query: str) -> bool:
        return compile_query(query, "europepmc").matches(record)

    assert selects('TITLE:ozone AND ABSTRACT:"random forest"')
    assert not selects("ABSTRACT:ozone") and not selects('TITLE:"random forest"')
    assert selects('(ozone OR particulate) AND NOT "deep learning"') and not selects("ozone NOT stroke")
    assert selects("TITLE_ABS:(dioxide AND stroke)") and selects('KW:"air pollution"') and selects("AUTH:smith")
    assert selects("ozone FIRST_PDATE:[2020-01-01 TO 2020-12-31] SRC:MED") and not selects("asthma SRC:MED")
    assert selects("ozone AND FIRST_IDATE:[2024-01-01 TO 2024-01-31]")  # evaluated by the server, not here
    assert selects('PUB_TYPE:"journal article"') and not selects("PUB_TYPE:review")


def test_the_sample_europepmc_snapshot_holds_the_pubmed_records_indexed_after_their_entry() -> None:
    """(``test_sample_snapshot`` checks that the generator reproduces the file.)"""
    results = json.loads((default_snapshot_dir() / "europepmc" / "works.json").read_text(encoding="utf-8"))
    sample = Snapshot.load(default_snapshot_dir())
    assert sorted(r["pmid"] for r in results) == sorted(sample.pubmed)
    for result in results:  # created on the Entrez date, indexed the day after
        entered = sample.added_on["edat"].get(result["pmid"])
        created = dt.date.fromisoformat(result["dateOfCreation"])
        assert entered in (None, created)
        assert dt.date.fromisoformat(result["firstIndexDate"]) == created + dt.timedelta(days=1)
