"""Web of Science exports: plain text (read with rispy's WokParser) and tab-delimited.

Both carry the same two-letter tags (``PT AU TI SO ... UT``); the tab-delimited rows
are turned into the same keys rispy gives the plain-text records, so one field
mapping serves both.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import rispy

from hysem_assets.sources.export_ris import cut_records, outside_warning, unended

PLAIN = "Web of Science plain text"
TABBED = "Web of Science tab-delimited"
_PARSER = rispy.WokParser()
_KEYS: dict[str, str] = rispy.parser.WOK_TAG_KEY_MAPPING
_LIST_TAGS = frozenset(rispy.parser.WOK_LIST_TYPE_TAGS) | {"BE", "WC", "SC"}
#: Document types that make a record a conference item even when it also is an "Article".
_CONFERENCE_TYPES = ("Meeting Abstract", "Proceedings Paper")
#: PT codes: journal, book, book in series, patent.
_PUBLICATION_TYPES = {"J": "journal-article", "B": "book", "S": "book", "P": "patent"}
_HEADER_TAGS = ("FN ", "VR ", "EF")


def parse_plain(text: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Entries of a WoS plain-text export, each from its ``PT`` line to its ``ER`` line."""
    cuts, outside = cut_records(
        text.split("\n"),
        starts=lambda line: line.startswith("PT "),
        ends=lambda line: line.rstrip() == "ER",
        skip=lambda line: line.startswith(_HEADER_TAGS),
    )
    warnings = [unended(number, line, lines, "'ER'") for number, line, lines, ended in cuts if not ended]
    warnings += outside_warning(outside, "'PT '")
    entries = []
    for number, line, lines, ended in cuts:
        parsed = _PARSER.parse_lines(iter(lines if ended else [*lines, "ER"]))
        entry = parsed[0] if parsed else {}
        entry.pop("end_of_record", None)
        entries.append(_entry("record", number, line, entry))
    return PLAIN, entries, warnings


def is_tabbed_header(line: str) -> bool:
    """A tab-separated header of WoS tags (``PT\\tAU\\t...\\tTI\\t...``)."""
    tags = {tag.strip() for tag in line.split("\t")}
    return "\t" in line and {"PT", "TI"} <= tags and bool(tags & {"AU", "UT", "SO"})


def parse_tabbed(text: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Entries of a WoS tab-delimited export; lists (``AU``, ``CR``...) are ``;``-separated there."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = [tag.strip() for tag in next(reader, [])]
    entries, warnings = [], []
    for row in reader:
        if not any(value.strip() for value in row):
            continue
        number = len(entries) + 1
        if len(row) > len(header) and any(value.strip() for value in row[len(header) :]):
            warnings.append(
                f"row {number} (line {reader.line_num}) has {len(row)} fields but the header has {len(header)}; "
                "the extra fields were dropped."
            )
        record: dict[str, Any] = {}
        for tag, value in zip(header, row):
            value = value.strip()
            if tag and value:
                record[_KEYS.get(tag, tag)] = (
                    [part.strip() for part in value.split(";") if part.strip()] if tag in _LIST_TAGS else value
                )
        entries.append(_entry("row", number, reader.line_num, record))
    return TABBED, entries, warnings


def _entry(unit: str, number: int, line: int, entry: dict[str, Any]) -> dict[str, Any]:
    def first(*keys: str) -> str | None:
        for key in keys:
            value = entry.get(key)
            value = next((item for item in value if item), None) if isinstance(value, list) else value
            if value and str(value).strip():
                return str(value)
        return None

    def names(key: str) -> list[str]:
        value = entry.get(key) or []
        return value if isinstance(value, list) else [value]

    document_types = [part.strip() for part in (first("document_type") or "").split(";") if part.strip()]
    conference_first = sorted(document_types, key=lambda kind: kind not in _CONFERENCE_TYPES)
    return {
        "unit": unit,
        "number": number,
        "line": line,
        "id": first("accession_number"),
        "raw": entry,
        "fields": {
            "title": first("document_title"),
            "authors": (names("author_full_name") or names("authors"))
            + [(name, None) for name in names("group_authors")],
            "year": first("publication_year", "early_access_year", "publication_date"),
            "journal": first("publication_name"),
            "volume": first("volume"),
            "issue": first("issue"),
            "start_page": first("beginning_page") or first("article_number"),
            "end_page": first("ending_page"),
            "doi": [first("doi"), first("book_doi")],
            "pmid": first("pubmed_id"),
            "abstract": first("abstract"),
            "language": first("language"),
            "item_type": [*conference_first, _PUBLICATION_TYPES.get(first("publication_type") or "")],
            "publication_types": "; ".join(document_types) or None,
        },
    }
