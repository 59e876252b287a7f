"""What all backends share: the disk cache, the concurrency bound and the token meter."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.cache import ResponseCache, cache_key
from hysem_assets.llm.completion import Completion, Message, TokenUsage
from hysem_assets.llm.validation import checked
from hysem_assets.settings.backends import GenerationParams


class CachedBackend:
    """Wraps any :class:`LLMBackend`; itself one, so callers never see the difference.

    A cached answer is returned without touching the backend (zero requests); a fresh one
    is checked against the request's schema and stored before it is returned only when it
    satisfies it: an invalid answer comes back with ``invalid`` set and is asked anew next
    time, so a fixed server is never shown its old mistakes. ``usage`` meters this object's
    lifetime: tokens of fresh answers and the number of answers replayed from cache.
    """

    def __init__(
        self,
        inner: LLMBackend,
        *,
        cache: ResponseCache | None,
        max_concurrency: int,
        default_params: GenerationParams | None = None,
    ):
        self.inner = inner
        self.cache = cache
        self.max_concurrency = max_concurrency
        self.default_params = default_params or GenerationParams()
        self.usage = TokenUsage()
        self._semaphore: asyncio.Semaphore | None = None

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def server(self) -> str:
        return self.inner.server

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        params: GenerationParams | None = None,
    ) -> Completion:
        params = params or self.default_params
        key = cache_key(self.model, messages, schema, params.as_dict(), server=self.server)
        completion = self._replayed(key, schema)
        if completion is None:
            if self._semaphore is None:
                self._semaphore = asyncio.Semaphore(self.max_concurrency)
            async with self._semaphore:
                completion = checked(await self.inner.complete(messages, schema=schema, params=params), schema)
            if self.cache and completion.invalid is None:
                self.cache.put(key, completion)
        self.usage.add(completion)
        return completion

    def _replayed(self, key: str, schema: Mapping[str, Any] | None) -> Completion | None:
        """The cached answer, unless it fails the schema (a cache written before answers were checked)."""
        stored = self.cache.get(key) if self.cache else None
        if stored is None:
            return None
        stored = checked(stored, schema)
        return stored if stored.invalid is None else None

    async def aclose(self) -> None:
        """Release the inner backend's connections and the loop-bound semaphore."""
        self._semaphore = None
        await self.inner.aclose()
