"""One excerpt read once for every field: sentences with offsets, their embeddings, noun phrases, abbreviations.

Fields of a protocol look at the same text in different ways; reading it once keeps the
embedded extractor fast (each sentence and phrase is embedded once per document, in
batches) and keeps offsets consistent for evidence. A long excerpt embeds only the
sentences :func:`~hysem_assets.extraction.focus.focus_sentences` picks. Each sentence
weighs by the part of the work it stands in (:mod:`~hysem_assets.extraction.sections`):
a methods or results sentence outranks an introduction sentence saying the same.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from hysem_assets.core.abbreviations import abbreviations
from hysem_assets.core.matcher import TermMatcher
from hysem_assets.core.text import normalized_sentence, sentence_spans
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.extraction.focus import focus_sentences
from hysem_assets.extraction.phrases import Phrase, noun_phrases
from hysem_assets.extraction.sections import sentence_weights

#: Texts of at most this many words (noun phrases, cue spans) recur across a corpus' documents: kept across readings.
SHARED_WORDS = 8
#: Most vectors kept across readings (about 1.5 KiB each); the older half goes when full.
SHARED_LIMIT = 50_000


class Reading:
    """The text of one request, split and embedded lazily; ``lock`` guards ``shared`` across threads.

    ``shared`` holds vectors across the readings of one backend: field descriptions and
    short texts. ``focus`` (the protocol's descriptions and cues) and ``budget`` bound the
    sentences embedded for similarity in a long excerpt; budget 0 embeds them all. ``parts``
    weighs sentences by the part of the work they stand in.
    """

    def __init__(
        self,
        text: str,
        encoder: Encoder,
        lock: threading.Lock | None = None,
        shared: dict[str, np.ndarray] | None = None,
        *,
        focus: Sequence[str] = (),
        budget: int = 0,
        shortlist: int = 0,
        parts: bool = True,
    ) -> None:
        self.text = text
        self.parts = parts
        self.focus = focus
        self.budget = budget
        self.shortlist = shortlist
        self.shared = {} if shared is None else shared
        self.encoder = encoder
        self.lock = lock or threading.Lock()
        self.spans = sentence_spans(text)
        self.sentences = [normalized_sentence(text[start:end]) for start, end in self.spans]
        self._vectors: dict[str, np.ndarray] = {}

    def _fill(self, texts: Sequence[str], *, share_all: bool) -> None:
        """Vectors of ``texts`` not yet in this reading: from ``shared`` where kept, the rest in one batch."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if not missing:
            return
        with self.lock:  # readings in other threads add to and evict from ``shared`` under it too
            self._vectors.update((t, self.shared[t]) for t in missing if t in self.shared)
        new = [t for t in missing if t not in self._vectors]
        if not new:
            return
        # outside the lock: another reading's encoder pass runs beside this one
        vectors = dict(zip(new, self.encoder.encode(new), strict=True))
        kept = {t: v for t, v in vectors.items() if share_all or len(t.split()) <= SHARED_WORDS}
        with self.lock:
            if len(self.shared) + len(kept) > SHARED_LIMIT:
                for key in list(self.shared)[: len(self.shared) // 2]:
                    del self.shared[key]
            self.shared.update(kept)
        self._vectors.update(vectors)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``; each distinct text is encoded once per reading, new ones in one batch."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        self._fill(texts, share_all=False)
        return np.vstack([self._vectors[t] for t in texts])

    def embed_constant(self, texts: Sequence[str]) -> np.ndarray:
        """Like :meth:`embed`, for texts every document shares (field descriptions), kept across readings."""
        self._fill(texts, share_all=True)
        return np.vstack([self._vectors[t] for t in texts])

    @cached_property
    def _sentence_vectors(self) -> tuple[np.ndarray, list[int] | None]:
        """The embedded sentences' unit rows, and which sentences they are (None: all of them)."""
        chosen = focus_sentences(self.sentences, self.focus, self.budget)
        return self.embed(self.sentences if chosen is None else [self.sentences[i] for i in chosen]), chosen

    def sentence_similarity(self, targets: np.ndarray, about: Sequence[str] = ()) -> np.ndarray:
        """Cosine of every sentence to ``targets`` (one unit vector, or one per row), times the sentence's
        :attr:`weights`: sentences, or sentences x targets. A sentence the budget left out scores -inf, so
        similarity alone never picks it.

        With ``about`` (the texts the targets embed) and a ``shortlist``, only the first sentence and the
        ``shortlist`` sentences that share most words with ``about`` (BM25) are embedded, the others scoring
        -inf: when a field wants the one sentence most like its description, retrieving before reranking
        spares most of an abstract's sentences an encoder pass."""
        if about and self.shortlist:
            chosen = focus_sentences(self.sentences, about, self.shortlist + 1, lead=1)
            vectors = self.embed(self.sentences if chosen is None else [self.sentences[i] for i in chosen])
        else:
            vectors, chosen = self._sentence_vectors
        scores = vectors @ targets.T
        if chosen is not None:
            every = np.full((len(self.sentences), *scores.shape[1:]), -np.inf, dtype=scores.dtype)
            every[chosen] = scores
            scores = every
        weights = np.asarray(self.weights, dtype=scores.dtype).reshape(-1, *([1] * (scores.ndim - 1)))
        return np.where(weights > 0, scores * weights, -np.inf)

    @cached_property
    def weights(self) -> list[float]:
        """Each sentence's weight by the part it stands in: similarity is scaled by it, cues count by it
        (all 1 without ``parts``)."""
        return sentence_weights(self.text, self.spans) if self.parts else [1.0] * len(self.spans)

    def ranked_terms(self, matcher: TermMatcher) -> list[str]:
        """The canonical terms ``matcher`` finds, those of the best-weighted sentences first, then by first mention."""
        best: dict[str, float] = {}
        for sentence, weight in zip(self.sentences, self.weights, strict=True):
            for term in matcher.find(sentence):
                best[term] = max(best.get(term, 0.0), weight)
        return sorted(best, key=lambda term: -best[term])

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
