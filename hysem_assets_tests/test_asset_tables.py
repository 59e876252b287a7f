"""An asset file told from what its materialization recorded (in Dagster and beside the file): rows, columns,
bytes, a truncated footer."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hysem_assets.settings.environment import asset_file
from hysem_assets.stores.tables import (
    DamagedAssetError,
    file_columns,
    file_problem,
    read_table,
    record_path,
    write_parquet,
)


def stored(tmp_path: Path) -> Path:
    path = tmp_path / "deduped_corpus" / "q.parquet"
    write_parquet(pd.DataFrame({"cluster_id": ["a", "b"], "year": [2020, 2021]}), path)
    return path


def test_a_file_as_recorded_has_no_problem_and_its_columns_come_from_its_footer(tmp_path: Path):
    path = stored(tmp_path)
    assert file_columns(path) == [("cluster_id", "string"), ("year", "int64")]
    assert file_problem(path, 2, ["cluster_id", "year"]) is None


def test_rows_columns_and_bytes_that_differ_from_the_record_are_named(tmp_path: Path):
    path = stored(tmp_path)
    assert file_problem(path, 3) == "its file holds 2 rows where its materialization recorded 3"
    assert file_problem(path, 2, ["cluster_id", "title"]) == (
        "its file's columns are not those its materialization recorded (missing: title; not recorded: year)"
    )
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)
    assert file_problem(path, 2, ["cluster_id", "year"]).startswith("its file cannot be read (")
    assert file_problem(tmp_path / "nothing.parquet") == "its file is missing"


def test_a_table_read_back_is_checked_against_the_record_written_beside_it():
    path = asset_file("extracted_fields", "q")
    write_parquet(pd.DataFrame({"cluster_id": ["a", "b", "c"], "year": [2020, 2021, 2022]}), path)
    assert json.loads(record_path(path).read_text(encoding="utf-8"))["rows"] == 3
    assert len(read_table(path)) == 3 and file_problem(path) is None

    pd.DataFrame({"cluster_id": ["a"], "year": [2020]}).to_parquet(path, index=False)  # valid Parquet, fewer rows
    problem = "its file holds 1 rows where its materialization recorded 3"
    assert file_problem(path) == problem
    with pytest.raises(DamagedAssetError) as raised:
        read_table(path)
    assert str(raised.value) == (
        f"extracted_fields of 'q' is damaged: {problem} ({path}); `hysem doctor --fix` materializes it again"
    )

    pd.DataFrame({"cluster_id": ["a", "b", "c"]}).to_parquet(path, index=False)
    assert file_problem(path) == "its file's columns are not those its materialization recorded (missing: year)"
    pd.DataFrame({"cluster_id": ["x", "y", "z"], "year": [1, 2, 3]}).to_parquet(path, index=False, compression=None)
    assert file_problem(path).startswith("its file is not the one its materialization wrote (")

    record_path(path).write_text("{", encoding="utf-8")
    assert file_problem(path).startswith("its record q.parquet.json cannot be read (")
    record_path(path).unlink()  # written before records were kept: read as it is
    assert file_problem(path) is None and len(read_table(path)) == 3
