"""PDF download throughput against a slow local server, under the per-host rate limit.

A loopback server answers Unpaywall lookups at once and serves a small valid PDF (one of
the sample's) after 100 ms. The PDF stage downloads 300 of them, limited to 20 downloads/s
per host, and the script prints the achieved rate as a ratio of that limit (target: at
least 0.90) and the most PDF requests the server saw in any one-second window (target:
never above the limit). Every download goes the whole way: streamed, hashed, checked with
pypdf and moved into place. For contrast it also measures the same stage with the limiter
effectively off.

    python benchmarks/pdf_download.py [--downloads 300] [--rate 20] [--latency 0.1] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
from aiohttp import web
from fetch_throughput import max_in_window

from hysem_assets.fulltext.download import PdfLimits
from hysem_assets.fulltext.pdfs import download_pdfs
from hysem_assets.mirror.server import default_snapshot_dir
from hysem_assets.settings.profile import HttpSettings
from hysem_assets.sources.base import Endpoint

PDF = (default_snapshot_dir() / "files" / "10.9999_eer.2022.214.pdf").read_bytes()


def publisher_app(latency_s: float, arrivals: list[float]) -> web.Application:
    async def unpaywall(request: web.Request) -> web.Response:
        doi = request.match_info["doi"]
        root = f"{request.scheme}://{request.host}"
        location = {
            "url_for_pdf": f"{root}/pdf/{doi.rsplit('.', 1)[-1]}.pdf",
            "url": None,
            "host_type": "publisher",
            "version": "publishedVersion",
            "license": "cc-by",
        }
        return web.json_response({"doi": doi, "best_oa_location": location, "oa_locations": [location]})

    async def pdf(request: web.Request) -> web.Response:
        arrivals.append(time.monotonic())
        await asyncio.sleep(latency_s)
        return web.Response(body=PDF, content_type="application/pdf")

    app = web.Application()
    app.router.add_get("/v2/{doi:.+}", unpaywall)
    app.router.add_get("/pdf/{name}", pdf)
    return app


@contextlib.contextmanager
def serving(app: web.Application) -> Iterator[int]:
    """Serve ``app`` on a free loopback port from its own thread and event loop.

    The PDF stage does file work between requests; on the client's loop the server would
    log an arrival only when that work yields, which bunches arrivals that were spaced.
    """
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = web.AppRunner(app, access_log=None)

    async def start() -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return site._server.sockets[0].getsockname()[1]  # the free port the OS chose

    try:
        yield asyncio.run_coroutine_threadsafe(start(), loop).result()
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


def run(downloads: int, rate: float, latency_s: float, concurrency: int) -> tuple[float, int]:
    arrivals: list[float] = []
    records = pd.DataFrame({"cluster_id": range(downloads), "doi": [f"10.5555/bench.{n}" for n in range(downloads)]})
    limits = PdfLimits(requests_per_second=rate, max_concurrency=concurrency)
    with serving(publisher_app(latency_s, arrivals)) as port, tempfile.TemporaryDirectory() as folder:
        unpaywall = Endpoint(
            "unpaywall",
            f"http://127.0.0.1:{port}",
            requests_per_second=1e6,
            max_concurrency=32,
            page_size=1,
            mailto="bench@example.org",
        )
        started = time.monotonic()
        table = download_pdfs(records, unpaywall, Path(folder), HttpSettings(max_retries=0), limits=limits)
        elapsed = time.monotonic() - started
    saved = int((table["status"] == "saved").sum())
    if saved != downloads:
        raise SystemExit(f"only {saved} of {downloads} downloads were saved:\n{table['reason'].value_counts()}")
    return downloads / elapsed, max_in_window(arrivals)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--downloads", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    unlimited_rate, unlimited_peak = run(args.downloads // 2, 1e6, args.latency, args.concurrency)
    achieved, peak = run(args.downloads, args.rate, args.latency, args.concurrency)
    ratio = achieved / args.rate
    print(
        f"baseline (no rate limit, {args.concurrency} in flight): {unlimited_rate:.1f} downloads/s, "
        f"peak {unlimited_peak} in 1 s"
    )
    print(f"limited to {args.rate:g} downloads/s per host: {achieved:.1f} downloads/s, peak {peak} in any 1 s window")
    print(f"achieved/limit ratio: {ratio:.3f} (target >= 0.90); peak/limit: {peak / args.rate:.3f} (target <= 1.00)")
    return 0 if ratio >= 0.9 and peak <= args.rate else 1


if __name__ == "__main__":
    sys.exit(main())
