"""Backfills through the webserver and daemon, as `hysem backfill` launches them."""

from __future__ import annotations

from hysem_assets.runs.backfill import backfill_status, launch_backfill, wait_for_backfill
from hysem_assets.settings.queries import append_query, load_queries
from hysem_assets_tests.ui.server import SAMPLE, DagsterServer, materialized_partitions

RAW = ["raw_metadata/pubmed", "raw_metadata/openalex", "raw_metadata/scopus"]


def test_backfill_materializes_two_new_queries(dagster_server: DagsterServer) -> None:
    queries = dagster_server.config_dir / "queries.yaml"
    sample = load_queries(queries)[SAMPLE]
    new = ["sample-copy-one", "sample-copy-two"]
    for slug in new:  # added one after the other; the bundled mirror answers the same text
        append_query(sample.model_copy(update={"slug": slug}), queries)

    backfill_id = launch_backfill(dagster_server.url, new, assets=RAW)
    assert sorted(backfill_status(dagster_server.url, backfill_id).partitions) == sorted(new)

    result = wait_for_backfill(dagster_server.url, backfill_id, timeout=300)
    assert result.succeeded, result
    assert {run.partition for run in result.runs} == set(new)
    for asset in RAW:
        assert materialized_partitions(dagster_server.url, asset, new) == set(new), asset
