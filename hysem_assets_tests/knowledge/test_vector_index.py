"""The vector_index asset on a partition without a single PDF: every work is still indexed and found."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from dagster import DagsterInstance, build_asset_context

from hysem_assets.defs.knowledge import vector_index
from hysem_assets.defs.resources import ChunkStore
from hysem_assets.retrieval.search import search
from hysem_assets.settings.profile import VectorIndexSettings

QUERY = "no-pdfs"
CORPUS = pd.DataFrame(
    {
        "cluster_id": ["a", "b", "c", "d"],
        "doi": ["10.1/a", "10.1/b", None, "10.1/d"],
        "title": [
            "Cover crops and soil nitrogen in semi-arid farms",
            "Evening screen time and sleep onset in adolescents",
            "Fatigue cracking in welded steel bridge decks",
            "Household savings after a cash transfer programme",
        ],
        "abstract": [
            "Soil nitrogen was 12% higher under cover crops than in bare fallow over three seasons.",
            "Adolescents with more than two hours of evening screen time fell asleep 25 minutes later.",
            "Weld toes at rib-to-deck joints initiated most cracks under heavy-vehicle lanes.",
            None,
        ],
        "is_retracted": pd.array([False, True, None, False], dtype="boolean"),
    }
)
LIBRARY = pd.DataFrame(
    {
        "cluster_id": ["a", "b", "c", "d"],
        "in_text_citation": ["(Ruiz, 2019)", "(Okafor, 2021)", "(Lindqvist, 2017)", "(Banda, 2022)"],
        "full_citation": ["Ruiz A. 2019.", "Okafor B. 2021.", "Lindqvist C. 2017.", "Banda D. 2022."],
        "zotero_key": [None, None, None, None],
    }
)
NO_PDFS = pd.DataFrame({"cluster_id": pd.Series(dtype=object), "markdown": [], "error": []})


def test_every_work_of_a_partition_without_pdfs_is_indexed_and_found(tmp_path: Path):
    store = ChunkStore(settings=VectorIndexSettings(path=str(tmp_path / "qdrant")))
    with DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("queries", [QUERY])
        context = build_asset_context(partition_key=QUERY, instance=instance)
        output = vector_index(context, chunk_store=store, deduped_corpus=CORPUS, library=LIBRARY, parsed_docs=NO_PDFS)
    chunks = output.value
    assert set(chunks["cluster_id"]) == set(CORPUS["cluster_id"])
    assert set(chunks["evidence"]) == {"abstract"}
    assert chunks.set_index("cluster_id")["is_retracted"].to_dict() == {"a": False, "b": True, "c": False, "d": False}
    metadata = {key: value.value for key, value in output.metadata.items()}
    assert (metadata["works_indexed"], metadata["works_abstract_only"], metadata["works_with_full_text"]) == (4, 4, 0)

    opened = store.open()
    try:
        assert len(dict(opened.points(QUERY))) == len(chunks)
        for method in ("dense", "bm25"):
            hits = search(
                method,
                "How much later do teenagers fall asleep after evening screen use?",
                store=opened,
                embedder=store.encoder(),
                query=QUERY,
                limit=1,
            )
            assert hits[0].chunk_id.startswith("b:")
        hits = search("hybrid", "cash transfer savings", store=opened, embedder=store.encoder(), query=QUERY, limit=1)
        assert hits[0].chunk_id == "d:0"  # a work known by its title alone
    finally:
        opened.close()
