"""``canonical_terms``: raw extracted terms mapped onto canonical terms, per terms field of the query's protocol."""

import json

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.embeddings import Encoder
from hysem_assets.empty import NO_RECORDS, empty_note
from hysem_assets.environment import hysem_home
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import gpu_step_tags
from hysem_assets.progress import Progress
from hysem_assets.protocols import protocol_for_query
from hysem_assets.resources import TermUnifier
from hysem_assets.terms import map_terms
from hysem_assets.terms.suggestions import write_suggested_dictionaries


def raw_terms(extracted: pd.DataFrame, fields: list[str]) -> pd.DataFrame:
    """Long table (doc_id, field, raw_term) of the list values extracted for ``fields``."""
    rows = [
        {"doc_id": row["cluster_id"], "field": field, "raw_term": term}
        for row in extracted.to_dict("records")
        for field in fields
        if isinstance(row.get(field), str) and row[field].startswith("[")
        for term in json.loads(row[field])
        if isinstance(term, str) and term.strip()
    ]
    return pd.DataFrame(rows, columns=["doc_id", "field", "raw_term"])


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
    context: AssetExecutionContext, term_unifier: TermUnifier, extracted_fields: pd.DataFrame
) -> Output[pd.DataFrame]:
    settings = term_unifier.settings
    protocol = protocol_for_query(context.partition_key)
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
