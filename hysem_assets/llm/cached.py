"""What all backends share: the disk cache, the concurrency bound and the token meter."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.cache import ResponseCache, cache_key
from hysem_assets.llm.completion import Completion, Message, TokenUsage, parse_json_text
from hysem_assets.settings.backends import GenerationParams


class CachedBackend:
    """Wraps any :class:`LLMBackend`; itself one, so callers never see the difference.

    A cached answer is returned without touching the backend (zero requests); a fresh one
    is stored before it is returned. ``usage`` meters this object's lifetime: tokens of
    fresh answers and the number of answers replayed from cache.
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

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        params: GenerationParams | None = None,
    ) -> Completion:
        params = params or self.default_params
        key = cache_key(self.model, messages, schema, params.as_dict())
        completion = self.cache.get(key) if self.cache else None
        if completion is None:
            if self._semaphore is None:
                self._semaphore = asyncio.Semaphore(self.max_concurrency)
            async with self._semaphore:
                completion = await self.inner.complete(messages, schema=schema, params=params)
            if self.cache:
                self.cache.put(key, completion)
        if schema is not None and completion.parsed_json is None:
            completion = replace(completion, parsed_json=parse_json_text(completion.text))
        self.usage.add(completion)
        return completion

    async def aclose(self) -> None:
        """Release the inner backend's connections and the loop-bound semaphore."""
        self._semaphore = None
        await self.inner.aclose()
