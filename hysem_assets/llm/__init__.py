"""Model backends behind one interface: vLLM, OpenAI-compatible servers, in-process vLLM, extractive."""

from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.cache import ResponseCache, cache_key
from hysem_assets.llm.cached import CachedBackend
from hysem_assets.llm.completion import Completion, GenerationParams, LLMError, Message, TokenUsage, parse_json_text
from hysem_assets.llm.config import BackendConfigError, parse_backend_config
from hysem_assets.llm.registry import build_backend, default_cache_dir

__all__ = [
    "BackendConfigError",
    "CachedBackend",
    "Completion",
    "GenerationParams",
    "LLMBackend",
    "LLMError",
    "Message",
    "ResponseCache",
    "TokenUsage",
    "build_backend",
    "cache_key",
    "default_cache_dir",
    "parse_backend_config",
    "parse_json_text",
]
