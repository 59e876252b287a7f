"""``deduped_corpus``: every source's records merged into one row per work, then enriched."""

import json
import time

import pandas as pd
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetIn,
    AssetKey,
    Config,
    MetadataValue,
    Output,
    asset,
)
from pydantic import Field

from hysem_assets.acquisition.contracts import clusters_with_several_dois, lost_and_repeated, repeated_cluster_ids
from hysem_assets.acquisition.enrich import apply_enrichment, retracted_clusters
from hysem_assets.dedup import cluster_records, merge_clusters
from hysem_assets.empty import empty_note, nothing_to_check
from hysem_assets.metadata import table_preview
from hysem_assets.partitions import queries_partitions
from hysem_assets.progress import Progress
from hysem_assets.queries import METADATA_SOURCES, get_query
from hysem_assets.records import records_frame
from hysem_assets.resources import ScholarlyApis

CHECKS = {
    "every_raw_record_in_one_cluster": "Every source record sits in exactly one cluster: nothing lost in deduplication.",
    "cluster_ids_unique": "Cluster ids are unique across the corpus.",
    "one_doi_per_cluster": "No cluster merges records that carry two different DOIs.",
}
ENRICHMENT_SOURCES = ("crossref", "openalex")
PREVIEW_COLUMNS = ["cluster_id", "sources", "doi", "year", "first_author", "title"]


class CorpusConfig(Config):
    enrich: bool = Field(True, description="Backfill abstracts, types, citation counts and retraction flags by DOI.")


def combine_raw(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """All source records in one frame, each with a ``record_id`` of ``source:source_id``."""
    filled = [frame for frame in frames.values() if len(frame)]
    if not filled:  # nothing matched anywhere: the empty core table, so every later step sees its columns
        return records_frame([]).assign(record_id=pd.Series(dtype="string"))
    combined = pd.concat(filled, ignore_index=True)
    return combined.assign(record_id=combined["source"].astype(str) + ":" + combined["source_id"].astype(str))


@asset(
    name="deduped_corpus",
    group_name="acquisition",
    partitions_def=queries_partitions,
    ins={source: AssetIn(key=AssetKey(["raw_metadata", source])) for source in METADATA_SOURCES},
    check_specs=[
        AssetCheckSpec(name, asset="deduped_corpus", description=text, blocking=True) for name, text in CHECKS.items()
    ],
    description=(
        "One row per work: the records of every source clustered (identifiers, then guarded bibliographic "
        "matching), merged field by field with provenance, and backfilled from Crossref and OpenAlex by DOI."
    ),
    kinds={"python", "parquet"},
)
def deduped_corpus(
    context: AssetExecutionContext,
    config: CorpusConfig,
    scholarly_apis: ScholarlyApis,
    pubmed: pd.DataFrame,
    openalex: pd.DataFrame,
    scopus: pd.DataFrame,
):
    started = time.monotonic()
    raw = combine_raw({"pubmed": pubmed, "openalex": openalex, "scopus": scopus})
    context.log.info(f"Clustering {len(raw):,} source records")
    clusters = cluster_records(raw)
    corpus = merge_clusters(raw, clusters)
    context.log.info(f"{len(raw):,} records -> {len(corpus):,} works ({len(raw) - len(corpus):,} duplicates merged)")

    lookups = []
    if config.enrich:
        spec = get_query(context.partition_key)
        dois = sorted(corpus["doi"].dropna().unique())
        for source in ENRICHMENT_SOURCES:
            progress = Progress(context.log, f"enrich from {source}", unit="DOIs")
            try:
                outcome = scholarly_apis.lookup(source, dois, spec, progress)
            finally:
                progress.close()
            for failure in outcome.failures:
                context.log.warning(f"{source} {failure.where}: {failure.reason}")
            lookups.append(outcome)
    corpus = apply_enrichment(corpus, lookups, retracted_clusters(raw, clusters.cluster_id))
    for column in ("provenance", "merge_evidence"):
        corpus[column] = corpus[column].map(lambda value: json.dumps(value, sort_keys=True))

    yield Output(corpus, metadata=_metadata(raw, corpus, clusters.pairs, lookups, time.monotonic() - started))
    yield from _check_results(raw, corpus, clusters.cluster_id)


def _metadata(raw, corpus, pairs, lookups, seconds) -> dict:
    rules = pairs["rule"].value_counts() if len(pairs) else pd.Series(dtype=int)
    multi_source = int((corpus["sources"].map(len) > 1).sum())
    retracted = corpus.loc[corpus["is_retracted"].fillna(False).astype(bool), "doi"].fillna("(no DOI)").tolist()
    metadata = {
        "dagster/row_count": len(corpus),
        **empty_note(len(corpus)),
        "raw_records": len(raw),
        "duplicates_merged": len(raw) - len(corpus),
        "multi_source_works": multi_source,
        "with_doi": int(corpus["doi"].notna().sum()),
        "with_abstract": int(corpus["abstract"].notna().sum()),
        "retracted": len(retracted),
        "seconds": round(seconds, 2),
        "links_by_rule": MetadataValue.md(rules.rename_axis("rule").reset_index(name="links").to_markdown(index=False)),
        "preview": table_preview(corpus, PREVIEW_COLUMNS, width=80),
    }
    if retracted:
        metadata["retracted_dois"] = MetadataValue.md("\n".join(f"- {doi}" for doi in retracted))
    for outcome in lookups:
        metadata[f"enriched_from_{outcome.source}"] = len(outcome.found)
        metadata[f"{outcome.source}_failures"] = len(outcome.failures)
    return metadata


def _check_results(raw: pd.DataFrame, corpus: pd.DataFrame, cluster_ids: pd.Series):
    lost, repeated = lost_and_repeated(raw["record_id"].tolist(), corpus)
    description = nothing_to_check(len(raw))
    yield AssetCheckResult(
        check_name="every_raw_record_in_one_cluster",
        passed=not lost and not repeated,
        description=description,
        metadata={
            "raw_records": len(raw),
            "lost": len(lost),
            "in_several_clusters": len(repeated),
            "examples": ", ".join((lost + repeated)[:10]) or "none",
        },
    )
    duplicates = repeated_cluster_ids(corpus)
    yield AssetCheckResult(
        check_name="cluster_ids_unique",
        passed=not duplicates,
        description=description,
        metadata={"repeated_ids": ", ".join(duplicates[:10]) or "none"},
    )
    conflicts = clusters_with_several_dois(raw, cluster_ids)
    yield AssetCheckResult(
        check_name="one_doi_per_cluster",
        passed=not conflicts,
        description=description,
        severity=AssetCheckSeverity.ERROR,
        metadata={
            "conflicting_clusters": len(conflicts),
            "examples": MetadataValue.json({k: v for k, v in list(conflicts.items())[:10]}),
        },
    )
