"""A real aiohttp server on 127.0.0.1 for tests that need a misbehaving API."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web


@contextlib.asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """Serve ``app`` on a free loopback port and yield its root URL."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # the free port the OS chose
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
