"""The backend that fills a protocol's fields: any model server, or the embedded extractor."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hysem_assets.llm.backend import LLMBackend
from hysem_assets.llm.cached import CachedBackend
from hysem_assets.llm.registry import FACTORIES, Factory
from hysem_assets.llm.registry import build_backend as build_model_backend
from hysem_assets.settings.backends import BackendConfig
from hysem_assets.settings.protocols import Protocol


def _extractive(config: BackendConfig, protocol: Protocol | None) -> LLMBackend:
    # Imported here so that a model server never loads the embedded extractor's models.
    from hysem_assets.extraction.extractive import from_config

    return from_config(config, protocol)


#: Model servers plus the embedded extractor, which reads its fields, dictionaries and cues
#: from the protocol.
EXTRACTION_FACTORIES: dict[str, Factory] = {**FACTORIES, "extractive": _extractive}


def build_backend(
    config: Mapping[str, Any], *, cache_dir: Path | None = None, protocol: Protocol | None = None
) -> CachedBackend:
    """:func:`hysem_assets.llm.registry.build_backend`, with ``backend: extractive`` allowed."""
    return build_model_backend(config, cache_dir=cache_dir, protocol=protocol, factories=EXTRACTION_FACTORIES)
