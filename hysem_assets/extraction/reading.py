"""One excerpt read once for every field: sentences with offsets, their embeddings, noun phrases, abbreviations.

Fields of a protocol look at the same text in different ways; reading it once keeps the
embedded extractor fast (each sentence and phrase is embedded once per document, in
batches) and keeps offsets consistent for evidence.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from hysem_assets.embeddings import Encoder
from hysem_assets.extraction.phrases import Phrase, abbreviations, noun_phrases
from hysem_assets.extraction.text import normalized_sentence, sentence_spans


class Reading:
    """The text of one request, split and embedded lazily; ``lock`` serialises encoder passes."""

    def __init__(
        self,
        text: str,
        encoder: Encoder,
        lock: threading.Lock | None = None,
        constants: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.text = text
        self.constants = {} if constants is None else constants
        self.encoder = encoder
        self.lock = lock or threading.Lock()
        self.spans = sentence_spans(text)
        self.sentences = [normalized_sentence(text[start:end]) for start, end in self.spans]
        self._vectors: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``; each distinct text is encoded once per reading, new ones in one batch."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            with self.lock:
                vectors = self.encoder.encode(missing)
            self._vectors.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([self._vectors[t] for t in texts])

    def embed_constant(self, texts: Sequence[str]) -> np.ndarray:
        """Like :meth:`embed`, for texts every document shares (field descriptions), kept across readings."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.constants))
        if missing:
            with self.lock:
                vectors = self.encoder.encode(missing)
            self.constants.update(zip(missing, vectors, strict=True))
        return np.vstack([self.constants[t] for t in texts])

    @cached_property
    def sentence_vectors(self) -> np.ndarray:
        return self.embed(self.sentences)

    @cached_property
    def phrases(self) -> list[list[Phrase]]:
        """Noun phrases per sentence, offsets in the whole text."""
        return [noun_phrases(self.text[start:end], start) for start, end in self.spans]

    @cached_property
    def abbreviations(self) -> dict[str, str]:
        return abbreviations(self.text)

    def sentence_at(self, position: int) -> int:
        """Index of the sentence holding character ``position`` (the nearest one before it otherwise)."""
        index = 0
        for number, (start, _) in enumerate(self.spans):
            if start <= position:
                index = number
        return index

    @cached_property
    def title_index(self) -> int | None:
        """0 when the first sentence is a paragraph of its own (a title, as documents start), else None."""
        if not self.spans:
            return None
        end = self.spans[0][1]
        return 0 if self.text[end:].lstrip(" \t").startswith("\n") or end == len(self.text) else None
