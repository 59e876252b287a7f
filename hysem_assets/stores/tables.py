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


def file_problem(path: Path, recorded_rows: int | None = None, recorded_columns: list[str] | None = None) -> str | None:
    """What is wrong with the asset file at ``path`` (missing, not Parquet, truncated, not the rows or
    the columns its materialization recorded), or None; reads the footer only."""
    if not path.is_file():
        return "its file is missing"
    try:
        metadata = pq.read_metadata(path)
    except (pa.ArrowException, OSError) as exc:
        return f"its file cannot be read ({_first_line(exc)})"
    if recorded_rows is not None and metadata.num_rows != recorded_rows:
        return f"its file holds {metadata.num_rows:,} rows where its materialization recorded {recorded_rows:,}"
    if recorded_columns is not None:
        names = metadata.schema.to_arrow_schema().names
        missing = [name for name in recorded_columns if name not in names]
        extra = [name for name in names if name not in recorded_columns]
        if missing or extra:
            return (
                "its file's columns are not those its materialization recorded ("
                + "; ".join(part for part in (_listed("missing", missing), _listed("not recorded", extra)) if part)
                + ")"
            )
    return None


def file_columns(path: Path) -> list[tuple[str, str]]:
    """The stored file's columns and their Arrow types, read from its footer."""
    return [(field.name, str(field.type)) for field in pq.read_schema(path)]


def _listed(what: str, names: list[str]) -> str:
    return f"{what}: {', '.join(names[:5])}{' …' if len(names) > 5 else ''}" if names else ""


def read_table(path: Path) -> pd.DataFrame:
    """The asset file at ``path``; :class:`DamagedAssetError` when it cannot be read.

    Arrow reads the path itself: ``pd.read_parquet`` hands it an open Python file, and Arrow's
    threads may still be closing that file when a short process such as ``hysem status`` exits,
    which now and then aborts the process (apache/arrow#34314, #50482)."""
    try:
        return pq.read_table(str(path)).to_pandas()
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
