"""Rate-limiter throughput against a slow local server.

A loopback server answers every request after 100 ms. The client is configured for
50 requests/s and sends 1,000 requests. The script prints the achieved rate as a
ratio of the configured limit (target: at least 0.90) and the most request starts the
server saw in any one-second window (target: never above the limit). For contrast it
also measures the same client with the limiter effectively off.

    python benchmarks/fetch_throughput.py [--requests 1000] [--rate 50] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import sys
import time

import aiohttp
from aiohttp import web

from hysem_assets.net.http import HttpClient, RetryPolicy


def slow_app(latency_s: float, arrivals: list[float]) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        arrivals.append(time.monotonic())
        await asyncio.sleep(latency_s)
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/item", handle)
    return app


def max_in_window(times: list[float], window_s: float = 1.0) -> int:
    """Most events in any half-open window [t, t + window) that starts at an event."""
    ordered = sorted(times)
    return max((bisect.bisect_left(ordered, t + window_s) - i for i, t in enumerate(ordered)), default=0)


async def run(requests: int, rate: float, latency_s: float, concurrency: int) -> tuple[float, int]:
    arrivals: list[float] = []
    runner = web.AppRunner(slow_app(latency_s, arrivals))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # the free port the OS chose
    connector = aiohttp.TCPConnector(limit=concurrency)
    try:
        async with aiohttp.ClientSession(connector=connector) as session:
            client = HttpClient(
                session, requests_per_second=rate, max_concurrency=concurrency, retry=RetryPolicy(max_retries=0)
            )
            started = time.monotonic()
            await asyncio.gather(*(client.request(f"http://127.0.0.1:{port}/item") for _ in range(requests)))
            elapsed = time.monotonic() - started
    finally:
        await runner.cleanup()
    return requests / elapsed, max_in_window(arrivals)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    unlimited_rate, unlimited_peak = asyncio.run(run(args.requests // 4, 1e6, args.latency, args.concurrency))
    achieved, peak = asyncio.run(run(args.requests, args.rate, args.latency, args.concurrency))
    ratio = achieved / args.rate
    print(
        f"baseline (no rate limit, {args.concurrency} in flight): {unlimited_rate:.1f} req/s, peak {unlimited_peak} in 1 s"
    )
    print(f"limited to {args.rate:g} req/s: {achieved:.1f} req/s, peak {peak} in any 1 s window")
    print(f"achieved/limit ratio: {ratio:.3f} (target >= 0.90); peak/limit: {peak / args.rate:.3f} (target <= 1.00)")
    return 0 if ratio >= 0.9 and peak <= args.rate else 1


if __name__ == "__main__":
    sys.exit(main())
