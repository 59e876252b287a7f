"""Records a reviewer already has, for ``hysem extract``: JSON Lines or CSV with ``id``, ``title``, ``abstract``,
an optional full ``text`` and optional ``publication_types`` ("; "-separated, or a list in JSON Lines).

A line that cannot be read (bad JSON, not an object, no id, an id seen before, a value that is
not text, text that is not UTF-8, a record longer than any article) is reported with its line
number and left out; the others go on. A CSV file that is not UTF-8 is refused whole, naming its
first such line: its rows cannot be told apart before they are decoded.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

COLUMNS = ("id", "title", "abstract", "text", "publication_types")
#: The most characters of text one record may hold: about a thousand pages, far above any article's full text,
#: and well below what would take the extraction's memory beyond a laptop's.
MAX_RECORD_CHARS = 2_000_000
_SAVE_AS_UTF8 = "save the file as UTF-8 (for example `iconv -f latin1 -t utf-8 IN > OUT`)"


@dataclass(frozen=True)
class Problem:
    """A line left out and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


def _not_utf8(error: UnicodeDecodeError) -> str:
    return f"not UTF-8 text (byte 0x{error.object[error.start]:02X} at byte {error.start + 1}); {_SAVE_AS_UTF8}"


def _decoded(path: Path) -> Iterator[tuple[int, str | ValueError]]:
    """(line number, the line as text, or why it is not UTF-8) of each line of ``path``."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                yield number, ValueError(_not_utf8(error))


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value or the error) of each non-blank line of a JSON Lines file."""
    for number, line in _decoded(path):
        if isinstance(line, ValueError):
            yield number, line
        elif line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                yield number, ValueError(f"not JSON ({error.msg} at column {error.colno})")


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, row) of a CSV file with a header; the line is where the row starts. A file that is not
    UTF-8, or with a field longer than any record may hold, stops here naming the line."""
    if problem := next(((n, line) for n, line in _decoded(path) if isinstance(line, ValueError)), None):
        raise ValueError(f"{path}, line {problem[0]}: {problem[1]}")
    csv.field_size_limit(max(csv.field_size_limit(), 8 * MAX_RECORD_CHARS))  # a longer record is told by _record
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or "id" not in reader.fieldnames:
            raise ValueError(f"{path}: a CSV of records needs a header with an `id` column (and title, abstract, text)")
        line = reader.line_num + 1
        try:
            for row in reader:
                yield line, row
                line = reader.line_num + 1
        except csv.Error as error:
            raise ValueError(
                f"{path}, line {line}: {error}; a record holds at most {MAX_RECORD_CHARS:,} characters"
            ) from None


def _record(value: Any) -> dict[str, str]:
    """The record's columns as text; ValueError naming what is wrong."""
    if not isinstance(value, Mapping):
        raise ValueError(f"a record must be a JSON object, not {type(value).__name__}")
    record = {}
    for column in COLUMNS:
        item = value.get(column)
        if item is None:
            item = ""
        if column == "id" and isinstance(item, int) and not isinstance(item, bool):
            item = str(item)
        if column == "publication_types" and isinstance(item, list) and all(isinstance(t, str) for t in item):
            item = "; ".join(item)
        if not isinstance(item, str):
            raise ValueError(f"`{column}` must be text, not {type(item).__name__}")
        record[column] = item
    if not record["id"].strip():
        raise ValueError("no `id`")
    if (length := sum(len(record[column]) for column in COLUMNS)) > MAX_RECORD_CHARS:
        raise ValueError(
            f"record {record['id']!r} holds {length:,} characters of text, over the {MAX_RECORD_CHARS:,} one record "
            "may hold; leave its full text out or split it"
        )
    return record


def read_records(path: Path) -> tuple[pd.DataFrame, list[Problem]]:
    """The records of ``path`` (``.csv``; anything else is read as JSON Lines) and the lines left out."""
    lines = _rows(path) if path.suffix.lower() == ".csv" else _lines(path)
    records: list[dict[str, str]] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for number, value in lines:
        try:
            if isinstance(value, Exception):
                raise value
            record = _record(value)
            if record["id"] in seen:
                raise ValueError(f"id {record['id']!r} already on line {seen[record['id']]}")
        except ValueError as error:
            problems.append(Problem(number, str(error)))
            continue
        seen[record["id"]] = number
        records.append(record)
    return pd.DataFrame(records, columns=list(COLUMNS)), problems
