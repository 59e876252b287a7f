"""``extracted_fields``: the fields of config/fields.yaml for every work, by the profile's LLM backend."""

import json
import time

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.environment import hysem_home
from hysem_assets.extraction import TOKENIZER_NAME, Document, extract_documents_sync, load_fields
from hysem_assets.llm import build_backend
from hysem_assets.metadata import table_preview
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import gpu_step_tags
from hysem_assets.progress import Progress
from hysem_assets.resources import FieldExtractor


def documents_to_extract(corpus: pd.DataFrame, parsed: pd.DataFrame) -> list[Document]:
    """Every work: its parsed full text where there is one, else title and abstract.

    Closed-access works still get their fields from what the abstract says, and the row
    records which text it came from.
    """
    full_text = parsed[parsed["error"].isna()].set_index("cluster_id")["markdown"].to_dict()
    documents = []
    for row in corpus.itertuples():
        text = full_text.get(row.cluster_id)
        source = "full_text" if text else "abstract"
        if not text:
            text = "\n\n".join(part for part in (row.title, row.abstract) if isinstance(part, str) and part)
        documents.append(Document(row.cluster_id, text, {"title": row.title or "", "text_source": source}))
    return documents


@asset(
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "parsed_docs": AssetIn()},
    pool="gpu",
    op_tags=gpu_step_tags("extracted_fields"),
    description=(
        "Structured fields (config/fields.yaml) per work, extracted chunk by chunk with the record merged so far "
        "in context, validated with pydantic; full text where parsed, else title and abstract."
    ),
    kinds={"python", "parquet"},
)
def extracted_fields(
    context: AssetExecutionContext,
    field_extractor: FieldExtractor,
    deduped_corpus: pd.DataFrame,
    parsed_docs: pd.DataFrame,
) -> Output[pd.DataFrame]:
    settings = field_extractor.settings
    fields = load_fields()
    backend = build_backend(settings.llm, cache_dir=hysem_home() / "llm_cache" / "extracted_fields")
    documents = documents_to_extract(deduped_corpus, parsed_docs)
    context.log.info(f"Extracting {len(fields)} fields from {len(documents):,} works with {backend.model}")
    progress = Progress(context.log, "extracted_fields", unit="documents")
    started = time.monotonic()
    try:
        results = extract_documents_sync(
            documents,
            fields,
            backend,
            chunk_tokens=settings.chunk_tokens,
            overlap=settings.overlap,
            concurrency=settings.concurrency,
            max_attempts=settings.max_attempts,
            progress=progress,
        )
    finally:
        progress.close()
    table = pd.DataFrame([result.as_row() for result in results]).rename(columns={"doc_id": "cluster_id"})
    table.insert(1, "text_source", [document.metadata["text_source"] for document in documents])
    field_names = [field.name for field in fields]
    for name in field_names:  # nested values as JSON text, so Parquet keeps one type per column
        table[name] = table[name].map(
            lambda value: value if isinstance(value, str) or value is None else json.dumps(value)
        )
    for row in table[table["status"] == "error"].itertuples():
        context.log.warning(f"{row.cluster_id}: {row.error}")
    filled = {name: int(table[name].map(lambda v: v not in (None, "", "[]", "null")).sum()) for name in field_names}
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            "backend": backend.model,
            "tokenizer": TOKENIZER_NAME,
            **backend.usage.as_metadata(),
            "seconds": round(time.monotonic() - started, 2),
            "statuses": MetadataValue.json(table["status"].value_counts().to_dict()),
            "filled_per_field": MetadataValue.json(filled),
            "preview": table_preview(table, ["cluster_id", "text_source", *field_names[:3]], rows=8),
        },
    )
