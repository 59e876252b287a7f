"""Dagster types for acquisition tables, so the UI shows and checks their schema."""

import warnings

from dagster import BetaWarning
from dagster_pandas import PandasColumn, create_dagster_pandas_dataframe_type

from hysem_assets.core.records import CORE_COLUMNS

with warnings.catch_warnings():
    warnings.simplefilter("ignore", BetaWarning)
    RawMetadataFrame = create_dagster_pandas_dataframe_type(
        name="RawMetadataFrame",
        description="One row per source record: the normalized core columns plus the raw record.",
        columns=[
            PandasColumn.exists("source", non_nullable=True),
            PandasColumn.exists("source_id", non_nullable=True, unique=True),
            *(PandasColumn.exists(column) for column in CORE_COLUMNS if column not in ("source", "source_id")),
        ],
    )
    #: Imported exports hold several sources, two of which may give one record the same id (a PMID).
    ImportedMetadataFrame = create_dagster_pandas_dataframe_type(
        name="ImportedMetadataFrame",
        description="One row per imported record: the normalized core columns plus the record as the file held it.",
        columns=[
            PandasColumn.exists("source", non_nullable=True),
            PandasColumn.exists("source_id", non_nullable=True),
            *(PandasColumn.exists(column) for column in CORE_COLUMNS if column not in ("source", "source_id")),
        ],
    )
