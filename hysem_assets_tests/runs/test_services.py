"""``hysem doctor --profile online``: each API asked once in its own format (served by the mirror, which
speaks the APIs' real paths and formats), the contact address, and the model server through the scripted
OpenAI-compatible server; a stopped server is one line each and a non-zero exit, with no secret printed."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest
from aiohttp import web

from hysem_assets.mirror.server import MirrorServer
from hysem_assets.runs.services import PROBE_SCHEMA, PROBED
from hysem_assets_tests.llm.scripted_server import Reply, ScriptedLLMServer, Step, json_reply
from hysem_assets_tests.paths import HYSEM

SECRETS = {"NCBI_API_KEY": "ncbi-secret-1", "HYSEM_LLM_API_KEY": "sk-laptop-secret"}


def doctor() -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """The command's run in a process of its own, as a user starts it (the code location it loads is the
    profile's), and its lines by service ("!" first on a problem)."""
    result = subprocess.run(
        [HYSEM, "doctor", "--profile", "online"], env=dict(os.environ), capture_output=True, text=True, timeout=180
    )
    lines = {line[2:].split()[0]: line for line in result.stdout.splitlines() if line[2:].split()}
    return result, lines


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("HYSEM_LLM_URL", raising=False)
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HYSEM_LLM_MODEL", "qwen2.5:7b-instruct")
    return monkeypatch


def test_every_service_answers_in_its_format_and_the_model_returns_the_schema(online: pytest.MonkeyPatch):
    online.setenv("HYSEM_MAILTO", "team@example.org")
    online.setenv("SCOPUS_API_KEY", "scopus-secret-2")
    steps = [Step(json_reply({"ready": True}))]
    with (
        MirrorServer() as mirror,
        ScriptedLLMServer(
            steps, model="qwen2.5:7b-instruct", schema=PROBE_SCHEMA, api_key=SECRETS["HYSEM_LLM_API_KEY"]
        ) as model,
    ):
        for name, url in mirror.base_urls.items():
            online.setenv(f"HYSEM_{name.upper()}_URL", url)
        online.setenv("HYSEM_LLM_URL", model.url + "/v1")
        result, lines = doctor()
    assert result.returncode == 0, result.stdout + result.stderr
    assert model.failures == [] and len(model.requests) == 1  # JSON-schema mode, the key, one request
    for service in (*PROBED, "contact", "model"):
        assert lines[service].startswith("  "), lines[service]
    assert "records for 'review'" in lines["pubmed"] and "with the API key" in lines["scopus"]
    assert "answers structured output (json_schema)" in lines["model"]
    assert not any(secret in result.stdout + result.stderr for secret in [*SECRETS.values(), "scopus-secret-2"])


def test_a_stopped_server_is_one_line_per_service_and_a_non_zero_exit(online: pytest.MonkeyPatch):
    stopped = f"http://127.0.0.1:{closed_port()}"
    for name in PROBED:
        online.setenv(f"HYSEM_{name.upper()}_URL", stopped)
    online.setenv("HYSEM_LLM_URL", stopped + "/v1")
    result, lines = doctor()
    assert result.returncode != 0
    for service in ("pubmed", "openalex", "europepmc", "crossref", "model"):
        assert lines[service].startswith("! ") and "does not answer (ClientConnectorError)" in lines[service]
    assert lines["contact"].startswith("! ") and "HYSEM_MAILTO is not set" in lines["contact"]
    assert lines["unpaywall"].startswith("! ") and "contact address" in lines["unpaywall"]
    assert lines["scopus"].startswith("  ") and "SCOPUS_API_KEY is not set" in lines["scopus"]  # runs go on without
    assert (
        "not ready for a run: contact, pubmed, openalex, europepmc, crossref, unpaywall, model"
        in result.stdout + result.stderr
    )
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS.values())


def test_a_revoked_key_is_named_without_printing_it(online: pytest.MonkeyPatch):
    @web.middleware
    async def revoked(request: web.Request, handler):  # OpenAlex's answer to a key it no longer accepts
        if request.path.startswith("/openalex/") and request.query.get("api_key") == "revoked-key-3":
            return web.json_response({"error": "Invalid API key", "message": "API key not valid"}, status=401)
        return await handler(request)

    online.setenv("HYSEM_MAILTO", "team@example.org")
    online.setenv("OPENALEX_API_KEY", "revoked-key-3")
    online.delenv("HYSEM_LLM_MODEL")
    with MirrorServer(middlewares=[revoked]) as mirror:
        for name, url in mirror.base_urls.items():
            online.setenv(f"HYSEM_{name.upper()}_URL", url)
        result, lines = doctor()
    assert result.returncode != 0 and "not ready for a run: openalex" in result.stdout + result.stderr
    assert lines["openalex"].startswith("! ") and "refused the API key (HTTP 401)" in lines["openalex"]
    assert lines["model"].startswith("  ") and "HYSEM_LLM_URL is not set" in lines["model"]
    assert "revoked-key-3" not in result.stdout + result.stderr


def test_a_model_that_answers_outside_the_schema_is_named_and_stops_the_run(online: pytest.MonkeyPatch):
    online.setenv("HYSEM_MAILTO", "team@example.org")
    steps = [Step(Reply('{"ready": "maybe"}')), Step(Reply("I am ready!"))]
    with (
        MirrorServer() as mirror,
        ScriptedLLMServer(steps, model="qwen2.5:7b-instruct", api_key=SECRETS["HYSEM_LLM_API_KEY"]) as model,
    ):
        for name, url in mirror.base_urls.items():
            online.setenv(f"HYSEM_{name.upper()}_URL", url)
        online.setenv("HYSEM_LLM_URL", model.url + "/v1")
        wrong, wrong_lines = doctor()
        prose, prose_lines = doctor()
    for result, lines in ((wrong, wrong_lines), (prose, prose_lines)):
        assert result.returncode != 0 and "not ready for a run: model" in result.stdout + result.stderr
        assert lines["model"].startswith("! ") and lines["pubmed"].startswith("  ")
        assert SECRETS["HYSEM_LLM_API_KEY"] not in result.stdout + result.stderr
    assert all("not with JSON of the schema asked for" in lines["model"] for lines in (wrong_lines, prose_lines))
