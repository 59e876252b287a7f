"""Deduplicate a bibliography file as it is: CSV, RIS or BibTeX in, the same rows out.

Exports from reference managers and databases are messy (repeated IDs, blank or
placeholder titles, "n/a" in the DOI column, a broken byte in one line), so reading
never fails on such input: it repairs what it can and says so in plain warnings
that name the record and what to do about it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bibtexparser
from bibtexparser.bparser import BibTexParser
from bibtexparser.customization import convert_to_unicode
import pandas as pd
import rispy

from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.explain import PairExplanation, explain_pair
from hysem_assets.dedup.normalize import is_missing, normalize_title, text_or_empty
from hysem_assets.identifiers import extract_doi

#: An entry opening such as ``@article{`` (not ``@comment``, ``@string`` or ``@preamble``).
_BIBTEX_ENTRY = re.compile(r"^\s*@(?!comment\b|string\b|preamble\b)\w+\s*[{(]", re.IGNORECASE | re.MULTILINE)

#: Standard column -> accepted header names (compared case-insensitively), in preference order.
ALIASES: dict[str, tuple[str, ...]] = {
    "record_id": ("record_id", "id", "key", "citation_key", "citekey"),
    "title": ("title", "primary_title", "article_title", "ti"),
    "author": ("author", "authors", "first_authors", "au"),
    "year": ("year", "publication_year", "py", "date"),
    "journal": ("journal", "journal_name", "container_title", "booktitle",
                "secondary_title", "source_title", "t2", "jo"),
    "volume": ("volume", "vl"),
    "issue": ("issue", "number", "is"),
    "pages": ("pages", "page", "pagination"),
    "doi": ("doi", "do"),
    "pmid": ("pmid", "pubmed_id"),
    "item_type": ("item_type", "entrytype", "type_of_reference", "document_type", "type"),
}  # fmt: skip
#: Where RIS splits the page range.
_PAGE_PARTS = ("start_page", "end_page")


def _decode(raw: bytes, name: str) -> tuple[str, list[str]]:
    """UTF-8 text of a file; a line with undecodable bytes is decoded with replacement
    characters and reported instead of failing the whole file."""
    try:
        return raw.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        pass
    lines, warnings = [], []
    for number, line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").splitlines(keepends=True), 1):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(line.decode("utf-8", errors="replace"))
            warnings.append(
                f"Line {number} of '{name}' is not valid UTF-8; its undecodable bytes were "
                "replaced with '\ufffd'. Check that record, or export the file as UTF-8."
            )
    return "".join(lines), warnings


def _read_csv(text: str, name: str) -> tuple[pd.DataFrame, list[str]]:
    """Comma, tab or semicolon separated text; a row with too many fields keeps the
    leading ones (and is reported) instead of failing the file."""
    separator = max(",\t;", key=text.split("\n", 1)[0].count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    header = next(reader, [])
    rows, warnings = [], []
    for fields in reader:
        if len(fields) > len(header):
            warnings.append(
                f"Line {reader.line_num} of '{name}' has {len(fields)} fields but the header "
                f"has {len(header)}; the extra fields were dropped. "
                "Check its quotes and separators."
            )
        if any(field.strip() for field in fields):
            rows.append((fields + [""] * len(header))[: len(header)])
    return pd.DataFrame(rows, columns=header, dtype=str), warnings


def _read_ris(text: str) -> pd.DataFrame:
    return pd.DataFrame(rispy.loads(text))


def _read_bibtex(text: str) -> tuple[pd.DataFrame, list[str]]:
    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False)
    parser.customization = convert_to_unicode  # M{\"u}ller -> Müller
    entries = bibtexparser.loads(text, parser=parser).entries
    declared = len(_BIBTEX_ENTRY.findall(text))
    warnings = (
        [f"{declared - len(entries)} of {declared} BibTeX entries could not be parsed and were skipped. "
         "Check their braces and commas."]
        if declared > len(entries) else []
    )
    return pd.DataFrame(entries), warnings


def read_bibliography(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV, RIS (.ris) or BibTeX (.bib) file into a frame of strings.

    Column names stay as written. Problems met while reading (bad bytes, unparsable
    BibTeX blocks) are listed in ``frame.attrs["warnings"]``; ``dedupe_table``
    reports them with its own warnings.
    """
    path = Path(path)
    text, warnings = _decode(path.read_bytes(), path.name)
    suffix = path.suffix.lower()
    if suffix == ".ris":
        frame, parse_warnings = _read_ris(text), []
    elif suffix in (".bib", ".bibtex"):
        frame, parse_warnings = _read_bibtex(text)
    else:
        frame, parse_warnings = _read_csv(text, path.name)
    frame.attrs["warnings"] = warnings + parse_warnings
    return frame


def _find_column(frame: pd.DataFrame, names: Sequence[str]) -> list[str]:
    by_lower = {str(column).strip().lower(): column for column in frame.columns}
    return [by_lower[name] for name in names if name in by_lower]


def standardize_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The match columns ``cluster_records`` reads, taken from whatever headers the
    export uses (``ID``, ``ENTRYTYPE``, ``number``, ``booktitle``, RIS names, ...).

    Where several headers map to one column (``journal`` and ``booktitle``), the first
    non-empty value per row wins. The result has a fresh RangeIndex.
    """
    table = frame.reset_index(drop=True)
    standard = pd.DataFrame(index=table.index)
    for column, names in ALIASES.items():
        value = pd.Series([None] * len(table), index=table.index, dtype=object)
        for source in _find_column(table, names):
            value = value.where(~value.map(is_missing), table[source].astype(object))
        standard[column] = value
    start, end = (_find_column(table, (part,)) for part in _PAGE_PARTS)
    if start:
        first = table[start[0]].map(text_or_empty)
        last = table[end[0]].map(text_or_empty) if end else ""
        ranges = (first + "-" + last).str.strip("-").replace("", None)
        standard["pages"] = standard["pages"].where(~standard["pages"].map(is_missing), ranges)
    return standard


def _unique_ids(ids: list[Any]) -> tuple[list[str], list[str]]:
    """Record ids with blanks named by row and repeats suffixed ("-2", "-3"), plus warnings."""
    named = [
        f"row-{row}" if is_missing(value) else str(value).strip()
        for row, value in enumerate(ids, 1)
    ]
    warnings = [
        f"Row {row} has no record ID; it is called 'row-{row}' here. "
        "Give every record an ID in the source file."
        for row, value in enumerate(ids, 1)
        if is_missing(value)
    ]
    taken = set(named)
    renamed: dict[str, list[str]] = {}
    unique = []
    for value in named:
        copies = renamed.setdefault(value, [])
        name, suffix = value, len(copies) + 1
        while suffix > 1 and (name := f"{value}-{suffix}") in taken:
            suffix += 1
        taken.add(name)
        copies.append(name)
        unique.append(name)
    warnings += [
        f"Record ID '{value}' appears {len(names)} times; all rows are kept and named "
        f"{', '.join(map(repr, names))}. Give each record its own ID."
        for value, names in renamed.items()
        if len(names) > 1
    ]
    return unique, warnings


def _record_warnings(standard: pd.DataFrame) -> list[str]:
    warnings = []
    for record_id, title, doi in zip(standard["record_id"], standard["title"], standard["doi"]):
        words = normalize_title(title).split()
        if not words:
            warnings.append(
                f"Record '{record_id}' has no usable title; it can only be matched by DOI, "
                "PMID or OpenAlex id. Add its title to compare it with the other records."
            )
        elif len(words) == 1:
            warnings.append(
                f"Record '{record_id}' has a one-word title ({text_or_empty(title)!r}); it is "
                "matched only when first author, year and pages (or volume and journal) agree "
                "too. Check that the title is complete."
            )
        if not is_missing(doi) and extract_doi(str(doi)) is None:
            warnings.append(
                f"Record '{record_id}': {text_or_empty(doi)!r} in the DOI column is not a "
                "DOI and is ignored. Correct it (10.NNNN/suffix) or clear the field."
            )
    return warnings


def _prepared(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The standard columns with unique record IDs, the IDs, and every warning."""
    warnings = list(frame.attrs.get("warnings", []))
    standard = standardize_columns(frame)
    unique, id_warnings = _unique_ids(standard["record_id"].tolist())
    standard["record_id"] = unique
    return standard, unique, warnings + id_warnings + _record_warnings(standard)


def dedupe_table(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The input rows (same order, all columns) plus ``cluster_id``, and warnings.

    Repeated record IDs are made unique with a suffix (in the ID column of the
    result); a DOI column value that is no DOI is ignored for matching.
    """
    standard, unique, warnings = _prepared(frame)
    result = frame.copy()
    id_columns = _find_column(frame, ALIASES["record_id"])
    if id_columns:
        result[id_columns[0]] = unique
    result["cluster_id"] = cluster_records(standard).cluster_id.to_numpy()
    return result, warnings


def explain_table(frame: pd.DataFrame, record_a: str, record_b: str) -> tuple[PairExplanation, list[str]]:
    """Why two records of a bibliography export were or were not merged, and warnings."""
    standard, _, warnings = _prepared(frame)
    return explain_pair(standard, record_a, record_b), warnings
