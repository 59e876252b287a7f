"""CSV exports: Scopus, Covidence, and any table with a title column (BibTeX-like, Zotero, Rayyan).

Each flavour is recognised by the columns only it has (Scopus ``EID``, Covidence
``Covidence #``); its columns are matched by name, case-insensitively, so a column
order or an extra column from another export version changes nothing.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from hysem_assets.sources.scopus_json import strip_copyright

#: Longest field read: abstracts and consortium author lists run long; the csv default (128 kB) is no format's limit.
MAX_FIELD_BYTES = 16 * 2**20

#: Field -> header names in preference order (lower case), per flavour.
_GENERIC: dict[str, tuple[str, ...]] = {
    "id": ("id", "key", "record_id", "record id", "citation_key", "citekey"),
    "title": ("title", "primary_title", "primary title", "article_title", "article title", "document title", "ti"),
    "authors": ("author", "authors", "au"),
    "year": ("year", "publication year", "publication_year", "published year", "py", "date"),
    "journal": ("journal", "journal_name", "journal name", "publication title", "source title", "container_title",
                "secondary_title", "secondary title", "booktitle", "t2", "jo"),
    "volume": ("volume", "vl"),
    "issue": ("issue", "number", "is"),
    "pages": ("pages", "page", "pagination"),
    "doi": ("doi", "do"),
    "pmid": ("pmid", "pubmed id", "pubmed_id"),
    "pmcid": ("pmcid", "pmc id", "pmc_id", "pubmed central id"),
    "abstract": ("abstract", "abstract note", "ab"),
    "language": ("language", "la"),
    "item_type": ("entrytype", "item type", "item_type", "type_of_reference", "document type", "type"),
}  # fmt: skip
_SCOPUS = {
    **_GENERIC,
    "id": ("eid",),
    "authors": ("author full names", "authors"),
    "journal": ("source title",),
    "start_page": ("page start",),
    "end_page": ("page end",),
    "pages": ("art. no.",),
    "language": ("language of original document",),
    "item_type": ("document type",),
}
_COVIDENCE = {**_GENERIC, "id": ("covidence #",), "year": ("published year", "year"), "pmid": ()}
_FLAVOURS = (("CSV (Scopus)", "eid", _SCOPUS), ("CSV (Covidence)", "covidence #", _COVIDENCE), ("CSV", "", _GENERIC))
#: Scopus's "Author full names": "Smith, John (57190000001)".
_SCOPUS_AUTHOR_ID = re.compile(r"\s*\(\d+\)\s*$")
_NO_AUTHOR = "[no author name available]"


def _delimiter(line: str) -> str:
    return max(",\t;", key=line.count)


def _header(line: str) -> list[str]:
    return [column.strip() for column in next(csv.reader([line], delimiter=_delimiter(line)), [])]


def is_header(line: str) -> bool:
    """A line that can head a table: two or more named columns."""
    return sum(bool(column) for column in _header(line)) >= 2


def has_title_column(line: str) -> bool:
    return is_header(line) and bool(set(map(str.lower, _header(line))) & set(_GENERIC["title"]))


def parse(text: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Entries of a CSV export (comma, tab or semicolon separated); a table without titles is refused."""
    start = len(text) - len(text.lstrip("\n"))
    text = text[start:]
    delimiter = _delimiter(text.split("\n", 1)[0])
    csv.field_size_limit(max(csv.field_size_limit(), MAX_FIELD_BYTES))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [column.strip() for column in next(reader, [])]
    lower = [column.lower() for column in header]
    label, columns = next((label, columns) for label, marker, columns in _FLAVOURS if not marker or marker in lower)
    found = {
        field: next((lower.index(name) for name in names if name in lower), None) for field, names in columns.items()
    }
    if found["title"] is None:
        raise ValueError(
            f"the table has no title column ({', '.join(columns['title'])}); its columns are "
            f"{', '.join(map(repr, header))}. Export the records with their titles."
        )
    entries, warnings = [], []
    last: tuple[int, list[str]] = (0, [])
    while True:
        line = reader.line_num + 1 + start
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise ValueError(f"line {line} cannot be read as CSV ({exc}). Check its quotes.") from None
        if row is None:
            break
        last = (line, row)
        if not any(value.strip() for value in row):
            continue
        number = len(entries) + 1
        if len(row) > len(header) and any(value.strip() for value in row[len(header) :]):
            warnings.append(
                f"row {number} (line {line}) has {len(row)} fields but the header has {len(header)}; "
                "the extra fields were dropped. Check its quotes and separators."
            )
        entries.append(_entry(label, number, line, dict(zip(header, row)), row, found))
    if entries and _open_quote(last[1], len(header), delimiter):
        raise ValueError(
            f"line {last[0]} opens a quote that is never closed, so every line after it would be read as one "
            "field. Close or remove that quote."
        )
    return label, entries, warnings


def _open_quote(fields: list[str], columns: int, separator: str) -> bool:
    """The last row ran to the end of the file inside quotes: it lacks fields and holds further rows' lines."""
    return len(fields) < columns and any(separator in line for field in fields for line in field.splitlines()[1:])


def _entry(
    label: str, number: int, line: int, raw: dict[str, str], row: list[str], found: dict[str, int | None]
) -> dict[str, Any]:
    def value(field: str) -> str | None:
        index = found.get(field)
        text = row[index].strip() if index is not None and index < len(row) else ""
        return text or None

    return {
        "unit": "row",
        "number": number,
        "line": line,
        "id": value("id"),
        "raw": raw,
        "fields": {
            "title": value("title"),
            "authors": _authors(value("authors"), scopus=label == "CSV (Scopus)"),
            "year": value("year"),
            "journal": value("journal"),
            "volume": value("volume"),
            "issue": value("issue"),
            "start_page": value("start_page"),
            "end_page": value("end_page"),
            "pages": None if value("start_page") else value("pages"),
            "doi": [value("doi")],
            "pmid": value("pmid"),
            "pmcid": value("pmcid"),
            # Scopus ends abstracts with the publisher's notice; its API source drops it too.
            "abstract": strip_copyright(value("abstract")) if label == "CSV (Scopus)" else value("abstract"),
            "language": value("language"),
            "item_type": [value("item_type")],
            "publication_types": value("item_type"),
        },
    }


def _authors(text: str | None, scopus: bool) -> list[str]:
    """Names of one cell: ``;``-separated, BibTeX ``and``-separated, or Scopus's old ``Smith J., Doe A.``."""
    if not text or text.lower() == _NO_AUTHOR:
        return []
    if ";" in text:
        names = text.split(";")
    elif " and " in text:
        names = text.split(" and ")
    elif scopus:
        names = text.split(", ")
    else:
        names = [text]
    return [_SCOPUS_AUTHOR_ID.sub("", name).strip() for name in names if name.strip()]
