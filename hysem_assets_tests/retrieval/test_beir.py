"""BEIR evaluation on the team-written sample, through the production search path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.beir import BeirFormatError, evaluate_beir, load_beir

SAMPLE = Path(__file__).parent / "beir_sample"


def test_sample_loads_in_beir_format() -> None:
    sample = load_beir(SAMPLE)
    assert len(sample.corpus) == 36 and len(sample.queries) == 12
    assert sample.qrels["q01"] == {"d01": 2, "d26": 2, "d09": 1}


def test_all_methods_score_the_sample_and_hybrid_does_not_lose(embedder: Encoder, tmp_path: Path) -> None:
    metrics = evaluate_beir(SAMPLE, "all", embedder=embedder, work_dir=tmp_path)

    assert list(metrics) == ["bm25", "dense", "hybrid"]
    for result in metrics.values():
        assert result.queries == 12
        assert 0.8 < result.ndcg_at_10 <= 1.0
        assert result.recall_at_100 == pytest.approx(1.0)
    assert metrics["hybrid"].ndcg_at_10 >= max(metrics["bm25"].ndcg_at_10, metrics["dense"].ndcg_at_10)


def test_one_method_and_bad_input(embedder: Encoder, tmp_path: Path) -> None:
    assert list(evaluate_beir(SAMPLE, "bm25", embedder=embedder, work_dir=tmp_path)) == ["bm25"]
    with pytest.raises(ValueError, match="unknown retrieval method 'splade'"):
        evaluate_beir(SAMPLE, "splade", embedder=embedder)

    broken = tmp_path / "broken"
    shutil.copytree(SAMPLE, broken)
    (broken / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq99\td01\t1\n", encoding="utf-8")
    with pytest.raises(BeirFormatError, match="q99"):
        load_beir(broken)
    (broken / "queries.jsonl").write_text('{"_id": "q1", "text": "ozone"\n', encoding="utf-8")
    with pytest.raises(BeirFormatError, match="queries.jsonl, line 1"):
        load_beir(broken)
