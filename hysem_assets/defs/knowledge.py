"""``vector_index`` (Qdrant, dense + BM25), ``knowledge_graph``, saved reports and ``summary_tree`` (summaries for corpus-level questions)."""

import time

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, AssetsDefinition, MetadataValue, Output, asset

from hysem_assets.core.empty import NO_RECORDS, empty_note
from hysem_assets.core.progress import Progress
from hysem_assets.dedup.notices import linked_notices
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.placement import GRAPH_STORE_TAG, gpu_step_tags
from hysem_assets.defs.resources import AnswerModels, ChunkStore, GraphDatabase, ReviewConfig
from hysem_assets.knowledge.build import article_digests, build_partition_graph
from hysem_assets.knowledge.fields import canonical_fields, chunk_mentions
from hysem_assets.knowledge.reports import Report, load_reports, run_report
from hysem_assets.knowledge.summary_tree import build_summary_tree, document_passages, tree_table
from hysem_assets.knowledge.summary_writer import ModelSummaryWriter
from hysem_assets.llm.registry import build_backend
from hysem_assets.retrieval.chunking import FULL_TEXT, work_chunks
from hysem_assets.retrieval.indexing import IndexSummary, index_chunks, with_citations
from hysem_assets.retrieval.repair import chunk_tables, rebuild_chunk_store
from hysem_assets.screening.outcome import answered_ids
from hysem_assets.settings.environment import hysem_home
from hysem_assets.settings.protocols import Protocol
from hysem_assets.stores.chunks import DamagedStoreError
from hysem_assets.stores.graph import load_partition
from hysem_assets.stores.graph_schema import graph_schema
from hysem_assets.stores.work_cache import WorkCache


def dictionary_spellings(protocol: Protocol) -> dict[str, dict[str, str]]:
    return {field: dict(dictionary.spellings) for field, dictionary in protocol.dictionaries().items()}


def studies(frame: pd.DataFrame, left_out: set[str]) -> pd.DataFrame:
    """The rows of ``frame`` whose work is not in ``left_out`` (notices: no study of their own)."""
    return frame[~frame["cluster_id"].isin(left_out)]


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
        "Every work's chunks with their citations: its title and abstract in sentence windows (abstract-level "
        "evidence) and, when parsed, its full text in section-aware token chunks; embedded in batches into a "
        "Qdrant collection with dense and BM25 sparse vectors (payload indexed by query, work and section); "
        "unchanged chunks are not embedded again."
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
    works = deduped_corpus.reindex(columns=["cluster_id", "title", "abstract"])
    chunks = work_chunks(
        works, documents, max_tokens=settings.max_tokens, overlap=settings.overlap, spans=embedder.token_spans
    )
    chunks = with_citations(chunks, citable_corpus(deduped_corpus, library))
    levels = chunks.groupby("cluster_id")["evidence"].agg(set) if len(chunks) else pd.Series(dtype=object)
    progress = Progress(context.log, "vector_index", unit="chunks embedded")

    def index() -> IndexSummary:
        store = chunk_store.open()
        try:
            return index_chunks(chunks, query=context.partition_key, store=store, embedder=embedder, progress=progress)
        finally:
            store.close()

    try:
        try:
            summary = index()
        except DamagedStoreError as exc:  # shared by every query: rebuilt whole, then this partition written
            context.log.warning(f"{exc}; rebuilding it from every query's chunk table")
            queries = context.instance.get_dynamic_partitions(queries_partitions.name)
            tables = chunk_tables([q for q in queries if q != context.partition_key])
            context.log.info(rebuild_chunk_store(settings, embedder, tables).describe())
            summary = index()
    finally:
        progress.close()
    return Output(
        chunks,
        metadata={
            "dagster/row_count": len(chunks),
            **empty_note(len(chunks), NO_RECORDS if deduped_corpus.empty else "no work has a title, abstract or text"),
            "works": len(works),
            "works_indexed": len(levels),
            "works_with_full_text": int(sum(FULL_TEXT in level for level in levels)),
            "works_abstract_only": int(sum(FULL_TEXT not in level for level in levels)),
            "embedded": summary.embedded,
            "reused": summary.reused,
            "written": summary.written,
            "deleted": summary.deleted,
            "model": embedder.name,
            "seconds": round(summary.seconds, 2),
            "preview": table_preview(chunks, ["chunk_id", "evidence", "section", "text"], rows=5, width=100),
        },
    )


@asset(
    group_name="knowledge",
    partitions_def=queries_partitions,
    ins={
        name: AssetIn()
        for name in (
            "deduped_corpus",
            "screening",
            "library",
            "topics",
            "extracted_fields",
            "canonical_terms",
            "vector_index",
            "findings",
            "entities",
            "entity_relations",
        )
    },
    description=(
        "The partition loaded into the graph store: Query, Article and Chunk nodes (every work FOUND by the query, "
        "the included studies also INCLUDES, the relationship answers count over), the entity nodes and Article "
        "properties its review protocol declares, and a Finding per reported comparison (direction, evidence, "
        "estimate) joined to its work and to the entities of its arms, and the entity model's Entity nodes (typed, "
        "canonical names) with HAS_ENTITY from their works, MENTIONS_ENTITY from their chunks, RELATED between "
        "entities a sentence relates and CO_OCCURS weighted by the works mentioning both; with their relationships, "
        "in one transaction; records that left "
        "the query are detached. The whole partition is written each time; works_new, works_changed, "
        "works_unchanged and works_dropped compare each work's rows with the last load."
    ),
    kinds={"python", "neo4j"},
    op_tags=GRAPH_STORE_TAG,
)
def knowledge_graph(
    context: AssetExecutionContext,
    graph_database: GraphDatabase,
    review_config: ReviewConfig,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
    library: pd.DataFrame,
    topics: pd.DataFrame,
    extracted_fields: pd.DataFrame,
    canonical_terms: pd.DataFrame,
    vector_index: pd.DataFrame,
    findings: pd.DataFrame,
    entities: pd.DataFrame,
    entity_relations: pd.DataFrame,
) -> Output[pd.DataFrame]:
    settings = graph_database.settings
    review = review_config.review(context.partition_key)
    protocol = review.protocol
    protocol.check_extracted(extracted_fields, context.partition_key)
    schema = graph_schema(review_config.protocols(), protocol)
    spellings = dictionary_spellings(protocol)
    notices = set(linked_notices(deduped_corpus)["cluster_id"])  # counted with their papers, never as studies
    fields = canonical_fields(schema, protocol, studies(extracted_fields, notices), canonical_terms, spellings)
    chunks = studies(vector_index, notices)
    chunks = chunks.assign(mentions=chunk_mentions(schema, chunks, canonical_terms, spellings))
    graph = build_partition_graph(
        schema,
        context.partition_key,
        corpus=citable_corpus(studies(deduped_corpus, notices), library, topics),
        fields=fields,
        chunks=chunks,
        findings=studies(findings, notices),
        title=review.spec.title or None,
        included=answered_ids(screening, deduped_corpus),
        entity_mentions=studies(entities, notices),
        entity_relations=studies(entity_relations, notices),
    )
    store = graph_database.open()
    progress = Progress(context.log, "knowledge_graph", unit="rows")
    try:
        store.ensure_schema(schema)
        summary = load_partition(store, schema, graph, batch_size=settings.batch_size, progress=progress)
    finally:
        progress.close()
        store.close()
    changes = WorkCache("knowledge_graph").record_run(context.partition_key, article_digests(graph), reused=0)
    rows = [("node", label, count) for label, count in summary.nodes.items()]
    rows += [("relationship", kind, count) for kind, count in summary.relationships.items()]
    table = pd.DataFrame(rows, columns=["kind", "type", "count"])
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(deduped_corpus)),
            "backend": settings.backend,
            "protocol": protocol.fingerprint,
            "nodes": sum(summary.nodes.values()),
            "relationships": sum(summary.relationships.values()),
            "detached": summary.detached,
            "pruned": summary.pruned,
            "notices_left_out": MetadataValue.json(sorted(notices)),
            "seconds": round(summary.seconds, 2),
            **changes.as_metadata(),
            "loaded": MetadataValue.md(table.to_markdown(index=False)),
            "store_totals": MetadataValue.json(
                {"nodes": summary.counts.nodes, "relationships": summary.counts.relationships}
            ),
        },
    )


def report_asset(report: Report) -> AssetsDefinition:
    """A saved Cypher report (config/reports/*.cypher) as an asset whose table shows in the UI.

    A report belongs to the protocols that list it; on a partition of another protocol it
    is an empty table that says so, since its labels and filters mean nothing there.
    """

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
    def _report(
        context: AssetExecutionContext, graph_database: GraphDatabase, review_config: ReviewConfig
    ) -> Output[pd.DataFrame]:
        protocol = review_config.protocol(context.partition_key)
        if report.name not in protocol.reports:
            context.log.info(f"Report {report.name} is not part of protocol {protocol.name}; nothing to run.")
            return Output(
                pd.DataFrame(),
                metadata={"dagster/row_count": 0, "skipped": f"not a report of protocol {protocol.name}"},
            )
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
                **empty_note(len(table), "the report matches nothing in this partition's graph"),
                "seconds": round(time.monotonic() - started, 2),
                "result": table_preview(table, rows=50),
                "cypher": MetadataValue.md(f"```cypher\n{report.cypher}\n```"),
            },
        )

    return _report


report_assets = [report_asset(report) for report in load_reports()]


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
