"""``raw_metadata/<source>``: one row per record a source returned for the query."""

import time

import pandas as pd
from dagster import AssetExecutionContext, AssetsDefinition, Failure, MetadataValue, Output, asset

from hysem_assets.acquisition.report import fatal_error, outcome_metadata
from hysem_assets.acquisition.types import RawMetadataFrame
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


def raw_metadata_asset(source: str) -> AssetsDefinition:
    """One asset per source, built by the same shell so every source behaves alike."""

    @asset(
        name=source,
        key_prefix="raw_metadata",
        group_name="acquisition",
        partitions_def=queries_partitions,
        description=DESCRIPTIONS[source],
        kinds={"python", "parquet"},
        dagster_type=RawMetadataFrame,
    )
    def _raw_metadata(context: AssetExecutionContext, scholarly_apis: ScholarlyApis) -> Output[pd.DataFrame]:
        spec = get_query(context.partition_key)
        if source not in spec.sources:
            message = f"{source} is not among this query's sources {spec.sources}"
            context.log.info(message)
            frame = records_frame([])
            return Output(frame, metadata={"dagster/row_count": 0, "skipped": message})
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
        error = fatal_error(outcome)
        if error:
            raise Failure(description=error, metadata={"failures": len(outcome.failures)})
        frame = records_frame(outcome.records)
        metadata = outcome_metadata(outcome, frame, endpoint.display_url, time.monotonic() - started)
        metadata["query"] = MetadataValue.text(spec.text_for(source))
        context.log.info(f"{source}: {len(frame):,} records, {len(outcome.failures)} failures")
        return Output(frame, metadata=metadata)

    return _raw_metadata


raw_metadata_assets = [raw_metadata_asset(source) for source in METADATA_SOURCES]
