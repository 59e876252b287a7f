"""Qdrant local mode, the bm25s index and search over them, as the vector_index asset uses them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hysem_assets.embeddings import Encoder
from hysem_assets.retrieval.chunking import chunk_documents
from hysem_assets.retrieval.indexing import IndexSummary, index_chunks, keyword_folder, with_citations
from hysem_assets.retrieval.keyword import KeywordIndex
from hysem_assets.retrieval.search import Method, search
from hysem_assets.stores.qdrant_chunks import QdrantChunkStore, VectorStoreError, point_id

DOCUMENTS = {
    "c-1": "# Methods\n\nDaily ozone concentrations were linked to deaths from heart disease.\n\n"
    "# Results\n\nEach 10 ppb of ozone raised cardiovascular mortality by half a percent.",
    "c-2": "# Methods\n\nWe trained an LSTM network to forecast the hourly air quality index.",
    "c-3": "# Abstract\n\nWildfire smoke sent children with asthma to emergency departments.",
}
CORPUS = pd.DataFrame(
    {
        "cluster_id": ["c-1", "c-2", "c-3"],
        "doi": ["10.1/ozone", "10.1/lstm", None],
        "in_text_citation": ["(Roe, 2020)", "(Li, 2022)", "(Diaz, 2021)"],
        "full_citation": ["Roe A. Ozone. 2020.", "Li B. LSTM. 2022.", "Diaz C. Smoke. 2021."],
    }
)


def chunks_of(documents: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame({"cluster_id": list(documents), "markdown": list(documents.values())})
    return with_citations(chunk_documents(frame, max_tokens=50, overlap=10), CORPUS)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[QdrantChunkStore]:
    opened = QdrantChunkStore(path=tmp_path / "qdrant")
    yield opened
    opened.close()


def index(
    store: QdrantChunkStore, embedder: Encoder, tmp_path: Path, documents: dict[str, str], query: str = "q1"
) -> IndexSummary:
    chunks = chunks_of(documents)
    return index_chunks(chunks, query=query, store=store, embedder=embedder, keyword_root=tmp_path / "bm25")


def test_points_carry_the_payload_a_citation_needs(store: QdrantChunkStore, embedder: Encoder, tmp_path: Path) -> None:
    summary = index(store, embedder, tmp_path, DOCUMENTS)

    assert (summary.chunks, summary.embedded, summary.reused, summary.deleted) == (4, 4, 0, 0)
    points = dict(store.points("q1"))
    payload = points[point_id("q1", "c-1:1")].payload
    assert payload == {
        "query": "q1", "chunk_id": "c-1:1", "doi": "10.1/ozone", "cluster_id": "c-1", "chunk_index": 1,
        "section": "Results", "text": "Each 10 ppb of ozone raised cardiovascular mortality by half a percent.",
        "in_text_citation": "(Roe, 2020)", "full_citation": "Roe A. Ozone. 2020.",
        "content_hash": payload["content_hash"], "model": "all-MiniLM-L6-v2",
    }  # fmt: skip
    assert points[point_id("q1", "c-3:0")].payload["doi"] is None


def test_dense_keyword_and_hybrid_search_find_the_right_chunks(
    store: QdrantChunkStore, embedder: Encoder, tmp_path: Path
) -> None:
    index(store, embedder, tmp_path, DOCUMENTS)
    index(store, embedder, tmp_path, {"c-9": "# Other\n\nOzone and heart disease in another query."}, query="q2")
    keyword = KeywordIndex.load(keyword_folder(tmp_path / "bm25", "q1"))

    def top(method: Method, text: str) -> list[str]:
        hits = search(method, text, store=store, index=keyword, embedder=embedder, query="q1", limit=4)
        return [hit.chunk_id for hit in hits]

    assert top("dense", "bushfire haze and kids' breathing")[0] == "c-3:0"
    assert top("bm25", "LSTM") == ["c-2:0"]
    assert top("hybrid", "ozone mortality")[:2] == ["c-1:1", "c-1:0"]
    assert "c-9:0" not in top("dense", "ozone") + top("hybrid", "ozone")
    assert store.count("q1") == 4 and store.count("q2") == 1 and store.count() == 5


def test_unchanged_chunks_are_not_embedded_again(store: QdrantChunkStore, embedder: Encoder, tmp_path: Path) -> None:
    index(store, embedder, tmp_path, DOCUMENTS)
    before = dict(store.points("q1"))
    again = index(store, embedder, tmp_path, DOCUMENTS)
    assert (again.embedded, again.reused, again.deleted) == (0, 4, 0)
    assert all(np.allclose(before[point].vector, stored.vector) for point, stored in store.points("q1"))

    edited = {"c-1": DOCUMENTS["c-1"].replace("half a percent", "0.5%"), "c-2": DOCUMENTS["c-2"]}
    changed = index(store, embedder, tmp_path, edited)
    assert (changed.chunks, changed.embedded, changed.reused, changed.deleted) == (3, 1, 2, 1)
    assert store.count("q1") == 3
    keyword = KeywordIndex.load(keyword_folder(tmp_path / "bm25", "q1"))
    assert keyword.search("wildfire smoke") == []
    assert [hit for hit, _ in keyword.search("0.5")] == []  # a one-character token is not a keyword
    assert [hit for hit, _ in keyword.search("cardiovascular mortality")] == ["c-1:1"]


def test_a_collection_of_another_dimension_is_refused(store: QdrantChunkStore) -> None:
    store.ensure_collection(384)
    with pytest.raises(VectorStoreError, match="384-d"):
        store.ensure_collection(768)


def test_keyword_index_of_an_empty_partition(tmp_path: Path) -> None:
    KeywordIndex.build([], []).save(tmp_path / "empty")
    assert KeywordIndex.load(tmp_path / "empty").search("ozone") == []
    with pytest.raises(FileNotFoundError, match="index the partition first"):
        KeywordIndex.load(tmp_path / "missing")
