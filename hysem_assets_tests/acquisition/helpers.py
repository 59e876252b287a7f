"""Run the raw_metadata assets the way Dagster does, against servers on loopback."""

from __future__ import annotations

from pathlib import Path

import yaml
from dagster import DagsterInstance, materialize

from hysem_assets.defs.acquisition import raw_metadata_assets
from hysem_assets.defs.partitions import queries_partitions
from hysem_assets.defs.resources import build_resources

SAMPLE = "air-pollution-cardio-ml"


def write_profile(
    path: Path,
    *,
    page_size: int = 200,
    max_retries: int = 2,
    read_timeout_s: float = 5.0,
    allow_partial_results: bool = False,
) -> Path:
    """A profile without the bundled mirror, small pages and fast retries."""
    profile = {
        "name": "test",
        "mirror": False,
        "allow_partial_results": allow_partial_results,
        "http": {
            "connect_timeout_s": 2,
            "read_timeout_s": read_timeout_s,
            "max_retries": max_retries,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
        },
        "sources": {
            s: {"requests_per_second": 200, "max_concurrency": 4, "page_size": page_size}
            for s in ("pubmed", "openalex", "scopus", "crossref", "unpaywall")
        },
    }
    path.write_text(yaml.safe_dump(profile), encoding="utf-8")
    return path


def run_raw_metadata(instance: DagsterInstance, partition: str = SAMPLE, raise_on_error: bool = False):
    instance.add_dynamic_partitions(queries_partitions.name, [partition])
    return materialize(
        raw_metadata_assets,
        instance=instance,
        resources=build_resources(),
        partition_key=partition,
        raise_on_error=raise_on_error,
    )


def materialization(result, source: str):
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key.path == ["raw_metadata", source]]
    return event.materialization


def metadata_value(result, source: str, key: str):
    return materialization(result, source).metadata[key].value


def check_result(result, source: str, check: str = "fetch_complete"):
    [evaluation] = [
        e.event_specific_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
        and e.event_specific_data.asset_key.path == ["raw_metadata", source]
        and e.event_specific_data.check_name == check
    ]
    return evaluation
