"""Knowledge stage assets: ``vector_index`` (Qdrant + BM25), ``knowledge_graph`` and saved reports."""

import time

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, AssetsDefinition, MetadataValue, Output, asset

from hysem_assets.knowledge.build import build_partition_graph
from hysem_assets.knowledge.fields import canonical_fields, chunk_mentions
from hysem_assets.knowledge.reports import Report, load_reports, run_report
from hysem_assets.knowledge.schema import load_schema
from hysem_assets.metadata import table_preview
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import GRAPH_STORE_TAG, gpu_step_tags
from hysem_assets.progress import Progress
from hysem_assets.queries import get_query
from hysem_assets.resources import ChunkStore, GraphDatabase
from hysem_assets.retrieval.chunking import chunk_documents
from hysem_assets.retrieval.indexing import index_chunks, with_citations
from hysem_assets.stores.graph import load_partition
from hysem_assets.terms import load_dictionaries


def dictionary_spellings() -> dict[str, dict[str, str]]:
    return {field: dict(dictionary.spellings) for field, dictionary in load_dictionaries().items()}


def citable_corpus(corpus: pd.DataFrame, library: pd.DataFrame, topics: pd.DataFrame | None = None) -> pd.DataFrame:
    """The corpus with its citations, Zotero keys and (when given) dominant topic per work."""
    joined = corpus.merge(
        library[["cluster_id", "in_text_citation", "full_citation", "zotero_key"]], on="cluster_id", how="left"
    )
    if topics is not None:
        joined = joined.merge(topics[["cluster_id", "dominant_topic"]], on="cluster_id", how="left")
    return joined


@asset(
    group_name="knowledge",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "library": AssetIn(), "parsed_docs": AssetIn()},
    pool="gpu",
    op_tags=gpu_step_tags("vector_index"),
    description=(
        "Section-aware token chunks of every parsed document with their citations, embedded in batches into a "
        "Qdrant collection (payload indexed by query) and a BM25 keyword index per partition; unchanged chunks "
        "are not embedded again."
    ),
    kinds={"python", "parquet", "qdrant"},
)
def vector_index(
    context: AssetExecutionContext,
    chunk_store: ChunkStore,
    deduped_corpus: pd.DataFrame,
    library: pd.DataFrame,
    parsed_docs: pd.DataFrame,
) -> Output[pd.DataFrame]:
    settings = chunk_store.settings
    embedder = chunk_store.encoder()
    documents = parsed_docs[parsed_docs["error"].isna()][["cluster_id", "markdown"]]
    chunks = chunk_documents(
        documents, max_tokens=settings.max_tokens, overlap=settings.overlap, spans=embedder.token_spans
    )
    chunks = with_citations(chunks, citable_corpus(deduped_corpus, library))
    progress = Progress(context.log, "vector_index", unit="chunks embedded")
    store = chunk_store.open()
    try:
        summary = index_chunks(
            chunks,
            query=context.partition_key,
            store=store,
            embedder=embedder,
            keyword_root=chunk_store.keyword_root(),
            progress=progress,
        )
    finally:
        progress.close()
        store.close()
    return Output(
        chunks,
        metadata={
            "dagster/row_count": len(chunks),
            "documents": len(documents),
            "embedded": summary.embedded,
            "reused": summary.reused,
            "deleted": summary.deleted,
            "model": embedder.name,
            "seconds": round(summary.seconds, 2),
            "preview": table_preview(chunks, ["chunk_id", "section", "text"], rows=5, width=100),
        },
    )


@asset(
    group_name="knowledge",
    partitions_def=queries_partitions,
    ins={
        name: AssetIn()
        for name in ("deduped_corpus", "library", "topics", "extracted_fields", "canonical_terms", "vector_index")
    },
    description=(
        "The partition loaded into the graph store (config/kg_schema.yaml): Query, Article, entity and Chunk nodes "
        "with their relationships, in one transaction; records that left the query are detached."
    ),
    kinds={"python", "neo4j"},
    op_tags=GRAPH_STORE_TAG,
)
def knowledge_graph(
    context: AssetExecutionContext,
    graph_database: GraphDatabase,
    deduped_corpus: pd.DataFrame,
    library: pd.DataFrame,
    topics: pd.DataFrame,
    extracted_fields: pd.DataFrame,
    canonical_terms: pd.DataFrame,
    vector_index: pd.DataFrame,
) -> Output[pd.DataFrame]:
    settings = graph_database.settings
    schema = load_schema()
    spellings = dictionary_spellings()
    fields = canonical_fields(schema, extracted_fields, canonical_terms, spellings)
    chunks = vector_index.assign(mentions=chunk_mentions(schema, vector_index, canonical_terms, spellings))
    graph = build_partition_graph(
        schema,
        context.partition_key,
        corpus=citable_corpus(deduped_corpus, library, topics),
        fields=fields,
        chunks=chunks,
        title=get_query(context.partition_key).title or None,
    )
    store = graph_database.open()
    progress = Progress(context.log, "knowledge_graph", unit="rows")
    try:
        store.ensure_schema(schema)
        summary = load_partition(store, schema, graph, batch_size=settings.batch_size, progress=progress)
    finally:
        progress.close()
        store.close()
    rows = [("node", label, count) for label, count in summary.nodes.items()]
    rows += [("relationship", kind, count) for kind, count in summary.relationships.items()]
    table = pd.DataFrame(rows, columns=["kind", "type", "count"])
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            "backend": settings.backend,
            "nodes": sum(summary.nodes.values()),
            "relationships": sum(summary.relationships.values()),
            "detached": summary.detached,
            "pruned": summary.pruned,
            "seconds": round(summary.seconds, 2),
            "loaded": MetadataValue.md(table.to_markdown(index=False)),
            "store_totals": MetadataValue.json(
                {"nodes": summary.counts.nodes, "relationships": summary.counts.relationships}
            ),
        },
    )


def report_asset(report: Report) -> AssetsDefinition:
    """A saved Cypher report (config/reports/*.cypher) as an asset whose table shows in the UI."""

    @asset(
        name=report.name,
        key_prefix="reports",
        group_name="knowledge",
        partitions_def=queries_partitions,
        deps=[knowledge_graph],
        op_tags=GRAPH_STORE_TAG,
        description=report.description or f"Saved report {report.name}.cypher over the knowledge graph.",
        kinds={"python", "parquet"},
    )
    def _report(context: AssetExecutionContext, graph_database: GraphDatabase) -> Output[pd.DataFrame]:
        store = graph_database.open()
        started = time.monotonic()
        try:
            table = run_report(store, report, context.partition_key)
        finally:
            store.close()
        return Output(
            table,
            metadata={
                "dagster/row_count": len(table),
                "seconds": round(time.monotonic() - started, 2),
                "result": table_preview(table, rows=50),
                "cypher": MetadataValue.md(f"```cypher\n{report.cypher}\n```"),
            },
        )

    return _report


report_assets = [report_asset(report) for report in load_reports()]
