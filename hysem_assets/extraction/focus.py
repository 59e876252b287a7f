"""Which sentences of a long excerpt the embedded extractor embeds: its opening, and those that share words with the protocol.

Embedding every sentence of a 12-page full text costs seconds per work, while most of its
sentences (background, discussion) answer no field of the protocol. So an excerpt of more
than ``budget`` sentences embeds its first ``LEAD`` (the title and abstract, in a document's
first excerpt) and then, taking turns, the next-best sentence for each focus text (a
field's description with its cues, a category value's description) by BM25, with Qdrant's
English tokenizer and stemmer and the IDF of the excerpt's own sentences, until ``budget``
are chosen; sentences in text order fill what the focus texts leave. A budget below
``LEAD`` keeps the opening alone. This is retrieve-then-rerank: the lexical pass only
decides which sentences the embedding ranks. A sentence left out scores -inf similarity
(:meth:`~hysem_assets.extraction.reading.Reading.sentence_similarity`): cues and patterns
still read it, similarity alone never picks it. An excerpt of at most ``budget`` sentences
(an abstract, a short paper) is embedded whole.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from qdrant_edge import Bm25, Bm25Config

#: Opening sentences always embedded: the title and abstract of a document's first excerpt.
LEAD = 32


@lru_cache(maxsize=1)
def _bm25() -> Bm25:
    # sentences, not chunks: the length normalisation's average is a sentence's length in terms
    return Bm25(Bm25Config(language="english", avg_len=20.0))


def _scores(sentences: Sequence[dict[int, float]], query: Sequence[int], idf: dict[int, float]) -> list[float]:
    return [sum(idf[term] * sentence.get(term, 0.0) for term in query if term in idf) for sentence in sentences]


def focus_sentences(sentences: Sequence[str], focus: Sequence[str], budget: int, lead: int = LEAD) -> list[int] | None:
    """Indices of the sentences to embed, in text order; None when every sentence is (``budget`` 0 or enough).

    The first ``lead`` sentences are always among them."""
    if budget <= 0 or len(sentences) <= budget:
        return None
    model = _bm25()
    terms = [dict(zip(v.indices, v.values, strict=True)) for v in (model.embed_document(s) for s in sentences)]
    frequency = Counter(term for sentence in terms for term in sentence)
    count = len(sentences)
    idf = {term: math.log(1 + (count - n + 0.5) / (n + 0.5)) for term, n in frequency.items()}
    rankings = []
    for text in dict.fromkeys(focus):
        scores = _scores(terms, model.embed_query(text).indices, idf)
        rankings.append(iter(sorted((i for i in range(count) if scores[i] > 0), key=lambda i: (-scores[i], i))))
    chosen = dict.fromkeys(range(min(lead, budget)))
    while len(chosen) < budget and rankings:
        for ranking in list(rankings):
            index = next((i for i in ranking if i not in chosen), None)
            if index is None:
                rankings.remove(ranking)
            elif len(chosen) < budget:
                chosen[index] = None
    for index in range(count):  # no focus text matches more: the budget goes on in text order
        if len(chosen) == budget:
            break
        chosen.setdefault(index)
    return sorted(chosen)
