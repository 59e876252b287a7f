"""Resolve where each source lives and run one source's fetch for a query."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from hysem_assets import __version__
from hysem_assets.net.http import HttpClient, RetryPolicy, make_session
from hysem_assets.settings.environment import mailto, url_override
from hysem_assets.settings.profile import HttpSettings, Profile
from hysem_assets.settings.queries import CitationSearch, EntryWindow, QuerySpec
from hysem_assets.sources.base import Endpoint, FetchOutcome, ProgressCallback, no_progress
from hysem_assets.sources.citations import ChaseOutcome, chase_citations
from hysem_assets.sources.lookups import LookupOutcome
from hysem_assets.sources.registry import BY_NAME, LOOKUPS, api_key, production_url

T = TypeVar("T")


def base_url(source: str, profile: Profile, mirror_urls: Mapping[str, str] | None = None) -> str:
    """Environment variable, then profile, then the local mirror, then the public API."""
    url = url_override(source) or profile.source(source).base_url
    if not url and profile.mirror and mirror_urls:
        url = mirror_urls.get(source)
    return (url or production_url(source)).rstrip("/")


def needs_mirror(profile: Profile, sources: list[str]) -> bool:
    return profile.mirror and any(not (url_override(s) or profile.source(s).base_url) for s in sources)


def resolve_endpoint(
    source: str, profile: Profile, declared_mailto: str | None = None, mirror_urls: Mapping[str, str] | None = None
) -> Endpoint:
    settings = profile.source(source)
    key = api_key(source)
    rate = (
        settings.requests_per_second_with_key
        if key and settings.requests_per_second_with_key
        else settings.requests_per_second
    )
    return Endpoint(
        source=source,
        base_url=base_url(source, profile, mirror_urls),
        requests_per_second=rate,
        max_concurrency=settings.max_concurrency,
        page_size=settings.page_size,
        api_key=key,
        mailto=mailto(declared_mailto),
    )


async def with_client(endpoint: Endpoint, http: HttpSettings, work: Callable[[HttpClient], Awaitable[T]]) -> T:
    """Run ``work`` with a rate-limited, retrying client for ``endpoint`` and close it after."""
    async with make_session(http, user_agent=_user_agent(endpoint)) as session:
        client = HttpClient(
            session,
            requests_per_second=endpoint.requests_per_second,
            max_concurrency=endpoint.max_concurrency,
            retry=RetryPolicy.from_settings(http),
            deadline_s=http.total_timeout_s,
        )
        return await work(client)


def fetch(
    endpoint: Endpoint,
    spec: QuerySpec,
    http: HttpSettings,
    progress: ProgressCallback = no_progress,
    window: EntryWindow | None = None,
) -> FetchOutcome:
    """Every record one source returns for a query, or only those it added within ``window``
    (synchronous, for assets and the CLI)."""
    fetcher = BY_NAME[endpoint.source].search
    return asyncio.run(with_client(endpoint, http, lambda client: fetcher(client, endpoint, spec, progress, window)))


def lookup(
    endpoint: Endpoint, dois: list[str], http: HttpSettings, progress: ProgressCallback = no_progress
) -> LookupOutcome:
    """Enrichment values for ``dois`` from Crossref or OpenAlex (synchronous)."""
    looker = LOOKUPS[endpoint.source]
    return asyncio.run(with_client(endpoint, http, lambda client: looker(client, endpoint, dois, progress)))


def chase(
    endpoint: Endpoint,
    seeds: list[str],
    search: CitationSearch,
    http: HttpSettings,
    progress: ProgressCallback,
    known: set[str],
) -> ChaseOutcome:
    """The citations of ``seeds`` (OpenAlex ids) one level, as ``search`` asks, leaving out the ``known`` works
    (synchronous)."""
    return asyncio.run(
        with_client(endpoint, http, lambda client: chase_citations(client, endpoint, seeds, search, progress, known))
    )


def _user_agent(endpoint: Endpoint) -> str:
    contact = f"; mailto:{endpoint.mailto}" if endpoint.mailto else ""
    return f"hysem/{__version__} (literature review pipeline{contact})"
