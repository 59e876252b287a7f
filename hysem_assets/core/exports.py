"""An asset's rows as text people open: CSV a spreadsheet cannot evaluate, or JSON with its lists as lists."""

from __future__ import annotations

import contextlib
import json

import pandas as pd

from hysem_assets.core.spreadsheets import csv_text


def json_records(frame: pd.DataFrame) -> str:
    """Rows as a JSON array; lists and records an asset keeps as JSON text become JSON again."""

    def decoded(value: object) -> object:
        if isinstance(value, str) and value[:1] in ("[", "{"):
            with contextlib.suppress(ValueError):
                return json.loads(value)
        return value

    rows = json.loads(frame.to_json(orient="records", force_ascii=False))
    return json.dumps(
        [{key: decoded(value) for key, value in row.items()} for row in rows], ensure_ascii=False, indent=2
    )


def frame_text(frame: pd.DataFrame, fmt: str) -> str:
    """``frame`` as ``csv`` (cells that start a formula made inert) or ``json`` text."""
    return csv_text(frame) if fmt == "csv" else json_records(frame)
