"""The packaged all-MiniLM-L6-v2, loaded from disk: no network, no download, no token."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from hysem_assets.minilm import packaged_model_path

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


@lru_cache(maxsize=2)
def sentence_model(name_or_path: str | None = None, device: str = "cpu") -> SentenceTransformer:
    """A sentence-transformers model, once per process; a local directory is never looked up online."""
    from sentence_transformers import SentenceTransformer

    location = name_or_path or str(packaged_model_path())
    return SentenceTransformer(location, device=device, local_files_only=Path(location).is_dir())
