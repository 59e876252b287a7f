"""Scopus Search API with start/count paging; needs an Elsevier API key."""

from __future__ import annotations

import datetime as dt

from hysem_assets.net.http import FetchError, HttpClient
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, fetch_pages, no_progress
from hysem_assets.sources.errors import SourceFormatError, UnexpectedReply, reply_json
from hysem_assets.sources.scopus_json import SearchPage, parse_search_page

#: Offset paging of the Search API stops at 5,000 results (start + count).
MAX_OFFSET = 5_000
MAX_COUNT = 25

SKIPPED_WITHOUT_KEY = (
    "Scopus skipped: no API key. Set SCOPUS_API_KEY (from https://dev.elsevier.com) "
    "to include Scopus records; the other sources ran as usual."
)


def search_query(spec: QuerySpec, window: EntryWindow | None = None) -> str:
    """Scopus query syntax with the date range as PUBYEAR clauses, and a re-search's window as
    ORIG-LOAD-DATE clauses (when Scopus loaded the record; AFT and BEF exclude the day named)."""
    text = spec.text_for("scopus")
    if window is not None:
        after, before = window.since - dt.timedelta(days=1), window.until + dt.timedelta(days=1)
        text = f"({text}) AND ORIG-LOAD-DATE AFT {after:%Y%m%d} AND ORIG-LOAD-DATE BEF {before:%Y%m%d}"
    if spec.date_from:
        text += f" AND PUBYEAR > {spec.date_from.year - 1}"
    if spec.date_to:
        text += f" AND PUBYEAR < {spec.date_to.year + 1}"
    return text


def request_headers(endpoint: Endpoint) -> dict[str, str]:
    return {"X-ELS-APIKey": endpoint.api_key or "", "Accept": "application/json"}


async def fetch_scopus(
    client: HttpClient,
    endpoint: Endpoint,
    spec: QuerySpec,
    progress: ProgressCallback = no_progress,
    window: EntryWindow | None = None,
) -> FetchOutcome:
    """First page for the total, then the remaining pages concurrently (each may fail alone)."""
    outcome = FetchOutcome(source="scopus", stats=client.stats)
    if not endpoint.api_key:
        outcome.skipped = SKIPPED_WITHOUT_KEY
        return outcome
    count = min(MAX_COUNT, endpoint.page_size)
    pages: dict[int, SearchPage] = {}

    async def fetch_page(start: int) -> Exception | None:
        params = {"query": search_query(spec, window), "start": str(start), "count": str(count), "view": "COMPLETE"}
        try:
            _, body = await client.request(
                f"{endpoint.base_url}/content/search/scopus", params=params, headers=request_headers(endpoint)
            )
            page = parse_search_page(body, where=_page_where(start))
        except (FetchError, SourceFormatError) as exc:
            return exc
        pages[start] = page
        outcome.reject_records(_page_where(start), page.failures)
        progress(sum(len(p.records) for p in pages.values()), outcome.expected(spec.max_records))
        return None

    failed = await fetch_pages([0], fetch_page)
    if failed:
        outcome.fail(_page_where(0), failed[0])
        return outcome
    outcome.total_available = total = pages[0].total
    wanted = min(total, spec.max_records, MAX_OFFSET)
    failed = await fetch_pages(range(count, wanted, count), fetch_page)
    for start, error in sorted(failed.items()):
        outcome.fail(_page_where(start), error)
    records = [record for start in sorted(pages) for record in pages[start].records]
    outcome.records = records[:wanted]
    return outcome


def _page_where(start: int) -> str:
    return f"search start={start}"


async def probe_scopus(client: HttpClient, endpoint: Endpoint) -> str:
    """A one-entry search: does the service take the key?"""
    params: dict[str, str | int] = {"query": "TITLE(review)", "count": 1}
    _, body = await client.request(
        f"{endpoint.base_url}/content/search/scopus", params=params, headers=request_headers(endpoint)
    )
    if "search-results" not in reply_json(body):
        raise UnexpectedReply("answered without search results")
    return "searches, with the API key"
