"""Asset storage: one Parquet file per asset and partition under ``$HYSEM_HOME/assets``.

Files are written and read through :mod:`hysem_assets.stores.tables`: atomic writes, each with a
record of its rows, columns and bytes beside it, checked on every load, so a downstream asset
never runs on a truncated or replaced file (its step fails naming the asset, the partition and
``hysem doctor --fix``). Each materialization also records the file's columns
(``dagster/column_schema``) beside its row count.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from dagster import (
    ConfigurableIOManagerFactory,
    InputContext,
    OutputContext,
    TableColumn,
    TableSchema,
    UPathIOManager,
)
from upath import UPath

from hysem_assets.settings.environment import assets_dir
from hysem_assets.stores.tables import file_columns, read_table, write_parquet


class ParquetIOManager(UPathIOManager):
    """Stores DataFrames as Parquet through pyarrow, one file per partition."""

    extension = ".parquet"

    def dump_to_path(self, context: OutputContext, obj: pd.DataFrame, path: UPath) -> None:
        write_parquet(obj, Path(path))
        # The columns as written, shown in the UI and checked against the file by `hysem doctor`.
        columns = [TableColumn(name, kind) for name, kind in file_columns(Path(path))]
        context.add_output_metadata({"dagster/column_schema": TableSchema(columns=columns)})

    def load_from_path(self, context: InputContext, path: UPath) -> pd.DataFrame:
        return read_table(Path(path))


class ParquetStorage(ConfigurableIOManagerFactory):
    """Configurable front of :class:`ParquetIOManager`; defaults to ``$HYSEM_HOME/assets``."""

    base_dir: str = ""

    def create_io_manager(self, context) -> ParquetIOManager:
        return ParquetIOManager(base_path=UPath(self.base_dir or assets_dir()))
