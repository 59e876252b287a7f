"""What a test's mirror is asked for, counted by path through an aiohttp middleware."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from aiohttp import web


class Recorder:
    """Counts the paths the mirror is asked for."""

    def __init__(self) -> None:
        self.paths: Counter[str] = Counter()

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        self.paths[request.path] += 1
        return await handler(request)

    def asked(self, wanted: Callable[[str], bool]) -> Counter[str]:
        """The paths ``wanted`` keeps, with how often each was asked for."""
        return Counter({path: n for path, n in self.paths.items() if wanted(path)})
