"""``hysem doctor`` for a profile that reaches real services: one request each, one line each.

Each scholarly API gets one small request in its own format (a PubMed search, an OpenAlex
search, a Scopus search, a Crossref and an Unpaywall DOI lookup), with the profile's
endpoint, key and contact address, no retries and short timeouts, so an unreachable
service is named in seconds. A service answers when it replies as that API does, which
for a DOI it does not know is its own not-found reply. The contact address is checked
because Unpaywall refuses requests without one, and a configured model server gets one
structured-output request that must come back valid. Lines never carry keys or URLs with
their parameters.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from hysem_assets.net.http import FetchError, HttpClient
from hysem_assets.settings.environment import VariableError, mailto, variable
from hysem_assets.settings.profile import ROLE_SECTIONS, HttpSettings, Profile
from hysem_assets.sources.base import Endpoint
from hysem_assets.sources.endpoints import resolve_endpoint, with_client
from hysem_assets.sources.lookups import polite_params
from hysem_assets.sources.pubmed import common_params
from hysem_assets.sources.scopus import request_headers

#: The sources a review searches or looks up, in the order a run asks them.
SOURCES = ("pubmed", "openalex", "scopus", "crossref", "unpaywall")
#: A work every DOI service knows (Unpaywall's own documentation uses it).
PROBE_DOI = "10.1038/nature12373"
#: One try each, and not long: a service that does not answer in this time is named, not waited for.
PROBE_HTTP = HttpSettings(connect_timeout_s=5, read_timeout_s=20, total_timeout_s=30, max_retries=0)
#: What the model server must return: valid JSON of this schema, through its structured-output mode.
PROBE_SCHEMA = {
    "title": "Probe",
    "type": "object",
    "properties": {"ready": {"type": "boolean"}},
    "required": ["ready"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ServiceCheck:
    """One line of the report; ``problem`` when a run needs it fixed (a line without one is information)."""

    service: str
    text: str
    problem: bool = False


class Unexpected(ValueError):
    """A reply that is not in the API's format."""


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise Unexpected("answered, but not with JSON") from None


async def _pubmed(client: HttpClient, endpoint: Endpoint) -> str:
    params = {**common_params(endpoint), "term": "review", "retmax": 0, "retmode": "json"}
    _, body = await client.request(f"{endpoint.base_url}/esearch.fcgi", params=params)
    count = _json(body).get("esearchresult", {}).get("count")
    if count is None:
        raise Unexpected("answered without an esearch result")
    return f"searches ({int(count):,} records for 'review')" + (", with the API key" if endpoint.api_key else "")


async def _openalex(client: HttpClient, endpoint: Endpoint) -> str:
    params = {"search": "review", "per-page": 1, **polite_params(endpoint)}
    _, body = await client.request(f"{endpoint.base_url}/works", params=params)
    data = _json(body)
    if not isinstance(data.get("results"), list):
        raise Unexpected("answered without a list of works")
    return "searches" + (", with the API key" if endpoint.api_key else "")


async def _scopus(client: HttpClient, endpoint: Endpoint) -> str:
    params: dict[str, str | int] = {"query": "TITLE(review)", "count": 1}
    _, body = await client.request(
        f"{endpoint.base_url}/content/search/scopus", params=params, headers=request_headers(endpoint)
    )
    if "search-results" not in _json(body):
        raise Unexpected("answered without search results")
    return "searches, with the API key"


async def _crossref(client: HttpClient, endpoint: Endpoint) -> str:
    status, body = await client.request(
        f"{endpoint.base_url}/works/{PROBE_DOI}", params=polite_params(endpoint), ok_statuses=frozenset({200, 404})
    )
    if status == 404 and body.strip().startswith(b"Resource not found"):
        return "answers DOI lookups"
    if "DOI" not in (_json(body).get("message") or {}):
        raise Unexpected("answered without a work")
    return "answers DOI lookups"


async def _unpaywall(client: HttpClient, endpoint: Endpoint) -> str:
    status, body = await client.request(
        f"{endpoint.base_url}/v2/{PROBE_DOI}",
        params={"email": endpoint.mailto or ""},
        ok_statuses=frozenset({200, 404}),
    )
    data = _json(body)
    if "doi" not in data and data.get("HTTP_status_code") != 404:
        raise Unexpected("answered without a DOI record")
    return "answers DOI lookups with the contact address"


PROBES: dict[str, Callable[[HttpClient, Endpoint], Awaitable[str]]] = {
    "pubmed": _pubmed,
    "openalex": _openalex,
    "scopus": _scopus,
    "crossref": _crossref,
    "unpaywall": _unpaywall,
}
#: What a refusal says, by status: a key or a contact address the service did not accept.
_REFUSED = {400: "refused the request", 401: "refused the API key", 403: "refused the API key", 422: "refused it"}


def _failure(error: FetchError) -> str:
    """What went wrong, without the URL (its parameters may hold a key)."""
    why = _REFUSED.get(error.status, f"HTTP {error.status}") if error.status else "does not answer"
    return f"{why} ({error.reason.split(':')[0]})"


async def _source(name: str, endpoint: Endpoint) -> ServiceCheck:
    where = endpoint.base_url
    if name == "scopus" and not endpoint.api_key:
        return ServiceCheck(name, f"{where}: SCOPUS_API_KEY is not set, so runs leave Scopus out")
    if name == "unpaywall" and not endpoint.mailto:
        return ServiceCheck(name, f"{where}: not asked, it answers only requests with a contact address", True)
    try:
        said = await with_client(endpoint, PROBE_HTTP, lambda client: PROBES[name](client, endpoint))
    except FetchError as error:
        return ServiceCheck(name, f"{where}: {_failure(error)}", True)
    except Unexpected as error:
        return ServiceCheck(name, f"{where}: {error}: is this the {name} API?", True)
    return ServiceCheck(name, f"{where}: {said}")


async def _model(config: dict[str, Any]) -> ServiceCheck:
    from hysem_assets.llm.completion import LLMError
    from hysem_assets.llm.registry import build_backend

    backend = build_backend({**config, "cache": False, "max_retries": 0, "timeout_s": 60, "total_timeout_s": 90})
    where = f"{config['model']} at {config.get('base_url')}"
    messages = [
        {"role": "system", "content": "Answer with JSON only."},
        {"role": "user", "content": 'Reply with {"ready": true}.'},
    ]
    try:
        answer = await backend.complete(messages, schema=PROBE_SCHEMA)
    except LLMError as error:
        cause = error.__cause__
        why = _failure(cause) if isinstance(cause, FetchError) else str(error).split(": ", 1)[-1]
        return ServiceCheck("model", f"{where}: {why}", True)
    finally:
        await backend.aclose()
    if not isinstance(answer.parsed_json, dict) or not isinstance(answer.parsed_json.get("ready"), bool):
        return ServiceCheck("model", f"{where}: answered, but not with JSON of the schema asked for", True)
    return ServiceCheck("model", f"{where}: answers structured output ({config.get('structured_output')})")


def _contact() -> ServiceCheck:
    try:
        address = mailto()
    except VariableError as error:
        return ServiceCheck("contact", str(error), True)
    if address is None:
        return ServiceCheck("contact", "HYSEM_MAILTO is not set: the APIs' polite pools and Unpaywall ask for it", True)
    return ServiceCheck("contact", f"HYSEM_MAILTO is set ({address.partition('@')[2] or 'no domain'})")


def check_services(profile: Profile) -> list[ServiceCheck]:
    """One line per service the profile reaches, plus the contact address and the model server; nothing for a
    profile that serves every source from the bundled snapshot. An unusable contact address is the one line:
    every request would carry it."""
    if profile.mirror:
        return []
    contact = _contact()
    if contact.problem and variable("HYSEM_MAILTO"):
        return [contact]
    endpoints = {name: resolve_endpoint(name, profile) for name in SOURCES}

    async def run() -> list[ServiceCheck]:
        checks = list(await asyncio.gather(*(_source(name, endpoints[name]) for name in SOURCES)))
        endpoint = profile.model_endpoint
        if endpoint is not None and endpoint.serves:
            if variable(endpoint.url_env):
                section, key = ROLE_SECTIONS[endpoint.serves[0]]
                checks.append(await _model(getattr(getattr(profile.assets, section), key)))
            else:
                checks.append(ServiceCheck("model", f"{endpoint.url_env} is not set: the embedded default runs"))
        return checks

    return [contact, *asyncio.run(run())]
