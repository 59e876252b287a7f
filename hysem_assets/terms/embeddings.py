"""Term embeddings cached on disk by content, so an unchanged dictionary or term list is embedded once."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hysem_assets.embedding.encoder import Encoder, Progress
from hysem_assets.settings.dictionaries import SynonymDictionary


def cached_embeddings(
    encoder: Encoder, texts: Sequence[str], digest: str, cache_dir: Path, progress: Progress | None = None
) -> tuple[np.ndarray, bool]:
    """Embeddings of ``texts`` and whether they came from the cache.

    The file name is a hash of the encoder's cache space (model name, the hash of its files, backend) and
    ``digest`` (a hash of the content), so edited content or other weights get new embeddings and unchanged
    content is never embedded twice.
    """
    key = hashlib.sha256(f"{encoder.cache_space}\n{digest}".encode()).hexdigest()
    path = cache_dir / f"{key}.npy"
    if path.is_file():
        cached = np.load(path)
        if cached.shape[0] == len(texts):
            return cached, True
    vectors = encoder.encode(texts, progress)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(partial, vectors)
    partial.replace(path)
    return vectors, False


def dictionary_embeddings(encoder: Encoder, dictionary: SynonymDictionary, cache_dir: Path) -> tuple[np.ndarray, bool]:
    """Embeddings of ``dictionary.spellings``, cached by the dictionary's digest."""
    return cached_embeddings(encoder, [spelling for spelling, _ in dictionary.spellings], dictionary.digest, cache_dir)


def term_embeddings(
    encoder: Encoder, terms: Sequence[str], cache_dir: Path, progress: Progress | None = None
) -> tuple[np.ndarray, bool]:
    """Embeddings of ``terms`` (one row each), cached by the set of terms, whatever their order."""
    distinct = sorted(set(terms))
    digest = hashlib.sha256(json.dumps(distinct, ensure_ascii=False).encode("utf-8")).hexdigest()
    vectors, hit = cached_embeddings(encoder, distinct, digest, cache_dir, progress)
    row = {term: index for index, term in enumerate(distinct)}
    return vectors[[row[term] for term in terms]], hit
