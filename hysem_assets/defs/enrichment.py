"""``extracted_fields`` (the protocol's fields per work), ``topics`` (LDA by c_v coherence) and ``canonical_terms`` (terms mapped onto canonical ones)."""

import base64
import json
import time
from typing import Any

import pandas as pd
from dagster import AssetCheckResult, AssetCheckSpec, AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.core.empty import NO_RECORDS, empty_note, nothing_to_check, typed_when_empty
from hysem_assets.core.progress import Progress
from hysem_assets.defs.metadata import table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.placement import gpu_step_tags
from hysem_assets.defs.resources import FieldExtractor, ReviewConfig, TermUnifier, TopicModeller
from hysem_assets.embedding.encoder import Encoder
from hysem_assets.extraction.backends import build_backend as build_extraction_backend
from hysem_assets.extraction.chunking import TOKENIZER_NAME
from hysem_assets.extraction.documents import EXTRACTION_RUN_COLUMNS, Document
from hysem_assets.extraction.reuse import reader_of, reuse_or_extract
from hysem_assets.extraction.rows import all_failed, blanked_counts, documents_to_extract, extracted_rows
from hysem_assets.llm.registry import build_backend
from hysem_assets.screening.outcome import screened_in
from hysem_assets.settings.backends import answer_settings
from hysem_assets.settings.environment import hysem_home
from hysem_assets.settings.profile import TopicsSettings
from hysem_assets.settings.protocols import Protocol
from hysem_assets.stores.tables import write_parquet
from hysem_assets.stores.work_cache import WorkCache, work_id
from hysem_assets.terms.mapping import map_terms, raw_terms
from hysem_assets.terms.suggestions import write_suggested_dictionaries
from hysem_assets.topics.incremental import read_state, update_topics, write_state
from hysem_assets.topics.labels import TopicLabeller, label_from_top_words, llm_labeller
from hysem_assets.topics.view import write_intertopic_view

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


#: The blocking check of ``extracted_fields``: a run in which every work failed is no result.
EXTRACTED_CHECK = "not_every_work_failed"


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
    check_specs=[
        AssetCheckSpec(
            EXTRACTED_CHECK,
            asset="extracted_fields",
            blocking=True,
            description="Not every work failed extraction: when all did (a refused key, a model server down), the "
            "run fails with the first reasons instead of passing a table of errors downstream.",
        )
    ],
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
    review_config: ReviewConfig,
    deduped_corpus: pd.DataFrame,
    screening: pd.DataFrame,
    parsed_docs: pd.DataFrame,
):
    settings = field_extractor.settings
    works = screened_in(deduped_corpus, screening)
    protocol = review_config.protocol(context.partition_key)
    fields = protocol.extraction_fields()
    backend = build_extraction_backend(
        settings.llm, cache_dir=hysem_home() / "llm_cache" / "extracted_fields", protocol=protocol
    )
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
    yield Output(
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
            "not_read": MetadataValue.json(blanked_counts(documents)),
            "preview": table_preview(table, ["cluster_id", "text_source", *field_names[:3]], rows=8),
        },
    )
    failed = all_failed(table[["status", "error"]].to_dict("records"))
    yield AssetCheckResult(
        check_name=EXTRACTED_CHECK,
        passed=failed is None,
        description=failed or nothing_to_check(len(table)),
        metadata={"works": len(table), "failed": int((table["status"] == "error").sum())},
    )


#: The kept model of a partition, beside its intertopic view, for the next run to reuse.
STATE_FILE = "topic_model.pkl"


def topic_labeller(placement: TopicsSettings) -> TopicLabeller:
    if not placement.llm:
        return label_from_top_words
    return llm_labeller(build_backend(placement.llm, cache_dir=hysem_home() / "llm_cache" / "topics"))


def labeller_settings(placement: TopicsSettings) -> Any:
    """What names the topics, as kept with the model: a change of it refits (new labels). None: the top words."""
    return answer_settings(placement.llm) if placement.llm else None


@asset(
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={"deduped_corpus": AssetIn(), "parsed_docs": AssetIn()},
    description=(
        "LDA topics (scikit-learn) over every work's text, the model chosen by mean c_v coherence over the grid "
        "in config/topics.yaml: topic table, per-document mixture and dominant topic, and an intertopic map. "
        "A re-run keeps the fitted model, and its topic numbers and labels, placing new and changed works in it, "
        "unless the settings changed or more than training.refit_share of the fitted works are new, changed or "
        "dropped; `refit` and `refit_reason` say which."
    ),
    kinds={"python", "parquet", "scikitlearn"},
)
def topics(
    context: AssetExecutionContext,
    topic_modeller: TopicModeller,
    review_config: ReviewConfig,
    deduped_corpus: pd.DataFrame,
    parsed_docs: pd.DataFrame,
) -> Output[pd.DataFrame]:
    placement = topic_modeller.settings
    documents = pd.DataFrame(
        [
            {"doc_id": d.doc_id, "text": d.text}
            for d in documents_to_extract(deduped_corpus, parsed_docs, own_values=False)  # topics read every word
        ],
        columns=["doc_id", "text"],
    )
    directory = hysem_home() / "topics" / context.partition_key
    progress = Progress(context.log, "topic models", unit="models")
    try:
        run = update_topics(
            documents,
            [work_id(doi, cluster) for doi, cluster in zip(deduped_corpus["doi"], deduped_corpus["cluster_id"])],
            review_config.topic_settings(),
            read_state(directory / STATE_FILE),
            labeller=labeller_settings(placement),
            workers=placement.workers,
            label_topic=topic_labeller(placement),
            progress=progress,
        )
    finally:
        progress.close()
    model = run.model
    context.log.info(
        ("Refitted the topic model" if run.refit else "Kept the fitted topic model, new and changed works placed in it")
        + f": {run.reason}"
    )
    for note in model.notes:
        context.log.warning(note)
    view = write_intertopic_view(model, directory)
    png = base64.b64encode(view.png.read_bytes()).decode()
    labels = model.topics.set_index("topic")["label"]
    table = model.documents.rename(columns={"doc_id": "cluster_id"})
    dominant_label = table["dominant_topic"].map(labels).astype(object)  # text, even with no topic to map to
    table.insert(table.columns.get_loc("dominant_topic") + 1, "dominant_label", dominant_label)
    topic_table = model.topics.assign(top_words=model.topics["top_words"].map(", ".join))
    write_parquet(topic_table.drop(columns=["word_weights"]), view.html.parent / "topic_table.parquet")
    quality = {} if model.empty else {"coherence_c_v": round(float(model.chosen["coherence"]), 4)}
    write_state(directory / STATE_FILE, run.state)
    return Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **empty_note(len(table)),
            "n_topics": int(model.chosen["n_topics"]),
            **quality,
            "refit": run.refit,
            "refit_reason": run.reason,
            **run.changes.as_metadata(),
            "topics": MetadataValue.md(
                topic_table[["topic", "label", "coherence", "prevalence", "top_words"]].to_markdown(index=False)
            ),
            "grid": MetadataValue.md(model.grid.to_markdown(index=False)),
            "intertopic_map": MetadataValue.md(f"![intertopic distance map](data:image/png;base64,{png})"),
            "intertopic_html": MetadataValue.path(str(view.html)),
        },
    )


@asset(
    group_name="enrichment",
    partitions_def=queries_partitions,
    ins={"extracted_fields": AssetIn()},
    pool="gpu",
    op_tags=gpu_step_tags("canonical_terms"),
    description=(
        "Every extracted term of the protocol's terms fields mapped to a canonical term: onto the field's dictionary "
        "(exact, normalized, then MiniLM embeddings above a threshold) where it has one, else grouped by spelling and "
        "meaning and named by the most frequent member; with unmatched terms and suggested dictionaries."
    ),
    kinds={"python", "parquet"},
)
def canonical_terms(
    context: AssetExecutionContext,
    term_unifier: TermUnifier,
    review_config: ReviewConfig,
    extracted_fields: pd.DataFrame,
) -> Output[pd.DataFrame]:
    settings = term_unifier.settings
    protocol = review_config.protocol(context.partition_key)
    protocol.check_extracted(extracted_fields, context.partition_key)
    fields = [field.name for field in protocol.fields if field.type == "terms"]
    dictionaries = protocol.dictionaries()
    terms = raw_terms(extracted_fields, fields)
    progress = Progress(context.log, "canonical_terms", unit="terms")
    try:
        result = map_terms(
            terms,
            {name: dictionaries.get(name) for name in fields},
            cache_dir=hysem_home() / "cache" / "term_embeddings",
            encoder=Encoder(settings.model, device=settings.device, batch_size=256),
            threshold=settings.threshold,
            thresholds=settings.thresholds,
            group_threshold=settings.group_threshold,
            progress=progress,
        )
    finally:
        progress.close()
    for message in result.conflicts.get("message", []):
        context.log.warning(message)
    suggestions = result.suggestions_yaml()
    suggested = result.suggested_dictionaries()
    written = write_suggested_dictionaries(suggested, hysem_home() / "suggested_dictionaries" / context.partition_key)
    metadata = {
        "dagster/row_count": len(result.mapping),
        **empty_note(len(result.mapping), NO_RECORDS if extracted_fields.empty else "no term was extracted"),
        "protocol": protocol.fingerprint,
        "raw_terms": len(terms),
        "unmatched": int((result.mapping["method"] == "unmatched").sum()),
        "grouped": int((result.mapping["method"] == "grouped").sum()),
        "match_rates": MetadataValue.md(result.fields.to_markdown(index=False)),
        "unmatched_terms": MetadataValue.md(result.unmatched.head(30).to_markdown(index=False)),
    }
    if suggestions:
        metadata["suggested_entries"] = MetadataValue.md(
            "\n\n".join(
                f"`config/dictionaries/{field}.yaml`:\n```yaml\n{text}\n```" for field, text in suggestions.items()
            )
        )
    if written:
        metadata["suggested_dictionaries"] = MetadataValue.md(
            "\n\n".join(
                f"`{path}` (adopt: copy to config/dictionaries/ and name it in the field's `dictionary:`):\n"
                f"```yaml\n{suggested[path.stem]}\n```"
                for path in written
            )
        )
    return Output(result.mapping, metadata=metadata)
