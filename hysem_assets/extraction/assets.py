"""``extracted_fields``: the fields of the query's review protocol for every work, by the profile's LLM backend."""

import json
import time

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.empty import empty_note, typed_when_empty
from hysem_assets.environment import hysem_home
from hysem_assets.extraction import TOKENIZER_NAME, Document
from hysem_assets.extraction.documents import EXTRACTION_RUN_COLUMNS
from hysem_assets.extraction.reuse import reader_of, reuse_or_extract
from hysem_assets.extraction.rows import documents_to_extract, extracted_rows
from hysem_assets.llm import build_backend
from hysem_assets.metadata import table_preview
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import gpu_step_tags
from hysem_assets.progress import Progress
from hysem_assets.protocols import Protocol, protocol_for_query
from hysem_assets.resources import FieldExtractor
from hysem_assets.screening.outcome import screened_in
from hysem_assets.work_cache import WorkCache, work_id

#: Types of the columns beside the fields, which a table of no works cannot infer.
RUN_DTYPES = {
    "text_source": "object",
    "status": "object",
    "error": "object",
    "chunks": "int64",
    "prompt_tokens": "int64",
    "completion_tokens": "int64",
    "cache_hits": "int64",
    "evidence": "object",
}


def typed_columns(table: pd.DataFrame, protocol: Protocol) -> pd.DataFrame:
    """One Parquet type per field column: lists and records as JSON text, numbers as nullable numbers."""
    table = table.copy()
    for field in protocol.fields:
        column = table[field.name]
        if field.type in ("terms",) or field.records:
            table[field.name] = column.map(
                lambda value: None if value is None else json.dumps(value, ensure_ascii=False)
            )
        elif field.type == "number":
            table[field.name] = pd.array(column, dtype="Int64" if field.number_kind == "count" else "Float64")
    return table


@asset(
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "screening": AssetIn(), "parsed_docs": AssetIn()},
    pool="gpu",
    op_tags=gpu_step_tags("extracted_fields"),
    description=(
        "The fields of the query's review protocol (config/protocols) per work that screening lets through, each value with its evidence "
        "sentence, extracted chunk by chunk with the record merged so far in context and validated with pydantic; "
        "full text where parsed, else title and abstract. A work read before from the same text with the same "
        "protocol and model settings is read from the work cache."
    ),
    kinds={"python", "parquet"},
)
def extracted_fields(
    context: AssetExecutionContext,
    field_extractor: FieldExtractor,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
    parsed_docs: pd.DataFrame,
) -> Output[pd.DataFrame]:
    settings = field_extractor.settings
    works = screened_in(deduped_corpus, screening)
    protocol = protocol_for_query(context.partition_key)
    fields = protocol.extraction_fields()
    backend = build_backend(settings.llm, cache_dir=hysem_home() / "llm_cache" / "extracted_fields", protocol=protocol)
    documents = documents_to_extract(works, parsed_docs)
    progress = Progress(context.log, "extracted_fields", unit="documents")
    started = time.monotonic()

    def extract(chosen: list[Document]) -> list[dict]:
        context.log.info(
            f"Extracting {len(fields)} fields of protocol {protocol.name} from {len(chosen):,} of "
            f"{len(documents):,} works (the others extracted before, read from the cache) with {backend.model}"
        )
        return extracted_rows(chosen, protocol, backend, settings, progress)

    try:
        run = reuse_or_extract(
            WorkCache("extracted_fields"),
            context.partition_key,
            [work_id(doi, cluster_id) for doi, cluster_id in zip(works["doi"], works["cluster_id"])],
            documents,
            reader_of(protocol.fingerprint, backend.model, settings),
            extract,
        )
    finally:
        progress.close()
    table = pd.DataFrame(run.rows, columns=[*(field.name for field in fields), *EXTRACTION_RUN_COLUMNS, "evidence"])
    table.insert(0, "cluster_id", [document.doc_id for document in documents])
    table.insert(1, "text_source", [document.metadata["text_source"] for document in documents])
    table.insert(2, "protocol", protocol.fingerprint)
    field_names = [field.name for field in fields]
    table = typed_columns(table, protocol)
    table = typed_when_empty(table, RUN_DTYPES)
    for row in table[table["status"] == "error"].itertuples():
        context.log.warning(f"{row.cluster_id}: {row.error}")
    filled = {
        name: int(table[name].map(lambda v: not pd.isna(v) and v not in ("", "[]")).sum()) for name in field_names
    }
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table)),
            "protocol": protocol.fingerprint,
            "backend": backend.model,
            "tokenizer": TOKENIZER_NAME,
            **backend.usage.as_metadata(),
            "seconds": round(time.monotonic() - started, 2),
            **run.changes.as_metadata(),
            "statuses": MetadataValue.json(table["status"].value_counts().to_dict()),
            "filled_per_field": MetadataValue.json(filled),
            "preview": table_preview(table, ["cluster_id", "text_source", *field_names[:3]], rows=8),
        },
    )
