"""Metadata in the Dagster UI: a few rows of a frame as Markdown, long cells shortened; and what an
asset's latest materialization recorded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance, MetadataValue


def _cell(value: Any, width: int) -> Any:
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
        value = ", ".join(map(str, list(value)))
    if isinstance(value, str) and len(value) > width:
        return value[: width - 1] + "…"
    return value


def table_preview(
    frame: pd.DataFrame, columns: Sequence[str] | None = None, rows: int = 10, width: int = 90, empty: str = "_no rows_"
) -> MetadataValue:
    """The first ``rows`` rows of ``columns`` as a Markdown table, cells cut at ``width`` characters."""
    shown = (frame[list(columns)] if columns else frame).head(rows)
    if shown.empty:
        return MetadataValue.md(empty)
    return MetadataValue.md(shown.apply(lambda column: column.map(lambda v: _cell(v, width))).to_markdown(index=False))


def latest_metadata(instance: DagsterInstance, key: AssetKey, partition: str) -> dict[str, Any] | None:
    """The plain values of the metadata of ``key``'s latest materialization of ``partition``; None before one."""
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=1
    ).records
    materialization = records[0].asset_materialization if records else None
    return None if materialization is None else {name: value.value for name, value in materialization.metadata.items()}
