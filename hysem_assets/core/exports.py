"""An asset's rows as text people open: CSV a spreadsheet cannot evaluate, or JSON with its lists as lists."""

from __future__ import annotations

import contextlib
import json

import pandas as pd

from hysem_assets.core.spreadsheets import csv_text


def _decoded(value: object, openers: tuple[str, ...] = ("[", "{")) -> object:
    """A list or record an asset keeps as JSON text (starting with one of ``openers``) as that list or record
    again; any other value as it is."""
    if isinstance(value, str) and value[:1] in openers:
        with contextlib.suppress(ValueError):
            return json.loads(value)
    return value


def json_records(frame: pd.DataFrame) -> str:
    """Rows as a JSON array; lists and records an asset keeps as JSON text become JSON again."""
    rows = json.loads(frame.to_json(orient="records", force_ascii=False))
    return json.dumps(
        [{key: _decoded(value) for key, value in row.items()} for row in rows], ensure_ascii=False, indent=2
    )


def csv_records(frame: pd.DataFrame) -> str:
    """Rows as CSV; lists, also those an asset keeps as JSON text, as their items (records stay JSON text)."""
    lists = frame.copy()
    for column in lists.columns:
        if lists[column].dtype == object:
            lists[column] = lists[column].map(lambda value: _decoded(value, ("[",)))
    return csv_text(lists)


def frame_text(frame: pd.DataFrame, fmt: str) -> str:
    """``frame`` as ``csv`` (cells that start a formula made inert, lists as their items) or ``json`` text."""
    return csv_records(frame) if fmt == "csv" else json_records(frame)
