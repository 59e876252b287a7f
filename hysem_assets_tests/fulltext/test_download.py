"""PdfDownloader against a small misbehaving server: redirects, retries, stalls, disguised pages."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from hysem_assets.fulltext.download import PdfDownloader, PdfLimits
from hysem_assets.fulltext.outcome import DownloadFailed
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.net.http import RetryPolicy
from hysem_assets_tests.local_server import serving

PDF = (default_snapshot_dir() / "files" / "10.9999_eer.2022.214.pdf").read_bytes()
LIMITS = PdfLimits(max_bytes=1 << 20, timeout_s=2.0, max_redirects=5, requests_per_second=500, max_concurrency=4)


def app(hits: Counter[str]) -> web.Application:
    async def hop(request: web.Request) -> web.Response:
        hits[request.path] += 1
        left = int(request.match_info["left"])
        location = "/paper.pdf" if left == 0 else f"/hop/{left - 1}"
        return web.Response(status=302, headers={"Location": location})

    async def paper(request: web.Request) -> web.Response:
        hits[request.path] += 1
        return web.Response(body=PDF, content_type="application/pdf")

    async def flaky(request: web.Request) -> web.Response:
        hits[request.path] += 1
        if hits[request.path] == 1:
            return web.Response(status=503, headers={"Retry-After": "0"})
        return web.Response(body=PDF, content_type="application/pdf")

    async def disguised(request: web.Request) -> web.Response:
        return web.Response(body=b"<!DOCTYPE html><p>Sign in</p>", content_type="application/octet-stream")

    async def stalled(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/pdf"})
        await response.prepare(request)
        await response.write(b"%PDF-1.7\n")
        try:
            for _ in range(10):  # pauses longer than the client's read timeout
                await asyncio.sleep(0.5)
                await response.write(b"0")
        except ConnectionError:
            pass
        return response

    async def nowhere(request: web.Request) -> web.Response:
        return web.Response(status=302)

    application = web.Application()
    application.router.add_get("/hop/{left}", hop)
    application.router.add_get("/paper.pdf", paper)
    application.router.add_get("/flaky.pdf", flaky)
    application.router.add_get("/disguised.pdf", disguised)
    application.router.add_get("/stalled.pdf", stalled)
    application.router.add_get("/nowhere.pdf", nowhere)
    return application


async def fetch(path: str, target: Path, *, read_timeout_s: float = 5.0) -> tuple[object, Counter[str]]:
    """Download ``path`` from a fresh server; the result is the Saved record or the DownloadFailed."""
    hits: Counter[str] = Counter()
    async with serving(app(hits)) as root:
        timeout = aiohttp.ClientTimeout(sock_connect=2, sock_read=read_timeout_s)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            downloader = PdfDownloader(session, LIMITS, RetryPolicy(max_retries=2, backoff_base_s=0.01))
            try:
                return await downloader.download(root + path, target), hits
            except DownloadFailed as failed:
                return failed, hits


def leftovers(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()]


def test_redirects_are_followed_up_to_the_limit(tmp_path: Path) -> None:
    target = tmp_path / "ab" / "x.pdf"
    saved, hits = asyncio.run(fetch("/hop/4", target))
    assert target.read_bytes() == PDF and saved.bytes == len(PDF)
    assert hits["/paper.pdf"] == 1 and sum(hits.values()) == 6


def test_a_chain_past_the_limit_is_an_http_error(tmp_path: Path) -> None:
    failed, hits = asyncio.run(fetch("/hop/5", tmp_path / "x.pdf"))
    assert (failed.status, failed.reason) == ("http_error", "more than 5 redirects")
    assert hits["/paper.pdf"] == 0 and not leftovers(tmp_path)


def test_a_redirect_without_location_is_an_http_error(tmp_path: Path) -> None:
    failed, _ = asyncio.run(fetch("/nowhere.pdf", tmp_path / "x.pdf"))
    assert (failed.status, failed.reason) == ("http_error", "HTTP 302 redirect without a Location header")


def test_retryable_statuses_are_retried(tmp_path: Path) -> None:
    saved, hits = asyncio.run(fetch("/flaky.pdf", tmp_path / "x.pdf"))
    assert hits["/flaky.pdf"] == 2 and saved.bytes == len(PDF)


def test_a_page_labelled_as_binary_is_caught_by_the_magic_check(tmp_path: Path) -> None:
    failed, _ = asyncio.run(fetch("/disguised.pdf", tmp_path / "x.pdf"))
    assert failed.status == "not_pdf" and failed.reason.startswith("does not start with %PDF- (starts with b'<!DOC")
    assert not leftovers(tmp_path)


def test_a_stalled_body_ends_at_the_read_timeout_and_leaves_nothing(tmp_path: Path) -> None:
    started = time.monotonic()
    failed, _ = asyncio.run(fetch("/stalled.pdf", tmp_path / "x.pdf", read_timeout_s=0.3))
    assert failed.status == "timeout" and "Timeout on reading data from socket" in failed.reason
    assert time.monotonic() - started < 2.5
    assert not leftovers(tmp_path)


def test_links_that_are_not_http_are_refused(tmp_path: Path) -> None:
    async def attempt() -> DownloadFailed:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(DownloadFailed) as caught:
                await PdfDownloader(session, LIMITS, RetryPolicy()).download("ftp://example.org/x.pdf", tmp_path / "x")
            return caught.value

    failed = asyncio.run(attempt())
    assert (failed.status, failed.reason) == ("http_error", "not an HTTP link: ftp://example.org/x.pdf")
