"""Whether each stored asset of a partition is what its last materialization recorded.

Dagster keeps the record of a materialization (when, which run, how many rows, which
columns); the Parquet file is kept apart, with its writer's own record beside it, and can be
damaged or replaced later. Each file is checked against both records by
:func:`~hysem_assets.stores.tables.file_problem`, the same check every reader of a table
makes. ``hysem status`` shows a damaged file as such instead of as materialized, and ``hysem
doctor`` reports it with the asset and partition and re-materializes it with ``--fix``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from dagster import AssetKey, AssetRecordsFilter, DagsterInstance

from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.tables import file_problem


@dataclass(frozen=True)
class StoredAsset:
    """One asset of one query: its last materialization (if any) and what is wrong with its file (partitioned
    assets only: an asset of all queries, such as the preference dataset, is listed but not checked)."""

    asset: str
    partition: str
    materialized: bool
    rows: int | None = None
    run_id: str | None = None
    at: dt.datetime | None = None
    problem: str | None = None

    @property
    def path(self) -> Path:
        return asset_file(self.asset, self.partition)


def stored_assets(
    instance: DagsterInstance, keys: list[AssetKey], partition: str, partitioned: set[AssetKey]
) -> list[StoredAsset]:
    """Every asset of ``keys`` for ``partition``, in their order, each file of a ``partitioned`` one checked
    against its record."""
    found = []
    for key in keys:
        own = key in partitioned
        records_filter = AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if own else None)
        records = instance.fetch_materializations(records_filter, limit=1).records
        event = records[0].event_log_entry if records else None
        materialization = event.asset_materialization if event else None
        name = key.to_user_string()
        if event is None or materialization is None:
            found.append(StoredAsset(name, partition, materialized=False))
            continue
        recorded = materialization.metadata.get("dagster/row_count")
        rows = int(recorded.value) if recorded is not None else None
        schema = materialization.metadata.get("dagster/column_schema")
        columns = [column.name for column in schema.value.columns] if schema is not None else None
        found.append(
            StoredAsset(
                name,
                partition,
                materialized=True,
                rows=rows,
                run_id=event.run_id,
                at=dt.datetime.fromtimestamp(event.timestamp, dt.UTC),
                problem=file_problem(asset_file(name, partition), rows, columns) if own else None,
            )
        )
    return found
