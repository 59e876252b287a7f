"""OpenAlex works search with cursor paging (200 per page), in the polite pool."""

from __future__ import annotations

from hysem_assets.net.http import FetchError, HttpClient
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, fetch_pages, no_progress
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.openalex_json import WorksPage, parse_works_page

MAX_PER_PAGE = 200


def search_params(spec: QuerySpec, endpoint: Endpoint, window: EntryWindow | None = None) -> dict[str, str]:
    """The query text is OpenAlex ``search``; dates become publication-date filters, and a re-search's
    window creation-date filters (when OpenAlex added the work; updates alone would return works
    whose citation counts changed)."""
    params = {"search": spec.text_for("openalex"), "per-page": str(min(MAX_PER_PAGE, endpoint.page_size))}
    filters = []
    if spec.date_from:
        filters.append(f"from_publication_date:{spec.date_from.isoformat()}")
    if spec.date_to:
        filters.append(f"to_publication_date:{spec.date_to.isoformat()}")
    if window is not None:
        filters.append(f"from_created_date:{window.since.isoformat()}")
        filters.append(f"to_created_date:{window.until.isoformat()}")
    if filters:
        params["filter"] = ",".join(filters)
    if endpoint.mailto:
        params["mailto"] = endpoint.mailto
    if endpoint.api_key:
        params["api_key"] = endpoint.api_key
    return params


async def fetch_openalex(
    client: HttpClient,
    endpoint: Endpoint,
    spec: QuerySpec,
    progress: ProgressCallback = no_progress,
    window: EntryWindow | None = None,
) -> FetchOutcome:
    """Follow ``next_cursor`` until the results end or ``max_records`` is reached.

    Cursor pages are sequential by nature: a page that fails is requested again at
    once, and if it still fails the walk ends there; what came before it is kept and
    the failure says where it stopped.
    """
    outcome = FetchOutcome(source="openalex", stats=client.stats)
    params = search_params(spec, endpoint, window)
    pages: dict[str, WorksPage] = {}
    cursor, page_number = "*", 1

    async def fetch_page(cursor: str) -> Exception | None:
        try:
            _, body = await client.request(f"{endpoint.base_url}/works", params={**params, "cursor": cursor})
            pages[cursor] = parse_works_page(body, where=_page_where(page_number))
        except (FetchError, SourceFormatError) as exc:
            return exc
        return None

    while cursor and len(outcome.records) < spec.max_records:
        failed = await fetch_pages([cursor], fetch_page)
        if failed:
            outcome.fail(_page_where(page_number), failed[cursor])
            break
        page = pages.pop(cursor)
        outcome.total_available = page.count if page.count is not None else outcome.total_available
        outcome.reject_records(_page_where(page_number), page.failures)
        outcome.records.extend(page.records[: spec.max_records - len(outcome.records)])
        progress(len(outcome.records), outcome.expected(spec.max_records))
        cursor = page.next_cursor if page.records else None
        page_number += 1
    return outcome


def _page_where(number: int) -> str:
    return f"works page {number}"
