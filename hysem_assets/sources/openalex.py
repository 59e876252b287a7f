"""OpenAlex works search with cursor paging (200 per page), in the polite pool."""

from __future__ import annotations

from hysem_assets.net.http import HttpClient
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, no_progress, walk_cursor
from hysem_assets.sources.errors import UnexpectedReply, reply_json
from hysem_assets.sources.lookups import polite_params
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
    """Every work of the search, up to ``max_records``, following ``next_cursor`` (see :func:`walk_cursor`)."""
    params = search_params(spec, endpoint, window)

    async def read_page(cursor: str, where: str) -> WorksPage:
        _, body = await client.request(f"{endpoint.base_url}/works", params={**params, "cursor": cursor})
        return parse_works_page(body, where=where)

    outcome = FetchOutcome(source="openalex", stats=client.stats)
    return await walk_cursor(outcome, read_page, spec.max_records, _page_where, progress)


def _page_where(number: int) -> str:
    return f"works page {number}"


async def probe_openalex(client: HttpClient, endpoint: Endpoint) -> str:
    """A one-work search: does the service search, and with the key?"""
    params = {"search": "review", "per-page": 1, **polite_params(endpoint)}
    _, body = await client.request(f"{endpoint.base_url}/works", params=params)
    if not isinstance(reply_json(body).get("results"), list):
        raise UnexpectedReply("answered without a list of works")
    return "searches" + (", with the API key" if endpoint.api_key else "")
