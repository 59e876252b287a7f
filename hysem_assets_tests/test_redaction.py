"""Secrets never leave the process: an upstream error page that echoes the request, key and all.

The end-to-end test runs the real `hysem` command against a loopback server whose every
answer echoes the URL, the form body and the headers it received, with fake keys set in
the environment, then searches everything the run left behind for them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote

import aiohttp
import click
import pytest
from aiohttp import web
from click.testing import CliRunner
from dagster import DagsterEvent, DagsterEventType, DagsterInstance, Failure, MetadataValue, asset, materialize
from dagster._core.events import EngineEventData

from hysem_assets.cli import HysemGroup
from hysem_assets.net.http import FetchError, HttpClient, RetryPolicy
from hysem_assets.runs.instance import prepare_dagster_home
from hysem_assets.settings.redaction import (
    MASK,
    SecretFilter,
    declare_profile_secrets,
    install_on_dagster,
    redact,
    redact_event,
    redact_url,
)
from hysem_assets_tests.acquisition.helpers import SAMPLE, write_profile
from hysem_assets_tests.local_server import ThreadedServer, serving
from hysem_assets_tests.paths import HYSEM

#: Fake keys with characters that URL and form encoding change (+, /, =).
KEYS = {
    "OPENALEX_API_KEY": "oa-key+Z7f3a/9c1e5b=",
    "SCOPUS_API_KEY": "els-key+Q2b4e/6f8a0c=",
    "NCBI_API_KEY": "ncbi-key+W1c8e/7a5d3=",
}


def _forms(key: str) -> set[str]:
    return {key, quote(key, safe=""), quote_plus(key), key.split("+")[1].split("/")[0]}


def echo_app(received: list[str]) -> web.Application:
    """Every request is answered with a page that repeats it: URL, form body and headers."""

    async def echo(request: web.Request) -> web.Response:
        form = await request.post()
        key = request.query.get("api_key") or form.get("api_key") or request.headers.get("X-ELS-APIKey", "")
        headers = "; ".join(f"{name}: {value}" for name, value in request.headers.items())
        page = f"request {request.method} {request.url} body={dict(form)} headers={headers}"
        received.append(page)
        if request.path.endswith("/content/search/scopus"):  # 200, but not JSON: quoted as a format error
            return web.Response(text=f"key {key} is not entitled; {page}", content_type="text/plain")
        return web.Response(status=403, text=f"Forbidden, key {key} refused: {page}", content_type="text/plain")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", echo)
    return app


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    return KEYS


def test_redact_masks_keys_in_every_form_and_secret_parameters_and_headers(keys, monkeypatch):
    key = keys["OPENALEX_API_KEY"]
    text = (
        f"raw {key} url {quote(key, safe='')} form {quote_plus(key)} json {json.dumps(key)} "
        "https://x.org/w?api_key=other-value&mailto=a@b.org Authorization: Bearer tok-123456 "
        "X-ELS-APIKey: hdr-123456"
    )
    masked = redact(text)
    assert key not in masked and quote(key, safe="") not in masked and quote_plus(key) not in masked
    assert "other-value" not in masked and "tok-123456" not in masked and "hdr-123456" not in masked
    assert "mailto=a@b.org" in masked and masked.count(MASK) == 7
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef-123")  # any variable named like a secret
    assert "tok-abcdef-123" not in redact("token tok-abcdef-123 here")
    monkeypatch.setenv("MODEL_CREDENTIAL", "cred-xyz-789")  # named by a profile's *_env key
    declare_profile_secrets({"assets": {"answers": {"generator": {"api_key_env": "MODEL_CREDENTIAL"}}}})
    assert "cred-xyz-789" not in redact("sent cred-xyz-789")
    assert redact_url(f"https://x.org/w?search=a+b&api_key={key}") == "https://x.org/w?search=a+b&api_key=***"


def test_the_filter_masks_message_arguments_exceptions_and_dagster_events(keys):
    key = keys["SCOPUS_API_KEY"]
    try:
        raise RuntimeError(f"upstream said {key}")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "got %s", (key,), sys.exc_info())
    event = DagsterEvent(
        event_type_value=DagsterEventType.ENGINE_EVENT.value,
        job_name="job",
        message=f"echo {key}",
        event_specific_data=EngineEventData(),
    )
    record.__dict__["dagster_event"] = event
    assert SecretFilter().filter(record)
    assert key not in record.getMessage() and key not in record.exc_text
    assert key not in record.__dict__["dagster_event"].message and key in event.message
    metadata_event = {"text": MetadataValue.text(f"k={key}")}
    assert key not in json.dumps({k: v.value for k, v in redact_event(metadata_event).items()})


def test_an_error_page_echoing_the_request_is_masked_where_it_is_captured(keys):
    key = keys["SCOPUS_API_KEY"]
    received: list[str] = []

    async def scenario():
        async with serving(echo_app(received)) as root, aiohttp.ClientSession() as session:
            client = HttpClient(session, requests_per_second=100, retry=RetryPolicy(max_retries=0))
            await client.request(f"{root}/search", params={"q": "ozone"}, headers={"X-ELS-APIKey": key})

    with pytest.raises(FetchError) as caught:
        asyncio.run(scenario())
    assert any(key in page for page in received)  # the page really echoed the key
    assert "HTTP 403: Forbidden, key *** refused" in str(caught.value)
    assert not any(form in str(caught.value) for form in _forms(key))


def test_a_cli_error_and_its_debug_traceback_carry_no_key(keys):
    @click.group(cls=HysemGroup)
    @click.option("--debug", is_flag=True)
    def cli(debug: bool) -> None:
        """A group with hysem's error handling."""

    @cli.command()
    def boom() -> None:
        raise RuntimeError(f"the server answered: key={keys['NCBI_API_KEY']} rejected")

    plain = CliRunner().invoke(cli, ["boom"])
    debug = CliRunner().invoke(cli, ["--debug", "boom"])
    assert plain.exit_code == debug.exit_code == 1
    assert plain.output.strip().count("\n") == 0 and plain.output.startswith("Error: RuntimeError: the server")
    assert "Traceback (most recent call last)" in debug.output and "RuntimeError" in debug.output
    for form in _forms(keys["NCBI_API_KEY"]):
        assert form not in plain.output and form not in debug.output


def test_echoing_error_pages_leak_no_key_anywhere_a_run_writes(
    keys, config: Path, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("HYSEM_PROFILE", str(write_profile(tmp_path / "profile.yaml", max_retries=0)))
    received: list[str] = []
    server = ThreadedServer(echo_app(received))
    try:
        monkeypatch.setenv("HYSEM_PUBMED_URL", f"{server.url}/pubmed")
        monkeypatch.setenv("HYSEM_OPENALEX_URL", f"{server.url}/openalex")
        monkeypatch.setenv("HYSEM_SCOPUS_URL", f"{server.url}/scopus")
        run = subprocess.run(
            [str(HYSEM), "--debug", "materialize", "--query", SAMPLE, "--select", "group:acquisition"],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        server.close()
    assert run.returncode == 1, run.stderr[-3000:]
    # The upstream pages did echo every key, and their masked text reached the console.
    for key in keys.values():
        assert any(key in unquote(page) for page in received), (key, received)
    assert "Forbidden, key *** refused: request" in run.stderr and "key *** is not entitled" in run.stderr
    written = {path: path.read_bytes() for path in isolated_home.rglob("*") if path.is_file()}
    assert any(path.suffix == ".db" for path in written)  # the run and event log databases
    assert any(b"Forbidden, key *** refused" in data for data in written.values())  # the failures were stored
    for key in keys.values():
        for form in _forms(key):
            assert form not in run.stdout and form not in run.stderr, form
            leaked = [str(path) for path, data in written.items() if form.encode() in data]
            assert not leaked, (form, leaked)


def test_the_installed_filter_masks_what_assets_log_raise_and_record(
    keys, isolated_home: Path, capfd: pytest.CaptureFixture
):
    """Text no capture site masked (a log line, a python logger, failure metadata) is masked on its way out."""
    key = keys["OPENALEX_API_KEY"]
    install_on_dagster()

    @asset
    def talkative(context) -> None:
        context.log.info(f"calling with {key}")
        logging.getLogger("hysem_assets.probe").warning("python logger saw %s", key)
        raise Failure(description=f"upstream echoed {key}", metadata={"body": MetadataValue.text(f"k={key}")})

    with DagsterInstance.from_config(str(prepare_dagster_home())) as instance:
        result = materialize([talkative], instance=instance, raise_on_error=False)
    assert not result.success
    printed = capfd.readouterr()
    assert "calling with ***" in printed.err and "upstream echoed ***" in printed.err
    stored = {path: path.read_bytes() for path in isolated_home.rglob("*") if path.is_file()}
    assert any(b"calling with ***" in data for data in stored.values())
    assert any(b"python logger saw ***" in data for data in stored.values())
    assert any(b"upstream echoed ***" in data for data in stored.values())
    for form in _forms(key):
        assert form not in printed.out + printed.err
        assert not [path for path, data in stored.items() if form.encode() in data]
