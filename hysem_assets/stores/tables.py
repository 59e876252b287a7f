"""Stored asset tables: written atomically, read back, and a damaged one told from a good one.

Asset files are written whole or not at all (:func:`write_parquet`), but a disk, a user or
another program can still damage or replace one afterwards. The writer keeps a small record
beside each file (``<partition>.parquet.json``: rows, columns, bytes), so any reader can tell,
without Dagster, whether the file still has the rows, columns and size its materialization wrote. Reading goes through
:func:`read_table`, whose error names the asset, the partition and the command that repairs it;
:func:`file_problem` says what is wrong with a file without reading its rows (``hysem status``
and ``hysem doctor`` check every file so, against the same record). No Dagster here: ``hysem
ask`` reads tables in a light process. A file without a record (written before records were
kept) is read as it is.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from hysem_assets.core.atomic import write_json
from hysem_assets.settings.environment import asset_file, assets_dir

#: What repairs a damaged asset file: doctor re-materializes it for its partition.
REPAIR = "hysem doctor --fix"


class DamagedAssetError(RuntimeError):
    """A stored asset file that cannot be read, or is not what its materialization wrote; the message names
    the asset, the partition, the file and :data:`REPAIR`."""


@dataclass(frozen=True)
class Recorded:
    """What a materialization recorded of its file; None where it recorded nothing."""

    rows: int | None = None
    columns: list[str] | None = None
    bytes: int | None = None


def record_path(path: Path) -> Path:
    """Where the record of the table at ``path`` is kept: beside it, ``<name>.parquet.json``."""
    return path.with_name(path.name + ".json")


def _written_record(path: Path) -> Recorded | None:
    """The record its writer kept beside ``path``; None for a file written before records were kept.
    :class:`ValueError` when the record itself cannot be read."""
    try:
        data = json.loads(record_path(path).read_text(encoding="utf-8"))
        return Recorded(int(data["rows"]), [str(name) for name in data["columns"]], int(data["bytes"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"its record {record_path(path).name} cannot be read ({_first_line(exc)})") from None


def _table_problem(rows: int, columns: list[str], size: int, recorded: Recorded) -> str | None:
    """How a file of ``rows`` rows, ``columns`` and ``size`` bytes differs from what was ``recorded``, or None."""
    if recorded.rows is not None and rows != recorded.rows:
        return f"its file holds {rows:,} rows where its materialization recorded {recorded.rows:,}"
    if recorded.columns is not None and columns != recorded.columns:
        missing = [name for name in recorded.columns if name not in columns]
        extra = [name for name in columns if name not in recorded.columns]
        return (
            "its file's columns are not those its materialization recorded ("
            + (
                "; ".join(part for part in (_listed("missing", missing), _listed("not recorded", extra)) if part)
                or "reordered"
            )
            + ")"
        )
    if recorded.bytes is not None and size != recorded.bytes:
        return f"its file is not the one its materialization wrote ({size:,} bytes where it wrote {recorded.bytes:,})"
    return None


def _checked(path: Path, rows: int, columns: list[str], expected: Recorded | None) -> str | None:
    """The file against the record kept beside it, then against ``expected`` (Dagster's record)."""
    try:
        kept = _written_record(path)
    except ValueError as exc:
        return str(exc)
    size = path.stat().st_size
    for recorded in (kept, expected):
        if recorded is not None and (problem := _table_problem(rows, columns, size, recorded)):
            return problem
    return None


def file_problem(path: Path, recorded_rows: int | None = None, recorded_columns: list[str] | None = None) -> str | None:
    """What is wrong with the asset file at ``path`` (missing, not Parquet, truncated, not the rows, columns or
    bytes its writer kept beside it or its materialization recorded in Dagster), or None; reads the footer only."""
    if not path.is_file():
        return "its file is missing"
    try:
        metadata = pq.read_metadata(path)
    except (pa.ArrowException, OSError) as exc:
        return f"its file cannot be read ({_first_line(exc)})"
    columns = metadata.schema.to_arrow_schema().names
    return _checked(path, metadata.num_rows, columns, Recorded(recorded_rows, recorded_columns))


def file_columns(path: Path) -> list[tuple[str, str]]:
    """The stored file's columns and their Arrow types, read from its footer."""
    return [(field.name, str(field.type)) for field in pq.read_schema(path)]


def _listed(what: str, names: list[str]) -> str:
    return f"{what}: {', '.join(names[:5])}{' …' if len(names) > 5 else ''}" if names else ""


def _damaged(path: Path, problem: str) -> str:
    """One line naming the asset and partition of ``path`` (or the file, outside the assets folder), what is
    wrong and the repair."""
    try:
        parts = path.relative_to(assets_dir()).parts
        what = f"{'/'.join(parts[:-1])} of {path.stem!r}" if len(parts) > 1 else str(path)
    except ValueError:
        what = str(path)
    return f"{what} is damaged: {problem} ({path}); `{REPAIR}` materializes it again"


def read_table(path: Path) -> pd.DataFrame:
    """The asset file at ``path``, checked against the record its writer kept beside it;
    :class:`DamagedAssetError` when it cannot be read or is not what was written.

    Arrow reads the path itself: ``pd.read_parquet`` hands it an open Python file, and Arrow's
    threads may still be closing that file when a short process such as ``hysem status`` exits,
    which now and then aborts the process (apache/arrow#34314, #50482)."""
    for _ in range(2):  # a second look, in case a writer replaced file and record between our reads
        try:
            table = pq.read_table(str(path))
        except FileNotFoundError:
            raise
        except (pa.ArrowException, OSError) as exc:
            raise DamagedAssetError(_damaged(path, f"its file cannot be read ({_first_line(exc)})")) from None
        if not (problem := _checked(path, table.num_rows, table.schema.names, None)):
            return table.to_pandas()
    raise DamagedAssetError(_damaged(path, problem))


def stored_asset(asset: str, slug: str, then: str, refuse: type[Exception] = LookupError) -> pd.DataFrame:
    """Asset ``asset`` of query ``slug`` as a command reads it; ``refuse`` (the command's own error) in one line
    saying what to materialize first, and ``then`` what, when it has not been materialized."""
    path = asset_file(asset, slug)
    if not path.is_file():
        raise refuse(
            f"{asset} is not materialized for {slug!r}; run `hysem materialize --query {slug} --select {asset}` "
            f"first, then {then}"
        )
    return read_table(path)


def _first_line(error: BaseException) -> str:
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return line.removeprefix("Could not open Parquet input source '<Buffer>': ")[:200]


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Write atomically (temporary file, then rename) so readers never see half a file, and keep its record
    beside it. The old record goes first: a reader between the two renames finds no record and reads the
    new file as it is, never the new file against the old record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(handle)
    try:
        frame.to_parquet(temporary, engine="pyarrow", index=False)
        metadata = pq.read_metadata(temporary)
        record = {
            "rows": metadata.num_rows,
            "columns": metadata.schema.to_arrow_schema().names,
            "bytes": Path(temporary).stat().st_size,
        }
        record_path(path).unlink(missing_ok=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    write_json(record_path(path), record)
