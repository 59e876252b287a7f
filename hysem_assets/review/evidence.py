"""The evidence table: one row per included study with its citation and extracted fields.

Its columns follow the query's extraction fields (whatever the review protocol
declares), so the table serves any subject. Values stored as JSON (lists, records)
become readable text, and each value's evidence sentences (from the ``evidence`` column
extraction writes) stand beside it as ``<field>_evidence``, so a reviewer checks a value
against its source without opening the paper.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl import load_workbook
from openpyxl.styles import Alignment, Font

from hysem_assets.core.empty import typed_when_empty
from hysem_assets.core.spreadsheets import strings_not_formulas
from hysem_assets.dedup.normalize import is_missing
from hysem_assets.settings.fields import RESERVED_NAMES

#: Columns of ``extracted_fields`` that describe the extraction run, not the study.
_RUN_COLUMNS = RESERVED_NAMES | {"cluster_id", "text_source", "cache_hits", "protocol", "evidence"}
STUDY_COLUMNS = ("cluster_id", "citation", "year", "title", "doi", "topic", "retracted", "text_source")
#: Widest column of the spreadsheet, in characters; longer text wraps.
_MAX_WIDTH = 60


def readable(value: Any) -> str:
    """A field value as text: JSON lists joined with "; ", records as "key: value"."""
    if is_missing(value):
        return ""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, list):
        return "; ".join(filter(None, (readable(item) for item in value)))
    if isinstance(value, dict):
        return ", ".join(f"{key}: {readable(item)}" for key, item in value.items() if not is_missing(item))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def field_columns(extracted: pd.DataFrame) -> list[str]:
    """The extraction fields of the table, in their order."""
    return [column for column in extracted.columns if column not in _RUN_COLUMNS]


def evidence_sentences(evidence: Any) -> dict[str, str]:
    """field -> its distinct evidence sentences joined, from the JSON ``evidence`` of one row."""
    if is_missing(evidence) or not evidence:
        return {}
    found = json.loads(evidence) if isinstance(evidence, str) else evidence
    return {
        name: " | ".join(dict.fromkeys(item["sentence"] for item in items if item.get("sentence")))
        for name, items in found.items()
    }


def evidence_table(
    included: list[str],
    corpus: pd.DataFrame,
    library: pd.DataFrame,
    extracted: pd.DataFrame,
    topics: pd.DataFrame,
) -> pd.DataFrame:
    """One row per included work (in ``included`` order): study columns, then every field."""
    works = corpus.set_index("cluster_id")
    citations = library.set_index("cluster_id")["full_citation"]
    topic_labels = topics.set_index("cluster_id")["dominant_label"] if len(topics) else pd.Series(dtype=object)
    fields = extracted.set_index("cluster_id")
    columns = field_columns(extracted)
    with_evidence = "evidence" in fields.columns
    if with_evidence:
        columns = [name for column in columns for name in (column, f"{column}_evidence")]
    rows = []
    for cluster_id in included:
        work = works.loc[cluster_id]
        row = {
            "cluster_id": cluster_id,
            "citation": citations.get(cluster_id) or "",
            "year": None if is_missing(work.get("year")) else int(work["year"]),
            "title": work.get("title") or "",
            "doi": work.get("doi") or "",
            "topic": "" if is_missing(topic_labels.get(cluster_id)) else topic_labels.get(cluster_id),
            "retracted": bool(work.get("is_retracted")) if not is_missing(work.get("is_retracted")) else False,
            "text_source": fields["text_source"].get(cluster_id, "") if "text_source" in fields else "",
        }
        sentences = evidence_sentences(fields["evidence"].get(cluster_id)) if with_evidence else {}
        for column in columns:
            if column.endswith("_evidence") and column not in fields.columns:
                row[column] = sentences.get(column.removesuffix("_evidence"), "")
            else:
                row[column] = readable(fields[column].get(cluster_id)) if cluster_id in fields.index else ""
        rows.append(row)
    table = pd.DataFrame(rows, columns=[*STUDY_COLUMNS, *columns])
    table["year"] = table["year"].astype("Int64")
    return typed_when_empty(table, {"retracted": "bool"})


def write_xlsx(table: pd.DataFrame, path: Path, sheet: str = "Evidence") -> None:
    """The table as a spreadsheet a reviewer can read: bold frozen header, filters,
    widths fitted to the content (at most ``_MAX_WIDTH``) and wrapped text; no cell is a formula."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_excel(path, sheet_name=sheet, index=False, engine="openpyxl")
    workbook = load_workbook(path)
    strings_not_formulas(workbook)
    worksheet = workbook[sheet]
    worksheet.freeze_panes = "A2"
    worksheet.auto_filter.ref = worksheet.dimensions
    for cell in worksheet[1]:
        cell.font = Font(bold=True)
    for index, column in enumerate(table.columns, start=1):
        longest = max([len(str(column)), *(len(str(v)) for v in table[column].tolist())])
        letter = worksheet.cell(row=1, column=index).column_letter
        worksheet.column_dimensions[letter].width = min(longest + 2, _MAX_WIDTH)
        for (cell,) in worksheet.iter_rows(min_row=2, min_col=index, max_col=index):
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    workbook.save(path)
