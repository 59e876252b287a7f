"""The helpers that let an empty partition keep its table's shape and say why it is empty."""

from __future__ import annotations

import pandas as pd

from hysem_assets.core.empty import NO_RECORDS, empty_note, nothing_to_check, typed_empty, typed_when_empty

DTYPES = {"cluster_id": object, "pages": "int64", "seconds": "float64", "year": "Int64", "saved": "bool"}


def test_typed_empty_has_the_columns_in_order_and_their_types(tmp_path):
    frame = typed_empty(DTYPES)
    assert list(frame.columns) == list(DTYPES) and len(frame) == 0
    frame.to_parquet(tmp_path / "empty.parquet")
    assert pd.read_parquet(tmp_path / "empty.parquet").dtypes.to_dict() == frame.dtypes.to_dict()


def test_typed_when_empty_types_a_frame_built_from_no_rows_and_leaves_filled_ones_alone():
    built = pd.DataFrame([], columns=["cluster_id", "pages", "extra"])
    typed = typed_when_empty(built, DTYPES)
    assert list(typed.columns) == ["cluster_id", "pages", "extra", "seconds", "year", "saved"]
    assert typed.dtypes.to_dict() == {**typed_empty(DTYPES).dtypes.to_dict(), "extra": object}
    filled = pd.DataFrame({"cluster_id": ["a"], "pages": [3.0]})
    assert typed_when_empty(filled, DTYPES) is filled


def test_an_empty_partition_says_so_and_a_filled_one_says_nothing():
    assert empty_note(0) == {"empty_partition": True, "empty_reason": NO_RECORDS}
    assert empty_note(0, "no PDF saved")["empty_reason"] == "no PDF saved"
    assert empty_note(3) == {}
    assert nothing_to_check(0) == f"Nothing to check: {NO_RECORDS}."
    assert nothing_to_check(2) is None
