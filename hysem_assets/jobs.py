"""Jobs over the asset graph."""

from dagster import AssetSelection, define_asset_job

#: Materializes every asset of one query partition; sensors and backfills request it.
query_job = define_asset_job(
    "query_job",
    selection=AssetSelection.all(),
    description="Materialize the whole graph for one query partition.",
)
