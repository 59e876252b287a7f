"""The chunk stores (Qdrant Edge, and the server API through qdrant-client's in-process
emulation) and search over them, as the vector_index asset uses them: one test, both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.chunking import chunk_documents
from hysem_assets.retrieval.indexing import IndexSummary, index_chunks, with_citations
from hysem_assets.retrieval.search import Method, search
from hysem_assets.stores.chunks import ChunkVectors, VectorStoreError, point_id
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.qdrant_chunks import QdrantChunkStore

#: qdrant-client's emulation says it ignores payload indexes and HNSW settings; a server uses them.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Payload indexes have no effect"),
    pytest.mark.filterwarnings("ignore:Local mode performs exact"),
]

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


@pytest.fixture(params=["edge", "server-api"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ChunkVectors]:
    opened = EdgeChunkStore(tmp_path / "qdrant") if request.param == "edge" else QdrantChunkStore(":memory:")
    yield opened
    opened.close()


def index(
    store: ChunkVectors, embedder: Encoder, tmp_path: Path, documents: dict[str, str], query: str = "q1"
) -> IndexSummary:
    return index_chunks(chunks_of(documents), query=query, store=store, embedder=embedder)


def test_points_carry_the_payload_a_citation_needs(store: ChunkVectors, embedder: Encoder, tmp_path: Path) -> None:
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
    store: ChunkVectors, embedder: Encoder, tmp_path: Path
) -> None:
    index(store, embedder, tmp_path, DOCUMENTS)
    index(store, embedder, tmp_path, {"c-9": "# Other\n\nOzone and heart disease in another query."}, query="q2")

    def top(method: Method, text: str) -> list[str]:
        hits = search(method, text, store=store, embedder=embedder, query="q1", limit=4)
        return [hit.chunk_id for hit in hits]

    assert top("dense", "bushfire haze and kids' breathing")[0] == "c-3:0"
    assert top("bm25", "LSTM") == ["c-2:0"]
    assert top("hybrid", "ozone mortality")[:2] == ["c-1:1", "c-1:0"]
    assert top("bm25", "forecasting networks") == ["c-2:0"]  # stemmed: forecast, network
    assert top("bm25", "the of and") == []  # stopwords only
    assert "c-9:0" not in top("dense", "ozone") + top("hybrid", "ozone") + top("bm25", "ozone")
    assert store.count("q1") == 4 and store.count("q2") == 1 and store.count() == 5


def test_unchanged_chunks_are_not_embedded_again(store: ChunkVectors, embedder: Encoder, tmp_path: Path) -> None:
    index(store, embedder, tmp_path, DOCUMENTS)
    before = dict(store.points("q1"))
    again = index(store, embedder, tmp_path, DOCUMENTS)
    assert (again.embedded, again.reused, again.written, again.deleted) == (0, 4, 0, 0)
    assert all(np.allclose(before[point].vector, stored.vector) for point, stored in store.points("q1"))

    edited = {"c-1": DOCUMENTS["c-1"].replace("half a percent", "0.5%"), "c-2": DOCUMENTS["c-2"]}
    changed = index(store, embedder, tmp_path, edited)
    assert (changed.chunks, changed.embedded, changed.reused, changed.written, changed.deleted) == (3, 1, 2, 1, 1)
    assert store.count("q1") == 3
    recited = index_chunks(
        chunks_of(edited).assign(in_text_citation="(Li et al., 2022)"), query="q1", store=store, embedder=embedder
    )
    assert (recited.embedded, recited.written) == (0, 3)  # a new citation rewrites payloads, not vectors
    assert {stored.payload["in_text_citation"] for _, stored in store.points("q1")} == {"(Li et al., 2022)"}

    def keyword(text: str) -> list[str]:
        return [hit.chunk_id for hit in search("bm25", text, store=store, embedder=embedder, query="q1")]

    assert keyword("wildfire smoke") == []
    assert keyword("cardiovascular mortality") == ["c-1:1"]


def test_a_collection_of_another_dimension_is_refused(store: ChunkVectors) -> None:
    store.ensure_collection(384)
    with pytest.raises(VectorStoreError, match="384-d"):
        store.ensure_collection(768)


def test_bm25_idf_is_the_searched_partitions_own(store: ChunkVectors, embedder: Encoder, tmp_path: Path) -> None:
    """A term common in another partition must not lose weight in this one."""
    index(store, embedder, tmp_path, {"a": "# A\n\nLSTM forecasts", "b": "# B\n\nozone deaths"}, query="small")
    crowd = {f"x{n}": f"# X\n\nLSTM model number {n}" for n in range(30)}
    index(store, embedder, tmp_path, crowd, query="crowded")
    alone = EdgeChunkStore(tmp_path / "alone") if isinstance(store, EdgeChunkStore) else QdrantChunkStore(":memory:")
    try:
        index(alone, embedder, tmp_path, {"a": "# A\n\nLSTM forecasts", "b": "# B\n\nozone deaths"}, query="small")
        shared, own = store.keyword("LSTM", query="small"), alone.keyword("LSTM", query="small")
        assert [c.payload["chunk_id"] for c in shared] == ["a:0"]
        assert shared[0].score == pytest.approx(own[0].score, rel=1e-4)
    finally:
        alone.close()
