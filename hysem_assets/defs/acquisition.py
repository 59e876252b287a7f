"""``raw_metadata/<source>`` (one row per record a source returned) and ``deduped_corpus`` (one row per work, merged and enriched)."""

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
    AssetsDefinition,
    Config,
    Failure,
    MetadataValue,
    Output,
    asset,
)
from pydantic import Field

from hysem_assets.acquisition.contracts import clusters_with_several_dois, lost_and_repeated, repeated_cluster_ids
from hysem_assets.acquisition.enrich import apply_enrichment, retracted_clusters
from hysem_assets.acquisition.research import LastSearch, SearchMode, entry_window, merge_found, parse_as_of
from hysem_assets.acquisition.types import RawMetadataFrame
from hysem_assets.core.empty import empty_note, nothing_to_check
from hysem_assets.core.progress import Progress
from hysem_assets.core.records import records_frame
from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.merge import merge_clusters
from hysem_assets.defs.citations import citations
from hysem_assets.defs.fetch_report import fatal_error, outcome_metadata, partial_summary
from hysem_assets.defs.imported import imported
from hysem_assets.defs.metadata import latest_metadata, table_preview
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import ReviewConfig, ScholarlyApis
from hysem_assets.settings.environment import asset_file
from hysem_assets.settings.queries import QueryError
from hysem_assets.sources.registry import BY_NAME, LOOKUPS, query_sources, record_sources, searched
from hysem_assets.stores.tables import DamagedAssetError, read_table

FETCH_COMPLETE = "fetch_complete"
FETCH_COMPLETE_DESCRIPTION = (
    "Every page or batch of the source arrived (after retries). A partial fetch blocks the assets "
    "downstream unless partial results are allowed."
)
ALLOW_PARTIAL_HINT = (
    "Re-materialize when the source recovers, or accept partial results with "
    "`hysem materialize --allow-partial` (profile: allow_partial_results: true)"
)


class SearchConfig(Config):
    search: SearchMode = Field(
        "auto",
        description="new: only records the source added since the last complete search (merged into those held); "
        "full: everything again; auto: new for queries with a schedule, full otherwise.",
    )
    as_of: str = Field("", description="The last day the search covers (YYYY-MM-DD); empty: today (UTC).")


def raw_metadata_asset(source: str) -> AssetsDefinition:
    """One asset per source, built by the same shell so every source behaves alike."""
    key = AssetKey(["raw_metadata", source])

    @asset(
        name=source,
        key_prefix="raw_metadata",
        group_name="acquisition",
        partitions_def=queries_partitions,
        description=BY_NAME[source].description,
        kinds={"python", "parquet"},
        dagster_type=RawMetadataFrame,
        check_specs=[AssetCheckSpec(FETCH_COMPLETE, asset=key, description=FETCH_COMPLETE_DESCRIPTION, blocking=True)],
    )
    def _raw_metadata(
        context: AssetExecutionContext, config: SearchConfig, scholarly_apis: ScholarlyApis, review_config: ReviewConfig
    ):
        spec = review_config.query(context.partition_key)
        try:
            as_of = parse_as_of(config.as_of)
        except ValueError as exc:
            raise Failure(description=f"raw_metadata/{source} for {spec.slug!r}: {exc}") from None
        try:
            sources = query_sources(spec)
        except QueryError as exc:
            raise Failure(description=f"raw_metadata/{source}: {exc}") from None
        if source not in sources:
            message = f"{source} is not among this query's sources {sources}"
            context.log.info(message)
            frame = records_frame([])
            yield Output(
                frame, metadata={"dagster/row_count": 0, **empty_note(0, message), "skipped": message, "partial": False}
            )
            yield AssetCheckResult(check_name=FETCH_COMPLETE, passed=True, metadata={"skipped": message})
            return
        endpoint = scholarly_apis.endpoint(source, spec)
        window = entry_window(spec, source, _last_search(context, key), config.search, as_of)
        held = _held_records(context, source, spec.slug) if window else None
        if held is None:
            window = None
        searched = f"records {window}" if window else "every record"
        context.log.info(f"Fetching {source} for {spec.slug!r} from {endpoint.display_url}: {searched}")
        progress = Progress(context.log, f"raw_metadata/{source}")
        started = time.monotonic()
        try:
            outcome = scholarly_apis.fetch(source, spec, progress, window)
        finally:
            progress.close()
        for message in filter(None, [outcome.skipped, *outcome.notes]):
            context.log.warning(message)
        for failure in outcome.failures:
            context.log.warning(f"{source} {failure.where}: {failure.reason}")
        for rejection in outcome.rejected:
            context.log.warning(f"{source} {rejection.where}: record rejected: {rejection.reason}")
        error = fatal_error(outcome)
        if error:
            raise Failure(description=error, metadata={"failures": len(outcome.failures)})
        found = records_frame(outcome.records)
        frame = found if held is None else merge_found(held, found)
        metadata = outcome_metadata(outcome, frame, endpoint.display_url, time.monotonic() - started)
        metadata["query"] = MetadataValue.text(spec.text_for(source))
        metadata["search"] = searched
        metadata["searched_through"] = as_of.isoformat()
        metadata["search_key"] = spec.search_key(source)
        if held is not None:
            metadata["records_found"] = len(found)
            metadata["records_new"] = int((~found["source_id"].isin(set(held["source_id"]))).sum())
        allowed = scholarly_apis.allow_partial_results
        if outcome.partial:
            summary = partial_summary(outcome, len(frame), outcome.expected(spec.max_records))
            kept = None if allowed else _complete_rows(context, key)
            if kept is not None:
                raise Failure(
                    description=f"{summary}. Kept the earlier complete materialization ({kept:,} records). "
                    f"{ALLOW_PARTIAL_HINT}.",
                    metadata={"partial": True, "failures": len(outcome.failures), "kept_records": kept},
                )
            context.log.error(
                f"{summary}. " + ("Partial results are allowed: it flows on." if allowed else f"{ALLOW_PARTIAL_HINT}.")
            )
        context.log.info(
            f"{source}: {len(frame):,} records, {len(outcome.failures)} failed requests, "
            f"{len(outcome.rejected)} rejected records"
        )
        yield Output(frame, metadata=metadata)
        yield AssetCheckResult(
            check_name=FETCH_COMPLETE,
            passed=not outcome.partial,
            severity=AssetCheckSeverity.WARN if allowed else AssetCheckSeverity.ERROR,
            metadata={"failed_requests": len(outcome.failures), "partial_allowed": allowed},
        )

    return _raw_metadata


def _last_search(context: AssetExecutionContext, key: AssetKey) -> LastSearch | None:
    """The search behind this partition's latest materialization (None before the first)."""
    metadata = latest_metadata(context.instance, key, context.partition_key)
    if metadata is None:
        return None
    through = metadata.get("searched_through")
    return LastSearch(
        searched_through=parse_as_of(through) if through else None,
        search_key=metadata.get("search_key"),
        complete=not metadata.get("partial", False),
    )


def _held_records(context: AssetExecutionContext, source: str, slug: str) -> pd.DataFrame | None:
    """The records this partition holds for ``source``, which a re-search adds to; None when they cannot be read."""
    path = asset_file(f"raw_metadata/{source}", slug)
    try:
        return read_table(path)
    except (FileNotFoundError, DamagedAssetError) as exc:  # search everything again instead
        context.log.warning(f"{path} cannot be read ({exc}); searching every record again")
        return None


def _complete_rows(context: AssetExecutionContext, key: AssetKey) -> int | None:
    """Rows of this partition's latest materialization when it was complete, else None."""
    metadata = latest_metadata(context.instance, key, context.partition_key)
    if metadata is None or metadata.get("partial", False):
        return None
    return int(metadata.get("dagster/row_count", 0))


#: Every ``raw_metadata`` asset: one per searched source, the imported exports and citation searching.
raw_metadata_assets = [*(raw_metadata_asset(source) for source in searched()), imported, citations]


CHECKS = {
    "every_raw_record_in_one_cluster": "Every source record sits in exactly one cluster: nothing lost in deduplication.",
    "cluster_ids_unique": "Cluster ids are unique across the corpus.",
    "one_doi_per_cluster": "No cluster merges records that carry two different DOIs.",
}
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
    ins={source: AssetIn(key=AssetKey(["raw_metadata", source])) for source in record_sources()},
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
    review_config: ReviewConfig,
    **raw_metadata: pd.DataFrame,
):
    started = time.monotonic()
    raw = combine_raw(raw_metadata)
    context.log.info(f"Clustering {len(raw):,} source records")
    clusters = cluster_records(raw)
    corpus = merge_clusters(raw, clusters, authority=record_sources())
    context.log.info(f"{len(raw):,} records -> {len(corpus):,} works ({len(raw) - len(corpus):,} duplicates merged)")

    lookups = []
    if config.enrich:
        spec = review_config.query(context.partition_key)
        dois = sorted(corpus["doi"].dropna().unique())
        for source in LOOKUPS:
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
