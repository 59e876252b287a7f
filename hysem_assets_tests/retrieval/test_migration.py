"""A chunk store written by earlier versions (qdrant-client's local mode) becomes a Qdrant Edge
shard on first open: same points, BM25 vectors added, nothing embedded again, old files gone."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from qdrant_client import QdrantClient, models

from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.chunking import chunk_documents
from hysem_assets.retrieval.indexing import PAYLOAD_COLUMNS, index_chunks, with_citations
from hysem_assets.retrieval.search import search
from hysem_assets.settings.profile import VectorIndexSettings
from hysem_assets.stores.chunks import point_id, searchable_text
from hysem_assets.stores.connect import open_chunk_store
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.migration import local_mode_files

DOCUMENTS = {
    "q1": {
        "c-1": "# Methods\n\nDaily ozone concentrations were linked to deaths from heart disease in 20 cities.\n\n"
        "# Results\n\nEach 10 ppb of ozone raised cardiovascular mortality by half a percent.",
        "c-2": "# Methods\n\nWe trained an LSTM network to forecast the hourly air quality index.",
        "c-3": "# Abstract\n\nWildfire smoke sent children with asthma to emergency departments; "
        "bronchiolitis obliterans was rare.",
    },
    "q2": {"c-9": "# Discussion\n\nStatins and dementia risk in older adults: a cohort of 40,000 patients."},
}
CORPUS = pd.DataFrame(
    {
        "cluster_id": ["c-1", "c-2", "c-3", "c-9"],
        "doi": ["10.1/ozone", "10.1/lstm", None, "10.1/statins"],
        "in_text_citation": ["(Roe, 2020)", "(Li, 2022)", "(Diaz, 2021)", "(Kim, 2019)"],
        "full_citation": ["Roe A. Ozone. 2020.", "Li B. LSTM. 2022.", "Diaz C. Smoke. 2021.", "Kim D. Statins. 2019."],
    }
)


def chunks_of(documents: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame({"cluster_id": list(documents), "markdown": list(documents.values())})
    return with_citations(chunk_documents(frame, max_tokens=50, overlap=10), CORPUS)


def write_local_mode(folder: Path, embedder: Encoder) -> dict[str, tuple[dict, np.ndarray]]:
    """The embedded chunk store as earlier versions wrote it: local mode, one unnamed cosine vector,
    payloads built as their ``index_chunks`` built them. Returns id -> (payload, vector)."""
    written: dict[str, tuple[dict, np.ndarray]] = {}
    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(
            "chunks", vectors_config=models.VectorParams(size=embedder.dimension, distance=models.Distance.COSINE)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # local mode: payload indexes have no effect
            client.create_payload_index("chunks", field_name="query", field_schema=models.PayloadSchemaType.KEYWORD)
        for query, documents in DOCUMENTS.items():
            records = chunks_of(documents).to_dict("records")
            vectors = embedder.encode([searchable_text(row["section"] or "", row["text"]) for row in records])
            points = []
            for row, vector in zip(records, vectors, strict=True):
                payload = {
                    "query": query,
                    "chunk_id": str(row["chunk_id"]),
                    **{c: (None if pd.isna(row[c]) else row[c]) for c in PAYLOAD_COLUMNS if c in row},
                    "content_hash": row["content_hash"],
                    "model": embedder.name,
                }
                payload = {k: v.item() if isinstance(v, np.generic) else v for k, v in payload.items()}
                identifier = point_id(query, payload["chunk_id"])
                points.append(models.PointStruct(id=identifier, vector=vector.tolist(), payload=payload))
                written[identifier] = (payload, vector)
            client.upsert("chunks", points=points, wait=True)
    finally:
        client.close()
    return written


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HYSEM_QDRANT_URL", raising=False)


def test_local_mode_folder_becomes_an_edge_shard_once(
    tmp_path: Path, embedder: Encoder, caplog: pytest.LogCaptureFixture, no_server: None
) -> None:
    folder = tmp_path / "qdrant"
    written = write_local_mode(folder, embedder)
    assert local_mode_files(folder) == folder
    settings = VectorIndexSettings(path=str(folder))

    with caplog.at_level(logging.WARNING):
        store = open_chunk_store(settings)
    try:
        assert isinstance(store, EdgeChunkStore)
        assert not (folder / "meta.json").exists() and not (folder / "collection").exists()
        assert local_mode_files(folder) is None
        assert any(
            r.name == "hysem_assets.stores.migration" and r.levelno == logging.WARNING and str(folder) in r.getMessage()
            for r in caplog.records
        )

        moved = {point: stored for query in DOCUMENTS for point, stored in store.points(query)}
        assert set(moved) == set(written) and store.count() == len(written)
        for point, (payload, vector) in written.items():
            assert moved[point].payload == payload
            np.testing.assert_allclose(moved[point].vector, vector, atol=1e-5)

        # the BM25 vectors were built: a word only one chunk has finds it, within its partition only
        hits = search("bm25", "bronchiolitis", store=store, embedder=embedder, query="q1", limit=5)
        assert [hit.chunk_id for hit in hits] == ["c-3:0"]
        assert search("bm25", "bronchiolitis", store=store, embedder=embedder, query="q2", limit=5) == []
        assert search("hybrid", "statins and dementia", store=store, embedder=embedder, query="q2")[0].chunk_id == (
            "c-9:0"
        )

        # the next indexing of the same chunks finds every vector in place
        encoded = embedder.encoded
        summary = index_chunks(chunks_of(DOCUMENTS["q1"]), query="q1", store=store, embedder=embedder)
        assert (summary.embedded, summary.reused, summary.deleted) == (0, summary.chunks, 0)
        assert embedder.encoded == encoded
    finally:
        store.close()

    caplog.clear()
    with caplog.at_level(logging.WARNING):
        again = open_chunk_store(settings)
    try:
        assert isinstance(again, EdgeChunkStore)
        assert not caplog.records
        assert again.count() == len(written)
        assert {point for query in DOCUMENTS for point, _ in again.points(query, with_vectors=False)} == set(written)
    finally:
        again.close()


def test_every_collection_is_moved_whatever_its_name(tmp_path: Path, no_server: None) -> None:
    """The configured collection need not be there, and one may be called `collection` (local mode's own folder)."""
    folder = tmp_path / "qdrant"
    rng = np.random.default_rng(0)
    client = QdrantClient(path=str(folder))
    try:
        for name, count in (("collection", 3), ("beir", 5)):
            client.create_collection(name, vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE))
            client.upsert(
                name,
                [
                    models.PointStruct(id=n, vector=rng.random(4).tolist(), payload={"query": "q", "text": f"t{n}"})
                    for n in range(count)
                ],
            )
    finally:
        client.close()

    open_chunk_store(VectorIndexSettings(path=str(folder), collection="renamed")).close()

    assert local_mode_files(folder) is None
    for name, count in (("collection", 3), ("beir", 5)):
        moved = EdgeChunkStore(folder, collection=name)
        try:
            assert moved.count("q") == count
        finally:
            moved.close()
