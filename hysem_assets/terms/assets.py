"""``canonical_terms``: raw extracted terms mapped onto the canonical terms of config/dictionaries."""

import json

import pandas as pd
from dagster import AssetExecutionContext, AssetIn, MetadataValue, Output, asset

from hysem_assets.embeddings import Encoder
from hysem_assets.environment import hysem_home
from hysem_assets.partitions import queries_partitions
from hysem_assets.placement import gpu_step_tags
from hysem_assets.progress import Progress
from hysem_assets.resources import TermUnifier
from hysem_assets.terms import load_dictionaries, map_terms


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
        "Every extracted term mapped to a canonical term of its field's dictionary (exact, normalized, then "
        "MiniLM embeddings above a threshold), with the unmatched terms and suggested new dictionary entries."
    ),
    kinds={"python", "parquet"},
)
def canonical_terms(
    context: AssetExecutionContext, term_unifier: TermUnifier, extracted_fields: pd.DataFrame
) -> Output[pd.DataFrame]:
    settings = term_unifier.settings
    dictionaries = load_dictionaries()
    terms = raw_terms(extracted_fields, sorted(dictionaries))
    progress = Progress(context.log, "canonical_terms", unit="terms")
    try:
        result = map_terms(
            terms,
            dictionaries,
            cache_dir=hysem_home() / "cache" / "term_embeddings",
            encoder=Encoder(settings.model, device=settings.device, batch_size=256),
            threshold=settings.threshold,
            thresholds=settings.thresholds,
            progress=progress,
        )
    finally:
        progress.close()
    for message in result.conflicts.get("message", []):
        context.log.warning(message)
    suggestions = result.suggestions_yaml()
    metadata = {
        "dagster/row_count": len(result.mapping),
        "raw_terms": len(terms),
        "unmatched": int((result.mapping["method"] == "unmatched").sum()),
        "match_rates": MetadataValue.md(result.fields.to_markdown(index=False)),
        "unmatched_terms": MetadataValue.md(result.unmatched.head(30).to_markdown(index=False)),
    }
    if suggestions:
        metadata["suggested_entries"] = MetadataValue.md(
            "\n\n".join(
                f"`config/dictionaries/{field}.yaml`:\n```yaml\n{text}\n```" for field, text in suggestions.items()
            )
        )
    return Output(result.mapping, metadata=metadata)
