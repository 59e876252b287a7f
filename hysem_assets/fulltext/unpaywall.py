"""Ask Unpaywall where a DOI can be read for free, as an ordered list of links to try."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from hysem_assets.fulltext.outcome import DownloadFailed, Location
from hysem_assets.net.http import FetchError, HttpClient
from hysem_assets.sources.base import Endpoint


def locations(unpaywall_object: Mapping[str, Any]) -> list[Location]:
    """Links to try, best first: the best location, then the others in Unpaywall's order.

    Each location offers ``url_for_pdf`` and then ``url`` (its PDF, else its landing page,
    which sometimes serves the PDF itself); a link already listed is not tried twice.
    """
    listed = [unpaywall_object.get("best_oa_location"), *(unpaywall_object.get("oa_locations") or [])]
    found: list[Location] = []
    seen: set[str] = set()
    for location in filter(None, listed):
        for url in (location.get("url_for_pdf"), location.get("url")):
            if url and url not in seen:
                seen.add(url)
                found.append(Location(url, location.get("host_type"), location.get("version"), location.get("license")))
    return found


async def open_locations(client: HttpClient, endpoint: Endpoint, doi: str) -> list[Location]:
    """The links for ``doi``; DownloadFailed when there is none or Unpaywall cannot be asked."""
    url = f"{endpoint.base_url}/v2/{quote(doi, safe='/:;()')}"
    try:
        status, body = await client.request(
            url, params={"email": endpoint.mailto or ""}, ok_statuses=frozenset({200, 404})
        )
    except FetchError as error:
        raise DownloadFailed("http_error", f"Unpaywall lookup failed: {error}") from error
    if status == 404:
        raise DownloadFailed("no_oa_location", "Unpaywall does not know this DOI")
    try:
        found = json.loads(body)
        links = locations(found)
    except (ValueError, AttributeError, TypeError) as error:
        reason = f"Unpaywall answered with something other than a DOI object ({error})"
        raise DownloadFailed("http_error", reason) from error
    if not links:
        reason = f"Unpaywall lists no open-access location (oa_status {found.get('oa_status')})"
        raise DownloadFailed("no_oa_location", reason)
    return links
