"""A partition's chunk stores are checked against its chunk table, and `hysem doctor --fix` rebuilds them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from hysem_assets.cli import main
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.retrieval.completeness import expected_points, index_state
from hysem_assets.retrieval.indexing import index_chunks
from hysem_assets.runs.instance import get_instance
from hysem_assets.settings.environment import asset_file, hysem_home
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.tables import write_parquet
from hysem_assets_tests.retrieval.test_indexing import DOCUMENTS, chunks_of


def test_missing_extra_and_outdated_points_are_seen(embedder: Encoder, tmp_path: Path):
    chunks = chunks_of(DOCUMENTS)
    expected, ids = expected_points(chunks, "q1"), list(chunks["chunk_id"])
    store = EdgeChunkStore(tmp_path / "qdrant")
    try:
        index_chunks(chunks, query="q1", store=store, embedder=embedder)
        assert index_state(expected, query="q1", store=store).complete
        fewer = chunks.iloc[1:]  # the table lost a chunk the store still holds
        state = index_state(expected_points(fewer, "q1"), query="q1", store=store)
        assert (state.missing, state.extra, state.complete) == (0, 1, False)
        stored = [pid for pid, _ in store.points("q1", with_vectors=False)]
        store.delete(stored[:2])  # a write cut short
        state = index_state(expected, query="q1", store=store)
        assert (state.missing, state.extra, state.outdated) == (2, 0, 0)
        assert state.describe() == f"{len(ids) - 2} of {len(ids)} chunks in the vector store"
        edited = chunks.assign(content_hash="changed")
        assert index_state(expected_points(edited, "q1"), query="q1", store=store).outdated == len(ids) - 2
    finally:
        store.close()


def test_doctor_rebuilds_an_incomplete_chunk_store(embedder: Encoder):
    chunks = chunks_of(DOCUMENTS)
    get_instance().add_dynamic_partitions("queries", ["q1"])
    write_parquet(chunks, asset_file("vector_index", "q1"))
    store = EdgeChunkStore(hysem_home() / "qdrant")
    try:
        index_chunks(chunks, query="q1", store=store, embedder=embedder)
        store.delete([pid for pid, _ in store.points("q1", with_vectors=False)][:3])  # killed mid-write
    finally:
        store.close()
    runner = CliRunner()
    listed = runner.invoke(main, ["doctor"])
    assert listed.exit_code == 1 and f"! chunk store  q1: {len(chunks) - 3} of {len(chunks)} chunks" in listed.output
    fixed = runner.invoke(main, ["doctor", "--fix"])
    assert fixed.exit_code == 0 and "fixed: Rebuilt the chunk stores of 'q1'" in fixed.output, fixed.output
    assert "(3 embedded again)" in fixed.output
    assert "Nothing to fix." in runner.invoke(main, ["doctor"]).output
