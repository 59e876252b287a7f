"""Tables written for spreadsheet programs: record values stay data, never become formulas.

Titles, abstracts and author names come from remote sources, and reviewers open hysem's
CSV and XLSX files in Excel or LibreOffice, which evaluate a cell that begins with ``=``,
``+``, ``-`` or ``@`` (also after a tab or carriage return they drop). As OWASP recommends
for CSV injection, such a text value is written with a leading apostrophe; XLSX cells are
typed as strings, so the value stays exactly as the source gave it. Numbers, and texts that
are plain numbers ("-0.5"), are left as they are. A text that already starts with apostrophes
before such a value gets one more, so :func:`restored` gives back exactly what was written
and a file hysem exported reads back as the values it came from.

Every CSV, TSV and XLSX file hysem writes goes through this module (a test holds the package
to it), so no writer can leave a value live, nor write a list as a programming language's repr
(list cells are their items joined with ``"; "``, see :mod:`hysem_assets.core.cells`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl import Workbook, load_workbook
from openpyxl.styles import Alignment, Font
from openpyxl.worksheet.worksheet import Worksheet

from hysem_assets.core.cells import text_cells

#: What a spreadsheet reads as the start of a formula, after any tabs, returns or spaces it drops.
_FORMULA = re.compile(r"^[\t\r\n ]*[=+\-@]|^[\t\r]")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d+(?:[.,]\d+)*|\.\d+)(?:[eE][+-]?\d+)?%?$")
#: Widest column of a spreadsheet, in characters; longer text wraps.
_MAX_WIDTH = 60


def _marked(text: str) -> bool:
    """Whether :func:`inert` prefixes ``text``: a formula, or apostrophes before one."""
    bare = text.lstrip("'")
    return bool(_FORMULA.match(bare)) and not _PLAIN_NUMBER.match(bare.strip())


def inert(value: Any) -> Any:
    """``value`` as a spreadsheet must store it: a text a spreadsheet would evaluate gets a leading apostrophe."""
    return "'" + value if isinstance(value, str) and _marked(value) else value


def restored(value: Any) -> Any:
    """The value :func:`inert` made ``value`` from: a file hysem wrote reads back as its values."""
    if isinstance(value, str) and value.startswith("'") and _marked(value[1:]):
        return value[1:]
    return value


def inert_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose list cells are text (:func:`~hysem_assets.core.cells.text_cells`) and whose
    text cells are :func:`inert` (numeric columns untouched)."""
    safe = text_cells(frame)
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


def separator(path: Path) -> str:
    """The field separator a file's suffix names: tab for ``.tsv``, else comma."""
    return "\t" if path.suffix.lower() == ".tsv" else ","


def write_xlsx(frame: pd.DataFrame, path: Path, sheet: str) -> None:
    """``frame`` as a one-sheet spreadsheet (see :func:`write_workbook`)."""
    write_workbook({sheet: frame}, path)


def write_workbook(sheets: Mapping[str, pd.DataFrame], path: Path) -> None:
    """One sheet per frame, in order, each readable by a reviewer: bold frozen header, filters, widths fitted
    to the content (at most ``_MAX_WIDTH``) and wrapped text; lists as their items; no cell is a formula."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sheets = {sheet: text_cells(frame) for sheet, frame in sheets.items()}
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for sheet, frame in sheets.items():
            frame.to_excel(writer, sheet_name=sheet, index=False)
    workbook = load_workbook(path)
    strings_not_formulas(workbook)
    for sheet, frame in sheets.items():
        _lay_out(workbook[sheet], frame)
    workbook.save(path)


def _lay_out(worksheet: Worksheet, frame: pd.DataFrame) -> None:
    worksheet.freeze_panes = "A2"
    worksheet.auto_filter.ref = worksheet.dimensions
    for cell in worksheet[1]:
        cell.font = Font(bold=True)
    for index, column in enumerate(frame.columns, start=1):
        longest = max([len(str(column)), *(len(str(v)) for v in frame[column].tolist())])
        letter = worksheet.cell(row=1, column=index).column_letter
        worksheet.column_dimensions[letter].width = min(longest + 2, _MAX_WIDTH)
        for (cell,) in worksheet.iter_rows(min_row=2, min_col=index, max_col=index):
            cell.alignment = Alignment(wrap_text=True, vertical="top")


def strings_not_formulas(workbook: Workbook) -> None:
    """Retype every formula cell of ``workbook`` as a string: an XLSX hysem writes holds no formula."""
    for worksheet in workbook.worksheets:
        for row in worksheet.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    cell.data_type = "s"
