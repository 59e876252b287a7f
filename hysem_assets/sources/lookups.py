"""Batched lookups by DOI for enrichment: OpenAlex (50 DOIs a request) and Crossref (one each)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from hysem_assets.net.http import FetchError, HttpClient
from hysem_assets.sources.base import Endpoint, Failure, ProgressCallback, no_progress
from hysem_assets.sources.crossref_json import enrichment as crossref_enrichment
from hysem_assets.sources.crossref_json import parse_work_response, retraction_targets
from hysem_assets.sources.errors import SourceFormatError, UnexpectedReply, reply_json
from hysem_assets.sources.openalex_json import enrichment as openalex_enrichment
from hysem_assets.sources.openalex_json import parse_works_page

#: OpenAlex accepts up to 50 values OR-ed with "|" in one filter.
OPENALEX_DOI_BATCH = 50


@dataclass
class LookupOutcome:
    """Enrichment values per DOI from one source, with what could not be looked up."""

    source: str
    found: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: DOIs that a notice in this source says are retracted (Crossref ``update-to``).
    retracted: set[str] = field(default_factory=set)
    not_found: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


def polite_params(endpoint: Endpoint) -> dict[str, str]:
    """The contact address (the polite pool) and the key, as OpenAlex and Crossref take them."""
    params = {"mailto": endpoint.mailto} if endpoint.mailto else {}
    if endpoint.api_key:
        params["api_key"] = endpoint.api_key
    return params


def filterable(doi: str) -> bool:
    """OpenAlex filter syntax splits on ',' and '|', so such DOIs cannot be batched."""
    return "," not in doi and "|" not in doi


async def lookup_openalex(
    client: HttpClient, endpoint: Endpoint, dois: list[str], progress: ProgressCallback = no_progress
) -> LookupOutcome:
    outcome = LookupOutcome(source="openalex")
    batchable = [doi for doi in dois if filterable(doi)]
    outcome.not_found.extend(doi for doi in dois if not filterable(doi))
    batches = [batchable[i : i + OPENALEX_DOI_BATCH] for i in range(0, len(batchable), OPENALEX_DOI_BATCH)]

    async def one(batch: list[str], number: int) -> None:
        where = f"works by DOI, batch {number}"
        params = {"filter": "doi:" + "|".join(batch), "per-page": str(OPENALEX_DOI_BATCH), **polite_params(endpoint)}
        try:
            _, body = await client.request(f"{endpoint.base_url}/works", params=params)
            page = parse_works_page(body, where=where)
        except (FetchError, SourceFormatError) as exc:
            outcome.failures.append(Failure(where, str(exc)))
            return
        for record in page.records:
            values = openalex_enrichment(record)
            if values["doi"] in batch:
                outcome.found[values["doi"]] = values
        outcome.failures.extend(Failure(where, reason) for reason in page.failures)
        outcome.not_found.extend(doi for doi in batch if doi not in outcome.found)
        progress(len(outcome.found), len(dois))

    await asyncio.gather(*(one(batch, n) for n, batch in enumerate(batches, start=1)))
    return outcome


async def lookup_crossref(
    client: HttpClient, endpoint: Endpoint, dois: list[str], progress: ProgressCallback = no_progress
) -> LookupOutcome:
    outcome = LookupOutcome(source="crossref")
    done = 0

    async def one(doi: str) -> None:
        nonlocal done
        where = f"work {doi}"
        try:
            status, body = await client.request(
                f"{endpoint.base_url}/works/{quote(doi, safe='/:;()')}",
                params=polite_params(endpoint),
                ok_statuses=frozenset({200, 404}),
            )
            if status == 404:
                outcome.not_found.append(doi)
            else:
                message = parse_work_response(body, where=where)
                outcome.found[doi] = crossref_enrichment(message)
                outcome.retracted |= retraction_targets(message)
        except (FetchError, SourceFormatError) as exc:
            outcome.failures.append(Failure(where, str(exc)))
        done += 1
        progress(done, len(dois))

    await asyncio.gather(*(one(doi) for doi in dois))
    return outcome


#: A work every DOI service knows (Unpaywall's own documentation uses it).
PROBE_DOI = "10.1038/nature12373"


async def probe_crossref(client: HttpClient, endpoint: Endpoint) -> str:
    """One DOI lookup (a 404 that is Crossref's own answers too)."""
    status, body = await client.request(
        f"{endpoint.base_url}/works/{PROBE_DOI}", params=polite_params(endpoint), ok_statuses=frozenset({200, 404})
    )
    if status == 404 and body.strip().startswith(b"Resource not found"):
        return "answers DOI lookups"
    if "DOI" not in (reply_json(body).get("message") or {}):
        raise UnexpectedReply("answered without a work")
    return "answers DOI lookups"


async def probe_unpaywall(client: HttpClient, endpoint: Endpoint) -> str:
    """One DOI lookup with the contact address Unpaywall requires."""
    status, body = await client.request(
        f"{endpoint.base_url}/v2/{PROBE_DOI}",
        params={"email": endpoint.mailto or ""},
        ok_statuses=frozenset({200, 404}),
    )
    data = reply_json(body)
    if "doi" not in data and data.get("HTTP_status_code") != 404:
        raise UnexpectedReply("answered without a DOI record")
    return "answers DOI lookups with the contact address"
