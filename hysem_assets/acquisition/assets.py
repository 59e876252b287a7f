"""``raw_metadata/<source>``: one row per record a source returned for the query."""

import time

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetRecordsFilter,
    AssetsDefinition,
    Failure,
    MetadataValue,
    Output,
    asset,
)

from hysem_assets.acquisition.report import fatal_error, outcome_metadata, partial_summary
from hysem_assets.acquisition.types import RawMetadataFrame
from hysem_assets.empty import empty_note
from hysem_assets.partitions import queries_partitions
from hysem_assets.progress import Progress
from hysem_assets.queries import METADATA_SOURCES, get_query
from hysem_assets.records import records_frame
from hysem_assets.resources import ScholarlyApis

DESCRIPTIONS = {
    "pubmed": "PubMed records (NCBI E-utilities esearch + efetch XML), normalized core columns plus the raw XML.",
    "openalex": "OpenAlex works (cursor-paged /works search), normalized core columns plus the raw JSON.",
    "scopus": "Scopus Search API entries (needs SCOPUS_API_KEY; skipped without one), normalized plus raw JSON.",
}
FETCH_COMPLETE = "fetch_complete"
FETCH_COMPLETE_DESCRIPTION = (
    "Every page or batch of the source arrived (after retries). A partial fetch blocks the assets "
    "downstream unless partial results are allowed."
)
ALLOW_PARTIAL_HINT = (
    "Re-materialize when the source recovers, or accept partial results with "
    "`hysem materialize --allow-partial` (profile: allow_partial_results: true)"
)


def raw_metadata_asset(source: str) -> AssetsDefinition:
    """One asset per source, built by the same shell so every source behaves alike."""
    key = AssetKey(["raw_metadata", source])

    @asset(
        name=source,
        key_prefix="raw_metadata",
        group_name="acquisition",
        partitions_def=queries_partitions,
        description=DESCRIPTIONS[source],
        kinds={"python", "parquet"},
        dagster_type=RawMetadataFrame,
        check_specs=[AssetCheckSpec(FETCH_COMPLETE, asset=key, description=FETCH_COMPLETE_DESCRIPTION, blocking=True)],
    )
    def _raw_metadata(context: AssetExecutionContext, scholarly_apis: ScholarlyApis):
        spec = get_query(context.partition_key)
        if source not in spec.sources:
            message = f"{source} is not among this query's sources {spec.sources}"
            context.log.info(message)
            frame = records_frame([])
            yield Output(
                frame, metadata={"dagster/row_count": 0, **empty_note(0, message), "skipped": message, "partial": False}
            )
            yield AssetCheckResult(check_name=FETCH_COMPLETE, passed=True, metadata={"skipped": message})
            return
        endpoint = scholarly_apis.endpoint(source, spec)
        context.log.info(f"Fetching {source} for {spec.slug!r} from {endpoint.display_url}")
        progress = Progress(context.log, f"raw_metadata/{source}")
        started = time.monotonic()
        try:
            outcome = scholarly_apis.fetch(source, spec, progress)
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
        frame = records_frame(outcome.records)
        metadata = outcome_metadata(outcome, frame, endpoint.display_url, time.monotonic() - started)
        metadata["query"] = MetadataValue.text(spec.text_for(source))
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


def _complete_rows(context: AssetExecutionContext, key: AssetKey) -> int | None:
    """Rows of this partition's latest materialization when it was complete, else None."""
    records = context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=key, asset_partitions=[context.partition_key]), limit=1
    ).records
    materialization = records[0].asset_materialization if records else None
    if materialization is None:
        return None
    metadata = materialization.metadata
    if "partial" in metadata and metadata["partial"].value:
        return None
    rows = metadata.get("dagster/row_count")
    return int(rows.value) if rows is not None else 0


raw_metadata_assets = [raw_metadata_asset(source) for source in METADATA_SOURCES]
