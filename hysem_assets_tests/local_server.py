"""A real aiohttp server on 127.0.0.1 for tests that need a misbehaving API."""

from __future__ import annotations

import asyncio
import contextlib
import threading
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


class ThreadedServer:
    """Runs an aiohttp app on a loopback port from synchronous test code."""

    def __init__(self, app: web.Application):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._context = serving(app)
        self.url = self._call(self._context.__aenter__())

    def _call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)

    def close(self) -> None:
        self._call(self._context.__aexit__(None, None, None))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
