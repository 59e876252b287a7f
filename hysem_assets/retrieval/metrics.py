"""Ranking metrics as BEIR reports them (trec_eval definitions, linear gains)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    """Discounted gain of the top ``k`` over the best possible; gain is the graded relevance."""
    gains = sorted((grade for grade in relevance.values() if grade > 0), reverse=True)[:k]
    ideal = sum(grade / math.log2(rank + 2) for rank, grade in enumerate(gains))
    if ideal == 0:
        return 0.0
    actual = sum(max(relevance.get(doc, 0), 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    return actual / ideal


def recall_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 100) -> float:
    """Share of the relevant documents found in the top ``k``."""
    relevant = {doc for doc, grade in relevance.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)
