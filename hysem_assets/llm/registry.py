"""From a profile's backend mapping to a ready backend with cache, bound and meter."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hysem_assets.environment import hysem_home
from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.cache import ResponseCache
from hysem_assets.llm.cached import CachedBackend
from hysem_assets.llm.config import BackendConfig, parse_backend_config

if TYPE_CHECKING:
    from hysem_assets.protocols import Protocol


def _http(config: Any, protocol: Protocol | None) -> LLMBackend:
    from hysem_assets.llm.openai_compatible import from_config

    return from_config(config)


def _vllm_inproc(config: Any, protocol: Protocol | None) -> LLMBackend:
    from hysem_assets.llm.vllm_inproc import from_config

    return from_config(config)


def _extractive(config: Any, protocol: Protocol | None) -> LLMBackend:
    from hysem_assets.extraction.extractive import from_config

    return from_config(config, protocol)


#: Factories by the profile's ``backend`` name. Imports stay inside them, so choosing an
#: HTTP backend never loads torch and a missing optional vllm fails only where it is chosen.
#: Model servers get each request's JSON schema, so they ignore the protocol; the extractive
#: backend reads its fields, dictionaries and cues from it.
FACTORIES: dict[str, Callable[[BackendConfig, Protocol | None], LLMBackend]] = {
    "vllm": _http,
    "openai": _http,
    "vllm_inproc": _vllm_inproc,
    "extractive": _extractive,
}


def default_cache_dir() -> Path:
    return hysem_home() / "llm_cache"


def build_backend(
    config: Mapping[str, Any], *, cache_dir: Path | None = None, protocol: Protocol | None = None
) -> CachedBackend:
    """The backend ``config`` describes, wrapped with the shared cache, bound and token meter.

    ``cache_dir`` (e.g. one per asset) wins over the config's ``cache_dir``, which wins
    over ``$HYSEM_HOME/llm_cache``. ``protocol`` is the query's review protocol: the
    extractive backend fills its fields (the ``generic`` protocol when None) and names
    its fingerprint in its model id, so a protocol edit never replays stale answers.
    """
    parsed = parse_backend_config(config)
    directory = cache_dir or parsed.cache_dir or default_cache_dir()
    return CachedBackend(
        FACTORIES[parsed.backend](parsed, protocol),
        cache=ResponseCache(directory) if parsed.cache else None,
        max_concurrency=parsed.max_concurrency,
        default_params=parsed.params,
    )
