"""An asset file told from what its materialization recorded: rows, columns, a truncated footer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hysem_assets.stores.tables import file_columns, file_problem, write_parquet


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
