"""HttpClient against real loopback servers that throttle, fail and stall."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest
from aiohttp import web

from hysem_assets.net.http import FetchError, HttpClient, RateLimiter, RetryPolicy, parse_retry_after, redact_url
from hysem_assets_tests.local_server import serving

FAST_RETRY = RetryPolicy(max_retries=3, backoff_base_s=0.01, backoff_max_s=0.05)


def flaky_app(statuses: list[int], headers: dict[str, str] | None = None) -> tuple[web.Application, list[float]]:
    """Answers with the given statuses in turn, then 200; records arrival times."""
    arrivals: list[float] = []

    async def handle(request: web.Request) -> web.Response:
        arrivals.append(time.monotonic())
        status = statuses.pop(0) if statuses else 200
        return web.Response(
            status=status, text="ok" if status == 200 else "busy", headers=headers if status != 200 else None
        )

    app = web.Application()
    app.router.add_get("/r", handle)
    return app, arrivals


async def get(
    url: str, *, retry: RetryPolicy = FAST_RETRY, rate: float = 1000.0, timeout: float | None = None, **kwargs
):
    session_timeout = aiohttp.ClientTimeout(sock_read=timeout) if timeout else aiohttp.ClientTimeout()
    async with aiohttp.ClientSession(timeout=session_timeout) as session:
        client = HttpClient(session, requests_per_second=rate, retry=retry)
        status, body = await client.request(url, **kwargs)
        return status, body, client.stats


def test_retries_429_and_5xx_then_succeeds():
    async def scenario():
        app, arrivals = flaky_app([429, 503, 500])
        async with serving(app) as root:
            status, body, stats = await get(f"{root}/r")
        return status, body, stats, arrivals

    status, body, stats, arrivals = asyncio.run(scenario())
    assert (status, body) == (200, b"ok")
    assert len(arrivals) == 4 and stats.retries == 3 and stats.statuses == {429: 1, 503: 1, 500: 1, 200: 1}


def test_gives_up_after_max_retries_with_clear_error():
    async def scenario():
        app, _ = flaky_app([500] * 10)
        async with serving(app) as root:
            await get(f"{root}/r", params={"api_key": "s3cret", "term": "ozone"})

    with pytest.raises(FetchError) as caught:
        asyncio.run(scenario())
    message = str(caught.value)
    assert "HTTP 500 after 4 attempts" in message
    assert "s3cret" not in message and "api_key=***" in message and "term=ozone" in message


def test_honours_retry_after_seconds():
    async def scenario():
        app, arrivals = flaky_app([429], headers={"Retry-After": "1"})
        async with serving(app) as root:
            await get(f"{root}/r")
        return arrivals

    arrivals = asyncio.run(scenario())
    assert arrivals[1] - arrivals[0] >= 0.95


def test_non_retryable_status_fails_at_once_with_body_snippet():
    async def scenario():
        app, arrivals = flaky_app([400])
        async with serving(app) as root:
            with pytest.raises(FetchError) as caught:
                await get(f"{root}/r")
        return caught.value, arrivals

    error, arrivals = asyncio.run(scenario())
    assert error.status == 400 and "busy" in str(error) and len(arrivals) == 1


def test_ok_statuses_let_callers_read_error_bodies():
    async def scenario():
        app, _ = flaky_app([404])
        async with serving(app) as root:
            return await get(f"{root}/r", ok_statuses=frozenset({200, 404}))

    status, body, _ = asyncio.run(scenario())
    assert (status, body) == (404, b"busy")


def test_timeouts_are_retried_then_reported():
    async def stall(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.Response(text="late")

    async def scenario():
        app = web.Application()
        app.router.add_get("/slow", stall)
        async with serving(app) as root:
            await get(f"{root}/slow", timeout=0.2, retry=RetryPolicy(max_retries=1, backoff_base_s=0.01))

    with pytest.raises(FetchError, match="Timeout.*after 2 attempts"):
        asyncio.run(scenario())


def test_rate_limiter_spaces_starts():
    async def scenario():
        limiter = RateLimiter(20, headroom=0.0)
        starts = []
        for _ in range(11):
            await limiter.acquire()
            starts.append(time.monotonic())
        return starts

    starts = asyncio.run(scenario())
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= 0.049 and starts[-1] - starts[0] >= 0.5


def test_parse_retry_after_forms():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past


def test_redact_url_masks_only_secrets():
    url = "https://x.org/works?search=a+b&api_key=abc&mailto=me%40x.org"
    assert redact_url(url) == "https://x.org/works?search=a+b&api_key=***&mailto=me%40x.org"


def drip_app(size: int = 100, every_s: float = 0.2) -> web.Application:
    """Sends its body one byte every ``every_s``: never silent long enough for a read timeout."""

    async def drip(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": str(size)})
        await response.prepare(request)
        for _ in range(size):
            await response.write(b"x")
            await asyncio.sleep(every_s)
        return response

    app = web.Application()
    app.router.add_get("/drip", drip)
    return app


def test_a_dripping_body_is_cut_at_the_deadline_with_a_clear_line():
    async def scenario():
        async with serving(drip_app()) as root:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(sock_read=0.5)) as session:
                client = HttpClient(session, requests_per_second=100, retry=RetryPolicy(max_retries=0), deadline_s=1.0)
                await client.request(f"{root}/drip", params={"api_key": "s3cret"})

    started = time.monotonic()
    with pytest.raises(FetchError) as caught:
        asyncio.run(scenario())
    assert time.monotonic() - started < 3.0  # the whole body would take 20 s
    message = str(caught.value)
    assert message.startswith("no complete response within 1 s after 1 attempts (http://127.0.0.1:")
    assert "/drip?api_key=***" in message and "s3cret" not in message and "\n" not in message


def test_sources_take_the_deadline_from_the_profile():
    from hysem_assets.settings.profile import HttpSettings
    from hysem_assets.sources.base import Endpoint
    from hysem_assets.sources.endpoints import with_client

    http = HttpSettings(connect_timeout_s=2, read_timeout_s=0.5, total_timeout_s=1.0, max_retries=0)

    async def scenario() -> float:
        async with serving(drip_app()) as root:
            endpoint = Endpoint("openalex", root, requests_per_second=100, max_concurrency=1, page_size=25)
            started = time.monotonic()
            with pytest.raises(FetchError, match=r"^no complete response within 1 s after 1 attempts"):
                await with_client(endpoint, http, lambda client: client.request(f"{root}/drip"))
            return time.monotonic() - started

    assert asyncio.run(scenario()) < 3.0
