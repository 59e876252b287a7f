"""`hysem ask` in a new process: tables read by path, no torch or Dagster definitions, answers cached per partition."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hysem_assets.embedding.bert_numpy import supported
from hysem_assets.embedding.encoder import Encoder, query_encoder
from hysem_assets.knowledge.build import build_partition_graph
from hysem_assets.retrieval.indexing import index_chunks
from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.edge_chunks import EdgeChunkStore
from hysem_assets.stores.graph import load_partition
from hysem_assets.stores.ladybug_graph import LadybugGraphStore
from hysem_assets_tests.knowledge.partition import frames

QUERY = "air-pollution-cardio-ml"  # a declared query (its protocol), with tables of our own
QUESTION = "What did random forest models predict from ozone?"
PROBE = """
import json, sys
from hysem_assets.qa.ask import ask
answer, cached = ask(sys.argv[1], sys.argv[2])
heavy = ["torch", "sentence_transformers", "dagster", "docling", "sklearn", "qdrant_client", "aiohttp"]
print(json.dumps({"cached": cached, "loaded": [m for m in heavy if m in sys.modules], "answer": answer}))
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, partition, embedder) -> Path:
    """A HYSEM_HOME holding the QA test partition's tables and vectors under the sample query's name."""
    folder = tmp_path_factory.mktemp("home")
    tables = {
        "vector_index": partition.chunks,
        "library": partition.library,
        "canonical_terms": pd.DataFrame({"field": [], "raw_term": [], "canonical": []}),
    }
    for name, table in tables.items():
        asset_file(name, QUERY, folder / "assets").parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(asset_file(name, QUERY, folder / "assets"))
    store = EdgeChunkStore(folder / "qdrant")
    try:
        index_chunks(partition.chunks, query=QUERY, store=store, embedder=embedder)
    finally:
        store.close()
    (folder / "graph").mkdir()
    graph = LadybugGraphStore(folder / "graph" / "kg.lbug")
    try:
        data = frames()
        graph.ensure_schema(partition.schema)
        content = build_partition_graph(
            partition.schema, QUERY, corpus=data["corpus"], fields=data["fields"], chunks=partition.chunks
        )
        load_partition(graph, partition.schema, content)
    finally:
        graph.close()
    return folder


def ask_in_new_process(home: Path, question: str = QUESTION) -> dict:
    environment = {**os.environ, "HYSEM_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, QUERY, question], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_a_new_process_answers_without_torch_or_dagster_definitions_then_reads_the_cache(home: Path):
    first = ask_in_new_process(home)
    assert not first["cached"] and first["answer"]["claims"] > 0
    assert first["loaded"] == []  # Qdrant Edge is in-process Rust: no torch, qdrant-client, definitions or Docling
    again = ask_in_new_process(home, f"  {QUESTION} ")
    assert again["cached"] and again["loaded"] == []  # nothing heavy for a repeated question
    assert again["answer"]["markdown"] == first["answer"]["markdown"]
    assert again["answer"]["json"]["claims"] == first["answer"]["json"]["claims"]


def test_a_rematerialized_table_is_never_answered_from_a_stale_cache(home: Path):
    ask_in_new_process(home)
    library = asset_file("library", QUERY, home / "assets")
    pd.read_parquet(library).to_parquet(library)  # a new materialization: same rows, new file
    os.utime(library, ns=(library.stat().st_atime_ns, library.stat().st_mtime_ns + 1_000_000))
    assert not ask_in_new_process(home)["cached"]


def test_the_numpy_encoder_gives_the_stored_vectors(embedder: Encoder):
    light = query_encoder(embedder)
    assert light.backend == "numpy" and light.name == embedder.name and supported(Path(embedder.location))
    texts = ["How does PM2.5 relate to heart failure?", "Soil nitrogen rose by 12% (p < 0.01).", "x", "word " * 400]
    assert np.abs(light.encode(texts) - embedder.encode(texts)).max() < 1e-5
    assert light.token_spans(texts[3]) == embedder.token_spans(texts[3])
