"""The one interface every model backend implements, so assets never care which one runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from hysem_assets.llm.completion import Completion, Message
from hysem_assets.settings.backends import GenerationParams


@runtime_checkable
class LLMBackend(Protocol):
    """Answers chat requests, optionally constrained to a JSON schema.

    ``model`` names what answers and ``server`` where (its URL with secrets masked, empty
    for a model in this process); both are hashed into cache keys, so two models or two
    servers never share cached answers. Implementations raise :class:`~hysem_assets.llm.completion.LLMError`
    for requests they cannot answer; ``aclose`` releases connections bound to the running
    event loop, after which the backend may be used again from another loop.
    """

    @property
    def model(self) -> str: ...

    @property
    def server(self) -> str: ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: Mapping[str, Any] | None = None,
        params: GenerationParams | None = None,
    ) -> Completion: ...

    async def aclose(self) -> None: ...
