"""Empty partitions: a query that matches nothing still flows through every asset.

Each stage turns zero input rows into zero output rows with the columns and types a filled
table has (so Parquet files, later steps and readers see one schema), and says so in its
materialization metadata instead of failing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

#: Why a stage has nothing, when the reason is that no source returned a record.
NO_RECORDS = "no source returned a record for this query"


def typed_empty(dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """Zero rows, with these columns in this order and of these types."""
    return pd.DataFrame({column: pd.Series(dtype=dtype) for column, dtype in dtypes.items()})


def typed_when_empty(frame: pd.DataFrame, dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """``frame`` as it is when it has rows; with no rows, ``dtypes`` for the columns it names.

    pandas infers a column's type from its values, so a table built from no rows has only
    ``object`` columns; a filled table keeps the types its values gave it.
    """
    if len(frame):
        return frame
    typed = frame.copy()
    for column, dtype in dtypes.items():
        typed[column] = pd.Series(dtype=dtype) if column not in typed.columns else typed[column].astype(dtype)
    return typed


def empty_note(rows: int, reason: str = NO_RECORDS) -> dict[str, Any]:
    """Metadata marking an asset partition that holds nothing, and why; none when it holds rows."""
    if rows:
        return {}
    return {"empty_partition": True, "empty_reason": reason}


def nothing_to_check(rows: int, reason: str = NO_RECORDS) -> str | None:
    """An asset check's description when it passes only because there is nothing to check."""
    return None if rows else f"Nothing to check: {reason}."
