"""Europe PMC: ``/search`` with cursorMark paging (``resultType=core``), and JATS full texts.

Searches go to ``{base}/search`` and a full text to ``{base}/{PMCID}/fullTextXML`` (the base URL
is the source registry's).

Dates are clauses of the query itself. Publication dates become ``FIRST_PDATE:[from TO to]``
(the first of the electronic and print dates). A living review's re-search limits
``FIRST_IDATE``, the day Europe PMC first indexed the record (the ``firstIndexDate`` of every
lite and core result, "the date when the article has been first indexed in Europe PMC" in the
web service reference), not ``CREATION_DATE``: ``dateOfCreation`` is the upstream record's
creation day (a MEDLINE record's is a day or more before Europe PMC indexes it), so a window
on it could close before a record becomes searchable and miss it for good.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hysem_assets.net.http import HttpClient
from hysem_assets.settings.queries import EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, no_progress, walk_cursor
from hysem_assets.sources.errors import SourceFormatError, UnexpectedReply, reply_json
from hysem_assets.sources.europepmc_json import SOURCE, SearchPage, parse_search_page, pmcid_of

#: Europe PMC serves at most 1,000 results per page.
MAX_PAGE_SIZE = 1000
#: Publication-date bounds Europe PMC accepts for an open end.
_EARLIEST, _LATEST = "1800-01-01", "3000-12-31"


def search_query(spec: QuerySpec, window: EntryWindow | None = None) -> str:
    """The query text, AND-ed with the publication-date range and the window's first-index range."""
    clauses = [f"({spec.text_for('europepmc')})"]
    if spec.date_from or spec.date_to:
        first = spec.date_from.isoformat() if spec.date_from else _EARLIEST
        last = spec.date_to.isoformat() if spec.date_to else _LATEST
        clauses.append(f"FIRST_PDATE:[{first} TO {last}]")
    if window is not None:
        clauses.append(f"FIRST_IDATE:[{window.since.isoformat()} TO {window.until.isoformat()}]")
    return " AND ".join(clauses) if len(clauses) > 1 else spec.text_for("europepmc")


def search_params(spec: QuerySpec, endpoint: Endpoint, window: EntryWindow | None = None) -> dict[str, str]:
    """Everything but the cursor: the query, core results as JSON, the page size and the contact address."""
    size = max(1, min(MAX_PAGE_SIZE, endpoint.page_size, spec.max_records))
    params = {"query": search_query(spec, window), "resultType": "core", "format": "json", "pageSize": str(size)}
    if endpoint.mailto:
        params["email"] = endpoint.mailto
    return params


async def fetch_europepmc(
    client: HttpClient,
    endpoint: Endpoint,
    spec: QuerySpec,
    progress: ProgressCallback = no_progress,
    window: EntryWindow | None = None,
) -> FetchOutcome:
    """Every result of the search, up to ``max_records``, following ``nextCursorMark`` (see :func:`walk_cursor`)."""
    params = search_params(spec, endpoint, window)

    async def read_page(cursor: str, where: str) -> SearchPage:
        _, body = await client.request(f"{endpoint.base_url}/search", params={**params, "cursorMark": cursor})
        return parse_search_page(body, where=where)

    outcome = FetchOutcome(source="europepmc", stats=client.stats)
    return await walk_cursor(outcome, read_page, spec.max_records, _page_where, progress)


async def fetch_jats(client: HttpClient, endpoint: Endpoint, pmcid: str) -> bytes:
    """The JATS XML full text of ``pmcid`` (``PMC123`` or ``123``) from ``{base}/{PMCID}/fullTextXML``.

    Raises FetchError when the request fails (a 404: Europe PMC holds no full text for it)
    and SourceFormatError when the body is not a JATS ``<article>`` document.
    """
    normalized = pmcid_of({"pmcid": pmcid})
    if normalized is None:
        raise ValueError(f"{pmcid!r} is not a PMCID (like PMC1234567)")
    where = f"{normalized}/fullTextXML"
    _, body = await client.request(f"{endpoint.base_url}/{normalized}/fullTextXML")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise SourceFormatError.unreadable(SOURCE, where, body, "JATS XML", str(exc)) from exc
    if root.tag.rsplit("}", 1)[-1] != "article":
        raise SourceFormatError(
            SOURCE,
            where,
            f"the XML document is <{root.tag}>, not a JATS <article>",
            "check the base URL; Europe PMC answers fullTextXML with a JATS article",
        )
    return body


def _page_where(number: int) -> str:
    return f"search page {number}"


async def probe_europepmc(client: HttpClient, endpoint: Endpoint) -> str:
    """A one-result search: does the service search?"""
    params = {"query": "review", "resultType": "lite", "format": "json", "pageSize": "1"}
    _, body = await client.request(f"{endpoint.base_url}/search", params=params)
    count = reply_json(body).get("hitCount")
    if count is None:
        raise UnexpectedReply("answered without a hit count")
    return f"searches ({int(count):,} records for 'review')"
