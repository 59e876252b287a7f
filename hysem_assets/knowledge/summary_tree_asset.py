"""``summary_tree``: chunks -> documents -> topics -> corpus summaries of one query, for corpus-level questions."""

import time

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.empty import empty_note
from hysem_assets.environment import hysem_home
from hysem_assets.knowledge.summary_tree import build_summary_tree, document_passages, tree_table
from hysem_assets.knowledge.summary_writer import ModelSummaryWriter
from hysem_assets.llm import build_backend
from hysem_assets.metadata import table_preview
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import gpu_step_tags
from hysem_assets.resources import AnswerModels, ChunkStore


@asset(
    group_name="knowledge",
    partitions_def=queries_partitions,
    ins={name: AssetIn() for name in ("topics", "vector_index", "deduped_corpus", "library")},
    pool="gpu",
    op_tags=gpu_step_tags("summary_tree"),
    description=(
        "A summary tree per query: each work summarised by its most central sentences (MMR around the centroid of "
        "its chunks' sentence embeddings), each topic of the topics asset by its works' summaries, the corpus by "
        "its topics; every sentence with the chunk or abstract it came from. Topic and corpus summaries are "
        "model-written when the answers' generator is a model. The global QA route answers from it."
    ),
    kinds={"python", "parquet"},
)
def summary_tree(
    context: AssetExecutionContext,
    chunk_store: ChunkStore,
    answer_models: AnswerModels,
    topics: pd.DataFrame,
    vector_index: pd.DataFrame,
    deduped_corpus: pd.DataFrame,
    library: pd.DataFrame,
) -> Output[pd.DataFrame]:
    started = time.monotonic()
    generator = answer_models.settings.generator
    writer = None
    if generator.get("backend") != "extractive":
        writer = ModelSummaryWriter(build_backend(generator, cache_dir=hysem_home() / "llm_cache" / "summary_tree"))
    citable = deduped_corpus[deduped_corpus["cluster_id"].isin(library["cluster_id"])]
    passages = document_passages(vector_index, citable)
    context.log.info(
        f"Summarising {len(passages):,} works of {context.partition_key!r} "
        f"({'extractive' if writer is None else writer.model})"
    )
    try:
        nodes, notes = build_summary_tree(
            passages,
            topics,
            chunk_store.encoder(),
            titles=dict(zip(citable["cluster_id"].astype(str), citable["title"].fillna(""), strict=True)),
            writer=writer,
        )
    finally:
        if writer is not None:
            writer.close()
    for note in notes:
        context.log.warning(note)
    table = tree_table(nodes)
    corpus = table[table["level"] == "corpus"]
    themes = table[table["level"] == "topic"][["topic", "label", "works", "summary"]]
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table)),
            "documents": int((table["level"] == "document").sum()),
            "topics": len(themes),
            "method": str(corpus["method"].iloc[0]) if len(corpus) else "none",
            "seconds": round(time.monotonic() - started, 2),
            "corpus_summary": MetadataValue.md(str(corpus["summary"].iloc[0]) if len(corpus) else "_no works_"),
            "themes": table_preview(themes, rows=20, width=200, empty="_no topics_"),
        },
    )
