"""Stream one PDF link to disk, politely and defensively.

PDF links point at publishers and repositories all over the web, so every host gets its
own rate limiter (the same one-token bucket the API clients use) while one semaphore bounds
the downloads in flight. Redirects are followed by hand, each hop rate-limited, so a loop
or an endless chain ends with a clear reason instead of aiohttp's generic error. A body
is checked while it streams (content type, ``%PDF-`` magic, size cap) and again when it
is complete (structure), and only then moved into place.

Retryable statuses (429, 5xx) and dropped connections are retried with the shared
backoff policy. Timeouts are not: a link that stalled once tends to stall again, a retry
would repeat a transfer of up to ``max_bytes``, and the next run tries the DOI anew.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import aiohttp

from hysem_assets.core.pdfcheck import PDF_MAGIC, pdf_content_type, starts_like_pdf, structural_problem
from hysem_assets.fulltext.outcome import DownloadFailed
from hysem_assets.fulltext.store import PartialFile, partial_file
from hysem_assets.net.http import RETRY_STATUSES, RateLimiter, RetryPolicy, parse_retry_after, redact_url

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class PdfLimits:
    """How much to accept and how politely to ask; the defaults suit the public web."""

    #: Largest body accepted; longer ones end as ``too_large`` without being kept.
    max_bytes: int = 50 * 2**20
    #: Seconds for one response, from sending the request to its last byte (a slow drip ends here).
    timeout_s: float = 300.0
    max_redirects: int = 5
    #: Request starts per second to any one host.
    requests_per_second: float = 2.0
    #: Downloads in flight at once, over all hosts.
    max_concurrency: int = 4

    def __post_init__(self) -> None:
        if (
            min(self.max_bytes, self.timeout_s, self.requests_per_second) <= 0
            or self.max_redirects < 0
            or self.max_concurrency < 1
        ):
            raise ValueError(f"invalid PDF download limits: {self}")


@dataclass(frozen=True)
class Saved:
    sha256: str
    bytes: int


class _Retryable(Exception):
    def __init__(self, reason: str, url: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.url = url
        self.retry_after = retry_after


class PdfDownloader:
    """Downloads PDF links into given paths; safe to share across tasks of one event loop."""

    def __init__(self, session: aiohttp.ClientSession, limits: PdfLimits, retry: RetryPolicy):
        self.session = session
        self.limits = limits
        self.retry = retry
        self.semaphore = asyncio.Semaphore(limits.max_concurrency)
        self._limiters: dict[str, RateLimiter] = {}

    def limiter(self, url: str) -> RateLimiter:
        host = urlsplit(url).netloc.lower()
        if host not in self._limiters:
            self._limiters[host] = RateLimiter(self.limits.requests_per_second)
        return self._limiters[host]

    async def download(self, url: str, target: Path) -> Saved:
        """Save the PDF behind ``url`` at ``target``; DownloadFailed says why not."""
        attempt = 0
        while True:
            try:
                async with self.semaphore:
                    return await self._follow(url, target)
            except _Retryable as retryable:
                if attempt >= self.retry.max_retries:
                    raise DownloadFailed("http_error", f"{retryable.reason} after {attempt + 1} attempts") from None
                delay = self.retry.delay(attempt, retryable.retry_after)
                if retryable.retry_after:
                    self.limiter(retryable.url).defer(retryable.retry_after)
                attempt += 1
                await asyncio.sleep(delay)

    async def _follow(self, url: str, target: Path) -> Saved:
        seen = {url}
        current = url
        for _ in range(self.limits.max_redirects + 1):
            if urlsplit(current).scheme not in ("http", "https"):
                raise DownloadFailed("http_error", f"not an HTTP link: {redact_url(current)}")
            await self.limiter(current).acquire()
            try:
                async with asyncio.timeout(self.limits.timeout_s):
                    async with self.session.get(current, allow_redirects=False) as response:
                        if response.status not in REDIRECT_STATUSES:
                            return await self._receive(response, target)
                        location = response.headers.get("Location")
            except TimeoutError as error:
                # aiohttp's connect and read timeouts say which; asyncio's overall one says nothing
                reason = str(error) or f"no complete response within {self.limits.timeout_s:g} s"
                raise DownloadFailed("timeout", reason) from None
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as error:
                raise _Retryable(_describe(error), current) from error
            except aiohttp.ClientError as error:
                raise DownloadFailed("http_error", _describe(error)) from error
            if not location:
                raise DownloadFailed("http_error", f"HTTP {response.status} redirect without a Location header")
            following = urljoin(current, location)
            if following in seen:
                raise DownloadFailed(
                    "http_error", f"redirect loop: {redact_url(current)} leads back to {redact_url(following)}"
                )
            seen.add(following)
            current = following
        raise DownloadFailed("http_error", f"more than {self.limits.max_redirects} redirects")

    async def _receive(self, response: aiohttp.ClientResponse, target: Path) -> Saved:
        status = response.status
        if status in RETRY_STATUSES:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            raise _Retryable(f"HTTP {status}", str(response.url), retry_after)
        if status != 200:
            raise DownloadFailed("http_error", f"HTTP {status} {response.reason or ''}".rstrip())
        if not pdf_content_type(response.content_type):
            raise DownloadFailed("not_pdf", f"served {response.content_type}, not a PDF")
        cap = self.limits.max_bytes
        if response.content_length is not None and response.content_length > cap:
            raise DownloadFailed("too_large", f"declares {response.content_length:,} bytes, over the {cap:,}-byte cap")
        with partial_file(target) as partial:
            digest, size, head = hashlib.sha256(), 0, b""
            async for chunk in response.content.iter_chunked(_CHUNK):
                if len(head) < len(PDF_MAGIC):
                    head += chunk[: len(PDF_MAGIC)]
                    if len(head) >= len(PDF_MAGIC) and not starts_like_pdf(head):
                        raise DownloadFailed("not_pdf", f"does not start with %PDF- (starts with {head[:16]!r})")
                size += len(chunk)
                if size > cap:
                    raise DownloadFailed("too_large", f"more than the {cap:,}-byte cap")
                digest.update(chunk)
                partial.write(chunk)
            if not starts_like_pdf(head):
                raise DownloadFailed("not_pdf", f"does not start with %PDF- ({size} bytes in all)")
            problem = await asyncio.to_thread(_sealed_problem, partial)
            if problem:
                raise DownloadFailed("invalid_pdf", problem)
            partial.commit()
        return Saved(digest.hexdigest(), size)


def _sealed_problem(partial: PartialFile) -> str | None:
    """Flush the file to disk, then check it: both block, so both run off the event loop."""
    partial.close()
    return structural_problem(partial.path)


def _describe(error: Exception) -> str:
    return f"{type(error).__name__}: {error}".rstrip(": ")
