"""Maximal marginal relevance: pick items that are relevant and unlike the ones already picked.

Summaries and answers built from the most relevant sentences alone repeat themselves (the
same finding in the abstract and the conclusion, or in two papers of one group); MMR trades
relevance against similarity to what is already chosen (Carbonell and Goldstein, 1998).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def mmr(
    vectors: np.ndarray,
    relevance: Sequence[float] | np.ndarray,
    k: int,
    *,
    trade_off: float = 0.7,
    groups: Sequence[object] | None = None,
) -> list[int]:
    """Indices of up to ``k`` rows of unit ``vectors``, in the order chosen.

    Each step takes the row maximising ``trade_off * relevance - (1 - trade_off) * max
    similarity to the rows chosen``. With ``groups`` (a work per sentence, say) a group
    gives a second row only once every group has given one.
    """
    relevance = np.asarray(relevance, dtype=np.float64)
    chosen: list[int] = []
    if k <= 0 or len(relevance) == 0:
        return chosen
    similarity = np.asarray(vectors, dtype=np.float64) @ np.asarray(vectors, dtype=np.float64).T
    closest = np.full(len(relevance), -np.inf)
    used: dict[object, int] = {}
    remaining = set(range(len(relevance)))
    while remaining and len(chosen) < k:
        fewest = min((used.get(groups[i], 0) for i in remaining), default=0) if groups is not None else 0

        def score(i: int) -> float:
            redundancy = 0.0 if not chosen else closest[i]
            return trade_off * relevance[i] - (1 - trade_off) * redundancy

        candidates = [i for i in remaining if groups is None or used.get(groups[i], 0) == fewest]
        best = max(candidates, key=lambda i: (score(i), -i))
        chosen.append(best)
        remaining.discard(best)
        closest = np.maximum(closest, similarity[best])
        if groups is not None:
            used[groups[best]] = used.get(groups[best], 0) + 1
    return chosen
