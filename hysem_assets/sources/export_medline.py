"""PubMed's MEDLINE text format (``.nbib``, "PubMed format" ``.txt``), read line by line.

rispy 0.10 has no MEDLINE reader, and the format is small: a tag padded to four
characters, ``- ``, the value, continuation lines indented by six spaces; a record
starts at its ``PMID-`` line. There is no end tag, so a download cut off inside the
last record is recognised by that record lacking the ``SO`` (source) line that
PubMed writes last.
"""

from __future__ import annotations

import re
from typing import Any

from hysem_assets.sources.pubmed_xml import publication_item_type

FORMAT = "MEDLINE (NBIB)"
_TAG = re.compile(r"([A-Z][A-Z0-9]{1,3}) *- ?(.*)")
_BRACKETED = re.compile(r"^\[(?P<inner>.*)\]\.?$", re.DOTALL)
#: The tag PubMed writes last in every record.
_LAST_TAG = "SO"


def parse(text: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Entries of a MEDLINE file, and warnings for text outside records and a cut-off last record."""
    records, outside = _cut(text.split("\n"))
    warnings = []
    if outside:
        shown = ", ".join(map(str, outside[:10])) + (f" and {len(outside) - 10} more" if len(outside) > 10 else "")
        warnings.append(f"line{'s' if len(outside) > 1 else ''} {shown} lie outside any record and were skipped.")
    entries = [_entry(number, line, tags) for number, (line, tags) in enumerate(records, 1)]
    if entries and _cut_off(records):
        last = entries[-1]
        where = f"record {last['number']} (line {last['line']}{_id_note(last)})"
        if last["fields"]["title"]:
            warnings.append(
                f"{where} has no '{_LAST_TAG}  - ' line: the file seems cut off inside it; it was kept with "
                "the fields read. Download the export again to complete it."
            )
        else:
            warnings.append(
                f"{where}: the file is cut off inside it before its title, so it is unreadable and was "
                "skipped. Download the export again."
            )
            entries.pop()
    return FORMAT, entries, warnings


def _cut(lines: list[str]) -> tuple[list[tuple[int, list[tuple[str, str]]]], list[int]]:
    """``(first line, [(tag, value), ...])`` per record, continuation lines joined to their value."""
    records: list[tuple[int, list[tuple[str, str]]]] = []
    outside: list[int] = []
    current: list[tuple[str, str]] | None = None
    after_blank = True
    for number, line in enumerate(lines, 1):
        if not line.strip():
            after_blank = True
            continue
        match = None if line[:1].isspace() else _TAG.match(line)
        if match and (match.group(1) == "PMID" or (after_blank and current is not None)):
            current = [(match.group(1), match.group(2).strip())]
            records.append((number, current))
        elif current is None:
            outside.append(number)
        elif match:
            current.append((match.group(1), match.group(2).strip()))
        else:
            tag, value = current[-1]
            current[-1] = (tag, f"{value} {line.strip()}" if value else line.strip())
        after_blank = False
    return records, outside


def _cut_off(records: list[tuple[int, list[tuple[str, str]]]]) -> bool:
    """The last record lacks the closing tag that the others (or PubMed, for a lone record) have."""
    *others, (_, last) = records
    closes = all(any(tag == _LAST_TAG for tag, _ in tags) for _, tags in others) if others else True
    return closes and not any(tag == _LAST_TAG for tag, _ in last)


def _id_note(entry: dict[str, Any]) -> str:
    return f", id {entry['id']!r}" if entry.get("id") else ""


def _entry(number: int, line: int, tags: list[tuple[str, str]]) -> dict[str, Any]:
    values: dict[str, list[str]] = {}
    for tag, value in tags:
        values.setdefault(tag, []).append(value)

    def first(*names: str) -> str | None:
        return next((value for name in names for value in values.get(name, []) if value), None)

    full_names = [tuple(part.strip() for part in name.partition(",")[::2]) for name in values.get("FAU", [])]
    authors: list[Any] = full_names or values.get("AU", [])
    authors += [(name, None) for name in values.get("CN", [])]
    publication_types = values.get("PT", [])
    return {
        "unit": "record",
        "number": number,
        "line": line,
        "id": first("PMID"),
        "raw": {tag: found[0] if len(found) == 1 else found for tag, found in values.items()},
        "fields": {
            "title": _title(first("TI")) or first("BTI", "TT"),
            "authors": authors,
            "year": first("DP", "DEP"),
            "journal": first("JT", "TA", "BTI"),
            "volume": first("VI"),
            "issue": first("IP"),
            "pages": first("PG"),
            "doi": [value for value in values.get("LID", []) + values.get("AID", []) if value.endswith("[doi]")],
            "pmid": first("PMID"),
            "pmcid": first("PMC"),
            "abstract": first("AB"),
            "language": first("LA"),
            # The PubMed API's own rule, so that an NBIB record and the same record fetched agree.
            "item_type": [publication_item_type(publication_types)] if publication_types else [],
            "publication_types": "; ".join(publication_types) or None,
        },
    }


def _title(text: str | None) -> str | None:
    """NLM brackets translated titles ("[Title in English]."); "[Not Available]." is no title."""
    match = _BRACKETED.match(text or "")
    if match:
        text = match.group("inner").strip()
    return None if not text or text.rstrip(".").lower() == "not available" else text
