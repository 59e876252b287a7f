"""Stored asset tables: written atomically, read back, and a damaged one told from a good one.

Asset files are written whole or not at all (:func:`write_parquet`), but a disk, a user or
another program can still damage one afterwards. Reading goes through :func:`read_table`,
whose error names the file and the command that repairs it; :func:`file_problem` says what
is wrong with a file without reading its rows (``hysem status`` and ``hysem doctor`` check
every file so). No Dagster here: ``hysem ask`` reads tables in a light process.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

#: What repairs a damaged asset file: doctor re-materializes it for its partition.
REPAIR = "hysem doctor --fix"


class DamagedAssetError(RuntimeError):
    """A stored asset file that cannot be read; the message names the file and :data:`REPAIR`."""


def file_problem(path: Path, recorded_rows: int | None = None) -> str | None:
    """What is wrong with the asset file at ``path`` (missing, not Parquet, truncated, not the rows its
    materialization recorded), or None; reads the footer only."""
    if not path.is_file():
        return "its file is missing"
    try:
        rows = pq.read_metadata(path).num_rows
    except (pa.ArrowException, OSError) as exc:
        return f"its file cannot be read ({_first_line(exc)})"
    if recorded_rows is not None and rows != recorded_rows:
        return f"its file holds {rows:,} rows where its materialization recorded {recorded_rows:,}"
    return None


def read_table(path: Path) -> pd.DataFrame:
    """The asset file at ``path``; :class:`DamagedAssetError` when it cannot be read."""
    try:
        return pd.read_parquet(path, engine="pyarrow")
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError) as exc:
        raise DamagedAssetError(f"{path} is damaged ({_first_line(exc)}); `{REPAIR}` materializes it again") from None


def _first_line(error: BaseException) -> str:
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return line.removeprefix("Could not open Parquet input source '<Buffer>': ")[:200]


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
