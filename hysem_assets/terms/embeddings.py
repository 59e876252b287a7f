"""Dictionary embeddings cached on disk by content, so an unchanged dictionary is embedded once."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from hysem_assets.embeddings import Encoder
from hysem_assets.terms.dictionaries import SynonymDictionary


def dictionary_embeddings(encoder: Encoder, dictionary: SynonymDictionary, cache_dir: Path) -> tuple[np.ndarray, bool]:
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
