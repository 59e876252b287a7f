"""From a profile's backend mapping to a ready backend with cache, bound and meter."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.cache import ResponseCache
from hysem_assets.llm.cached import CachedBackend
from hysem_assets.settings.backends import BackendConfig, BackendConfigError, parse_backend_config
from hysem_assets.settings.environment import hysem_home

if TYPE_CHECKING:
    from hysem_assets.settings.protocols import Protocol


def _http(config: Any, protocol: Protocol | None) -> LLMBackend:
    from hysem_assets.llm.openai_compatible import from_config

    return from_config(config)


def _vllm_inproc(config: Any, protocol: Protocol | None) -> LLMBackend:
    from hysem_assets.llm.vllm_inproc import from_config

    return from_config(config)


Factory = Callable[[BackendConfig, "Protocol | None"], LLMBackend]

#: Model servers by the profile's ``backend`` name. Imports stay inside the factories, so
#: choosing an HTTP backend never loads torch and a missing optional vllm fails only where it
#: is chosen. They get each request's JSON schema, so they ignore the protocol. The embedded
#: ``extractive`` backend is a stage of its own: :mod:`hysem_assets.extraction.backends` adds it.
FACTORIES: dict[str, Factory] = {
    "vllm": _http,
    "openai": _http,
    "vllm_inproc": _vllm_inproc,
}


def default_cache_dir() -> Path:
    return hysem_home() / "llm_cache"


def build_backend(
    config: Mapping[str, Any],
    *,
    cache_dir: Path | None = None,
    protocol: Protocol | None = None,
    factories: Mapping[str, Factory] = FACTORIES,
) -> CachedBackend:
    """The backend ``config`` describes, wrapped with the shared cache, bound and token meter.

    ``cache_dir`` (e.g. one per asset) wins over the config's ``cache_dir``, which wins
    over ``$HYSEM_HOME/llm_cache``. ``factories`` names the backends allowed here;
    ``protocol`` goes to the factory (the embedded extractor fills its fields, see
    :mod:`hysem_assets.extraction.backends`; model servers ignore it).
    """
    parsed = parse_backend_config(config)
    if parsed.backend not in factories:
        raise BackendConfigError(
            f"backend {parsed.backend!r} cannot serve here: choose one of {', '.join(sorted(factories))}"
        )
    directory = cache_dir or parsed.cache_dir or default_cache_dir()
    return CachedBackend(
        factories[parsed.backend](parsed, protocol),
        cache=ResponseCache(directory) if parsed.cache else None,
        max_concurrency=parsed.max_concurrency,
        default_params=parsed.params,
    )
