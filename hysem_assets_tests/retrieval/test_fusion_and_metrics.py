from __future__ import annotations

import math

import pytest

from hysem_assets.retrieval.metrics import ndcg_at_k, recall_at_k
from hysem_assets.retrieval.search import Hit, reciprocal_rank_fusion


def hits(*ids: str) -> list[Hit]:
    return [Hit(chunk_id, 0.0) for chunk_id in ids]


def test_rrf_adds_reciprocal_ranks_with_k_60() -> None:
    fused = reciprocal_rank_fusion([hits("a", "b", "c"), hits("c", "a", "d")], limit=10)

    assert [h.chunk_id for h in fused] == ["a", "c", "b", "d"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused[3].score == pytest.approx(1 / 63)


def test_rrf_breaks_ties_by_best_single_rank_then_id_and_honours_limit() -> None:
    # k = 1: a (rank 1 once), q (rank 1 once) and b (rank 3 twice) all score 1/2.
    rankings = [hits("a", "p", "b"), hits("q", "s", "b")]
    fused = reciprocal_rank_fusion(rankings, k=1)
    assert [(h.chunk_id, h.score) for h in fused] == [("a", 0.5), ("q", 0.5), ("b", 0.5), ("p", 1 / 3), ("s", 1 / 3)]
    assert [h.chunk_id for h in reciprocal_rank_fusion(rankings, k=1, limit=2)] == ["a", "q"]


def test_ndcg_uses_graded_gains_and_the_ideal_order() -> None:
    relevance = {"d1": 2, "d2": 1, "d3": 0}
    assert ndcg_at_k(["d1", "d2"], relevance) == pytest.approx(1.0)
    swapped = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg_at_k(["d2", "d1"], relevance) == pytest.approx(swapped)
    assert ndcg_at_k(["d3", "x"], relevance) == 0.0
    assert ndcg_at_k(["d1"], {"d1": 0}) == 0.0


def test_recall_counts_relevant_documents_in_the_top_k() -> None:
    relevance = {"d1": 1, "d2": 2, "d3": 0}
    assert recall_at_k(["d2", "x", "d1"], relevance, k=2) == 0.5
    assert recall_at_k(["d2", "x", "d1"], relevance, k=100) == 1.0
