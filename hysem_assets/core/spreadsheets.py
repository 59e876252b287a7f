"""Tables written for spreadsheet programs: record values stay data, never become formulas.

Titles, abstracts and author names come from remote sources, and reviewers open hysem's
CSV and XLSX files in Excel or LibreOffice, which evaluate a cell that begins with ``=``,
``+``, ``-`` or ``@`` (also after a tab or carriage return they drop). As OWASP recommends
for CSV injection, such a text value is written with a leading apostrophe; XLSX cells are
typed as strings, so the value stays exactly as the source gave it. Numbers, and texts that
are plain numbers ("-0.5"), are left as they are.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl import Workbook

#: What a spreadsheet reads as the start of a formula, after any tabs, returns or spaces it drops.
_FORMULA = re.compile(r"^[\t\r\n ]*[=+\-@]|^[\t\r]")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:[eE][+-]?\d+)?%?$")


def inert(value: Any) -> Any:
    """``value`` as a spreadsheet must store it: a text a spreadsheet would evaluate gets a leading apostrophe."""
    if isinstance(value, str) and _FORMULA.match(value) and not _PLAIN_NUMBER.match(value.strip()):
        return "'" + value
    return value


def inert_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells are :func:`inert` (numeric columns untouched)."""
    safe = frame.copy()
    for column in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[column]) and not pd.api.types.is_bool_dtype(safe[column]):
            safe[column] = safe[column].map(inert)
    return safe


def csv_text(frame: pd.DataFrame, sep: str = ",") -> str:
    """``frame`` as CSV (or TSV) text with inert cells and RFC 4180 line ends (CRLF), so a value holding a
    carriage return is quoted like one holding a newline and never splits its row."""
    return inert_frame(frame).to_csv(index=False, sep=sep, lineterminator="\r\n")


def write_csv(frame: pd.DataFrame, path: Path, sep: str = ",") -> None:
    """Write ``frame`` to ``path`` as CSV (or TSV) with inert cells."""
    path.write_text(csv_text(frame, sep), encoding="utf-8", newline="")


def strings_not_formulas(workbook: Workbook) -> None:
    """Retype every formula cell of ``workbook`` as a string: an XLSX hysem writes holds no formula."""
    for worksheet in workbook.worksheets:
        for row in worksheet.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    cell.data_type = "s"
