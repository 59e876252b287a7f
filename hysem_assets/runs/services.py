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
from dataclasses import dataclass
from typing import Any

from hysem_assets.net.http import FetchError
from hysem_assets.settings.environment import VariableError, mailto, variable
from hysem_assets.settings.profile import ROLE_SECTIONS, HttpSettings, Profile
from hysem_assets.sources.base import Endpoint
from hysem_assets.sources.endpoints import resolve_endpoint, with_client
from hysem_assets.sources.errors import UnexpectedReply
from hysem_assets.sources.registry import BY_NAME, REGISTRY

#: The sources and services a run asks, in the registry's order.
PROBED = tuple(entry.name for entry in REGISTRY if entry.probe is not None)
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


#: What a refusal says, by status: a key or a contact address the service did not accept.
_REFUSED = {400: "refused the request", 401: "refused the API key", 403: "refused the API key", 422: "refused it"}


def _failure(error: FetchError) -> str:
    """What went wrong, without the URL (its parameters may hold a key)."""
    why = _REFUSED.get(error.status, f"HTTP {error.status}") if error.status else "does not answer"
    return f"{why} ({error.reason.split(':')[0]})"


async def _source(name: str, endpoint: Endpoint) -> ServiceCheck:
    where, entry = endpoint.base_url, BY_NAME[name]
    if entry.needs_key and not endpoint.api_key:
        return ServiceCheck(name, f"{where}: {entry.key_variable} is not set, so runs leave {entry.label} out")
    if entry.needs_contact and not endpoint.mailto:
        return ServiceCheck(name, f"{where}: not asked, it answers only requests with a contact address", True)
    try:
        said = await with_client(endpoint, PROBE_HTTP, lambda client: entry.probe(client, endpoint))
    except FetchError as error:
        return ServiceCheck(name, f"{where}: {_failure(error)}", True)
    except UnexpectedReply as error:
        return ServiceCheck(name, f"{where}: {error}: is this the {entry.label} API?", True)
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
    endpoints = {name: resolve_endpoint(name, profile) for name in PROBED}

    async def run() -> list[ServiceCheck]:
        checks = list(await asyncio.gather(*(_source(name, endpoints[name]) for name in PROBED)))
        endpoint = profile.model_endpoint
        if endpoint is not None and endpoint.serves:
            if variable(endpoint.url_env):
                section, key = ROLE_SECTIONS[endpoint.serves[0]]
                checks.append(await _model(getattr(getattr(profile.assets, section), key)))
            else:
                checks.append(ServiceCheck("model", f"{endpoint.url_env} is not set: the embedded default runs"))
        return checks

    return [contact, *asyncio.run(run())]
