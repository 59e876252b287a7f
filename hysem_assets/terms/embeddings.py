"""Term embeddings: a counting encoder, and dictionary embeddings cached on disk by content."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hysem_assets.extraction.embeddings import sentence_model
from hysem_assets.terms.dictionaries import SynonymDictionary

PACKAGED_MODEL = "all-MiniLM-L6-v2"


@dataclass
class TermEncoder:
    """A sentence-transformers model (default: the packaged all-MiniLM-L6-v2) on one device.

    ``encoded`` counts the texts it has embedded, so a run can report, and a test check, that
    cached dictionaries were not embedded again.
    """

    model: str | None = None
    device: str = "cpu"
    batch_size: int = 256
    encoded: int = field(default=0, init=False)

    @property
    def name(self) -> str:
        return self.model or PACKAGED_MODEL

    def encode(self, texts: list[str], progress: Callable[[int, int | None], None] | None = None) -> np.ndarray:
        """Unit-length float32 rows, so a dot product is the cosine similarity."""
        model = sentence_model(self.model, self.device)
        step = self.batch_size * 16
        parts = []
        for start in range(0, len(texts), step):
            chunk = texts[start : start + step]
            parts.append(model.encode(
                chunk, batch_size=self.batch_size, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            ).astype(np.float32))
            self.encoded += len(chunk)
            if progress:
                progress(start + len(chunk), len(texts))
        return np.vstack(parts)


def dictionary_embeddings(encoder: TermEncoder, dictionary: SynonymDictionary, cache_dir: Path) -> tuple[np.ndarray, bool]:
    """Embeddings of ``dictionary.spellings`` and whether they came from the cache.

    The file name is a hash of the model's name and the dictionary's content, so an edited
    dictionary or another model gets new embeddings and an unchanged one is never embedded twice.
    """
    key = hashlib.sha256(f"{encoder.name}\n{dictionary.digest}".encode()).hexdigest()
    path = cache_dir / f"{key}.npy"
    spellings = [spelling for spelling, _ in dictionary.spellings]
    if path.is_file():
        cached = np.load(path)
        if cached.shape[0] == len(spellings):
            return cached, True
    vectors = encoder.encode(spellings)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(partial, vectors)
    partial.replace(path)
    return vectors, False
