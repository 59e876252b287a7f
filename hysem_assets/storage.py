"""Asset storage: one Parquet file per asset and partition under ``$HYSEM_HOME/assets``."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
from dagster import ConfigurableIOManagerFactory, InputContext, OutputContext, UPathIOManager
from upath import UPath

from hysem_assets.environment import asset_file, assets_dir

__all__ = ["ParquetIOManager", "ParquetStorage", "asset_file", "assets_dir", "write_parquet"]


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write atomically (temporary file, then rename) so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    try:
        frame.to_parquet(temporary, engine="pyarrow", index=False)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class ParquetIOManager(UPathIOManager):
    """Stores DataFrames as Parquet through pyarrow, one file per partition."""

    extension = ".parquet"

    def dump_to_path(self, context: OutputContext, obj: pd.DataFrame, path: UPath) -> None:
        write_parquet(obj, Path(path))

    def load_from_path(self, context: InputContext, path: UPath) -> pd.DataFrame:
        return pd.read_parquet(path, engine="pyarrow")


class ParquetStorage(ConfigurableIOManagerFactory):
    """Configurable front of :class:`ParquetIOManager`; defaults to ``$HYSEM_HOME/assets``."""

    base_dir: str = ""

    def create_io_manager(self, context) -> ParquetIOManager:
        return ParquetIOManager(base_path=UPath(self.base_dir or assets_dir()))
