"""Polite, resilient HTTP for every scholarly API.

One :class:`HttpClient` per source wraps a shared aiohttp session with a per-host
rate limiter, a concurrency bound, a deadline for each whole request, and retries with
exponential backoff and jitter on 429, 5xx, timeouts and dropped connections, honouring
``Retry-After``. Callers get bytes or a :class:`FetchError`; they decide whether a
failure is fatal.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

import aiohttp

from hysem_assets.settings.profile import HttpSettings
from hysem_assets.settings.redaction import redact, redact_url

__all__ = ["FetchError", "HttpClient", "RateLimiter", "RequestStats", "RetryPolicy", "parse_retry_after", "redact_url"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class FetchError(Exception):
    """A request that failed for good (after retries, or with a non-retryable status).

    The URL and the reason are masked here, where an upstream body or a library's
    message first becomes hysem's text: an error page may echo the request, key and all.
    """

    def __init__(self, url: str, reason: str, status: int | None = None):
        self.url = redact_url(url)
        self.reason = redact(reason)
        self.status = status
        super().__init__(f"{self.reason} ({self.url})")


class RateLimiter:
    """A token bucket of one token: request starts are spaced evenly below ``rate``.

    A deeper bucket would allow bursts of up to ``rate`` extra requests inside one
    second, which API terms (NCBI: 3/s, 10/s with a key) forbid. ``headroom`` keeps
    the spacing a little wider than ``1/rate`` so that network jitter cannot push
    the server's count in any one-second window above the limit.
    """

    def __init__(self, rate: float, headroom: float = 0.03):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.interval = 1.0 / (rate * (1.0 - headroom))
        self._next_start = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        """Wait for the next slot; the slot is taken when the caller actually starts.

        Booking slots ahead would let tasks that wake late (a busy event loop) go out
        in a bunch; measuring from the real start keeps every gap at least ``interval``.
        """
        async with self._lock:
            wait = self._next_start - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._next_start = time.monotonic() + self.interval

    def defer(self, seconds: float) -> None:
        """Push every later start back, e.g. after a 429 with ``Retry-After``."""
        self._next_start = max(self._next_start, time.monotonic() + seconds)


@dataclass
class RetryPolicy:
    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Full-jitter exponential backoff; a server's ``Retry-After`` is a floor."""
        backoff = random.uniform(0, min(self.backoff_max_s, self.backoff_base_s * 2**attempt))
        return max(backoff, retry_after or 0.0)

    @classmethod
    def from_settings(cls, http: HttpSettings) -> RetryPolicy:
        return cls(http.max_retries, http.backoff_base_s, http.backoff_max_s)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class RequestStats:
    requests: int = 0
    retries: int = 0
    failures: int = 0
    statuses: dict[int, int] = field(default_factory=dict)


class HttpClient:
    """Rate-limited, retrying GET/POST for one host; safe to share across tasks.

    The session's timeouts bound connecting and each wait for bytes, so a server that
    sends a byte now and then would hold a request forever; ``deadline_s`` bounds each
    attempt as a whole (connect, headers and body) and is retried like any timeout.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        requests_per_second: float,
        max_concurrency: int = 4,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        deadline_s: float | None = None,
    ):
        self.session = session
        self.deadline_s = deadline_s
        self.limiter = RateLimiter(requests_per_second)
        self.semaphore = asyncio.Semaphore(max_concurrency)
        self.retry = retry or RetryPolicy()
        self.headers = dict(headers or {})
        self.stats = RequestStats()

    async def request(
        self,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        data: Mapping[str, str | int] | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        ok_statuses: frozenset[int] = frozenset({200}),
    ) -> tuple[int, bytes]:
        """Send the request (POST when ``data`` is given) and return status and body.

        Statuses in ``ok_statuses`` are returned as they are, so a source can read its
        own error bodies (e.g. a 404 meaning "no such DOI"); retryable ones are retried;
        anything else raises :class:`FetchError` with the redacted URL.
        """
        method = "POST" if data is not None else "GET"
        full_url = url + ("?" + urlencode(params) if params else "")
        merged_headers = {**self.headers, **(headers or {})}
        attempt = 0
        while True:
            retry_after: float | None = None
            async with self.semaphore:
                await self.limiter.acquire()
                self.stats.requests += 1
                try:
                    async with (
                        asyncio.timeout(self.deadline_s) as deadline,
                        self.session.request(method, url, params=params, data=data, headers=merged_headers) as response,
                    ):
                        body = await response.read()
                        status = response.status
                        self.stats.statuses[status] = self.stats.statuses.get(status, 0) + 1
                        if status in ok_statuses:
                            return status, body
                        if status not in RETRY_STATUSES:
                            self.stats.failures += 1
                            raise FetchError(full_url, f"HTTP {status}: {_snippet(body)}", status)
                        retry_after = parse_retry_after(response.headers.get("Retry-After"))
                        reason, failed_status = f"HTTP {status}", status
                except (asyncio.TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
                    reason, failed_status = f"{type(exc).__name__}: {exc}".rstrip(": "), None
                    if deadline.expired():
                        reason = f"no complete response within {self.deadline_s:g} s"
            if attempt >= self.retry.max_retries:
                self.stats.failures += 1
                raise FetchError(full_url, f"{reason} after {attempt + 1} attempts", failed_status)
            delay = self.retry.delay(attempt, retry_after)
            if retry_after:
                self.limiter.defer(retry_after)
            self.stats.retries += 1
            attempt += 1
            await asyncio.sleep(delay)


def _snippet(body: bytes, limit: int = 200) -> str:
    """The start of an error body for the message, secrets masked before it is cut."""
    text = redact(" ".join(body[: limit * 8 + 4096].decode("utf-8", "replace").split()))
    return text[:limit] + ("…" if len(text) > limit else "")


def make_session(http: HttpSettings, user_agent: str) -> aiohttp.ClientSession:
    """A session with the profile's connect/read timeouts and an identifying User-Agent.

    The whole-request deadline (``http.total_timeout_s``) is the :class:`HttpClient`'s, not
    the session's: PDF downloads share the session and keep their own (``pdfs.timeout_s``).
    """
    timeout = aiohttp.ClientTimeout(sock_connect=http.connect_timeout_s, sock_read=http.read_timeout_s)
    return aiohttp.ClientSession(timeout=timeout, headers={"User-Agent": user_agent})
