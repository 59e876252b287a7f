"""Table cells as files people open show them: a list is its items, never a programming language's repr.

Parquet gives list columns back as numpy arrays, and pandas writes those to CSV as numpy's
text (``['Romano, Chiara' 'Brunner, Lukas']``), which no spreadsheet or reader can split.
Every CSV and XLSX hysem writes turns such cells into their items joined with ``"; "``
(``Romano, Chiara; Brunner, Lukas``), the separator reference managers and screening tools
read for authors and keywords; a record (a dict) becomes ``key: value`` pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

import numpy as np
import pandas as pd

#: What separates the items of a list written as one cell.
LIST_SEPARATOR = "; "
_LISTS = (list, tuple, np.ndarray, Set)


def cell_text(value: Any) -> Any:
    """``value`` as a CSV or XLSX cell: lists, tuples, sets and arrays as their items joined with ``"; "``
    (missing items left out), records as ``key: value`` pairs joined with ``", "``; any other value as it is."""
    if isinstance(value, Mapping):
        return ", ".join(f"{key}: {text_of(item)}" for key, item in value.items() if not _missing(item))
    if isinstance(value, _LISTS):
        items = sorted(value, key=str) if isinstance(value, Set) else value
        return LIST_SEPARATOR.join(text for text in (text_of(item) for item in items) if text)
    return value


def text_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose list and record cells are :func:`cell_text`; other cells unchanged."""
    flat = frame.copy()
    for column in flat.columns:
        if flat[column].dtype == object:
            flat[column] = flat[column].map(cell_text)
    return flat


def text_of(value: Any) -> str:
    """Any value as text (an item of a list, a cell read by people): missing as ``""``, lists and records as
    :func:`cell_text`, ``2.0`` as ``2``."""
    if _missing(value):
        return ""
    if isinstance(value, (Mapping, *_LISTS)):
        return cell_text(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _missing(value: Any) -> bool:
    return value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value)))
