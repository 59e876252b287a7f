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
import pandas as pd
import rispy
from bibtexparser.bparser import BibTexParser
from bibtexparser.customization import convert_to_unicode

from hysem_assets.core.identifiers import extract_doi
from hysem_assets.core.spreadsheets import separator, write_csv
from hysem_assets.dedup.cluster import cluster_records
from hysem_assets.dedup.explain import PairExplanation, explain_pair
from hysem_assets.dedup.normalize import is_missing, normalize_title, text_or_empty

#: An entry opening such as ``@article{key,`` (not ``@comment``, ``@string`` or ``@preamble``).
_BIBTEX_ENTRY = re.compile(
    r"^\s*@(?!comment\b|string\b|preamble\b)\w+\s*[{(]\s*(?P<key>[^,\s]*)", re.IGNORECASE | re.MULTILINE
)
#: A RIS tag line: two characters, two spaces, a hyphen (``TY  - JOUR``, ``ER  -``).
_RIS_TAG = re.compile(r"^(?P<tag>[A-Z][A-Z0-9])  -(?: |$)")
#: Line numbers listed in one warning before "and N more".
_LINES_SHOWN = 10

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
#: Longest CSV field read (abstracts and author lists of consortia run long; the csv
#: module's default of 128 kB is not a limit of any export format).
MAX_FIELD_BYTES = 16 * 2**20
#: Share of control characters above which a file is binary, not a bibliography.
_BINARY_SHARE = 0.01


class BibliographyError(ValueError):
    """A bibliography file that cannot be read; the message names the file and the fix."""


def _refuse_binary(raw: bytes, name: str) -> None:
    """Fail on a file that is not text (a PDF, a spreadsheet, an archive): read as text it
    would become thousands of junk records."""
    sample = raw[:65536]
    controls = sum(byte < 32 and byte not in (9, 10, 13) for byte in sample)
    if b"\x00" in sample or controls > _BINARY_SHARE * max(len(sample), 1):
        raise BibliographyError(
            f"'{name}' is not a text file (binary content). Export the records as CSV, RIS or BibTeX."
        )


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


def _unique_header(header: list[str], name: str) -> tuple[list[str], list[str]]:
    """Repeated column names made unique ("title", "title-2"); only the first is matched on."""
    seen: dict[str, int] = {}
    unique, warnings = [], []
    for column in header:
        key = column.strip().lower()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 1:
            unique.append(column)
            continue
        unique.append(f"{column}-{seen[key]}")
        warnings.append(
            f"Column '{column}' appears more than once in the header of '{name}'; the repeat is kept as "
            f"'{column}-{seen[key]}' and not used for matching. Give each column its own name."
        )
    return unique, warnings


def _read_csv(text: str, name: str) -> tuple[pd.DataFrame, list[str]]:
    """Comma, tab or semicolon separated text; a row with too many fields keeps the
    leading ones (and is reported) instead of failing the file. A quote left open,
    which swallows every later line into one field, fails with the line where it opens."""
    delimiter = max(",\t;", key=text.split("\n", 1)[0].count)
    csv.field_size_limit(max(csv.field_size_limit(), MAX_FIELD_BYTES))
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header, warnings = _unique_header(next(reader, []), name)
    rows: list[list[str]] = []
    fields: list[str] = []
    while True:
        start = reader.line_num + 1
        fields = next(reader, None)
        if fields is None:
            break
        if len(fields) > len(header):
            warnings.append(
                f"Line {reader.line_num} of '{name}' has {len(fields)} fields but the header "
                f"has {len(header)}; the extra fields were dropped. "
                "Check its quotes and separators."
            )
        if any(field.strip() for field in fields):
            rows.append((fields + [""] * len(header))[: len(header)])
        last = (start, fields)
    if rows and _open_quote(last[1], len(header), delimiter):
        raise BibliographyError(
            f"Line {last[0]} of '{name}' opens a quote that is never closed, so every line after it "
            "would be read as one field. Close or remove that quote."
        )
    return pd.DataFrame(rows, columns=header, dtype=str), warnings


def _open_quote(fields: list[str], columns: int, separator: str) -> bool:
    """The last record ran to the end of the file inside quotes: it lacks fields and one
    of them holds further lines that look like records (separators in them)."""
    return len(fields) < columns and any(separator in line for field in fields for line in field.splitlines()[1:])


def _read_ris(text: str, name: str) -> tuple[pd.DataFrame, list[str]]:
    """RIS records, each from its ``TY`` line to its ``ER`` line.

    A record whose ``ER`` is missing is read up to the next ``TY`` (the parser would drop
    it); lines outside any record are skipped; both are reported with their line numbers.
    A file without a single ``TY`` line is not RIS and fails.
    """
    kept: list[str] = []
    warnings: list[str] = []
    outside: list[int] = []
    opened: int | None = None  # the line of the open record's TY
    records = 0
    for number, line in enumerate(text.splitlines(), 1):
        match = _RIS_TAG.match(line)
        tag = match.group("tag") if match else None
        if tag == "TY":
            if opened is not None:
                warnings.append(_unended_ris_record(name, opened, f"line {number - 1}"))
                kept.append("ER  - ")
            opened, records = number, records + 1
            kept.append(line)
        elif opened is None:
            if line.strip():
                outside.append(number)
        else:
            kept.append(line)
            if tag == "ER":
                opened = None
    if opened is not None:
        warnings.append(_unended_ris_record(name, opened, "the end of the file"))
        kept.append("ER  - ")
    if not records:
        raise BibliographyError(
            f"'{name}' holds no RIS record: each record starts with a 'TY  - ' line and ends with 'ER  - '. "
            "Export the records as RIS again."
        )
    if outside:
        warnings.append(
            f"{_lines(outside)} of '{name}' lie outside any record (no 'TY  - ' line opens them) and were skipped."
        )
    try:
        entries = rispy.loads("\n".join(kept))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BibliographyError(f"'{name}' cannot be read as RIS ({type(exc).__name__}: {exc}).") from None
    return pd.DataFrame(entries), warnings


def _unended_ris_record(name: str, start: int, end: str) -> str:
    return f"Line {start} of '{name}' opens a record with no 'ER  - ' line; it was read up to {end}."


def _lines(numbers: list[int]) -> str:
    shown = ", ".join(map(str, numbers[:_LINES_SHOWN]))
    more = f" and {len(numbers) - _LINES_SHOWN} more" if len(numbers) > _LINES_SHOWN else ""
    return f"Line{'s' if len(numbers) > 1 else ''} {shown}{more}"


def _read_bibtex(text: str, name: str) -> tuple[pd.DataFrame, list[str]]:
    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False)
    parser.customization = convert_to_unicode  # M{\"u}ller -> Müller
    entries = bibtexparser.loads(text, parser=parser).entries
    declared = [(text.count("\n", 0, m.start("key")) + 1, m.group("key")) for m in _BIBTEX_ENTRY.finditer(text)]
    warnings = []
    if len(declared) > len(entries):
        parsed = {entry.get("ID") for entry in entries}
        skipped = [line for line, key in declared if key not in parsed] or [line for line, _ in declared]
        warnings.append(
            f"{len(declared) - len(entries)} of {len(declared)} BibTeX entries could not be parsed and were "
            f"skipped ({_lines(skipped).lower()} of '{name}'). Check their braces and commas."
        )
    return pd.DataFrame(entries), warnings


def read_bibliography(path: str | Path) -> pd.DataFrame:
    """Read a CSV/TSV, RIS (.ris) or BibTeX (.bib) file into a frame of strings.

    Column names stay as written (a repeated one gets a suffix). Problems met while
    reading (bad bytes, unparsable BibTeX blocks) are listed in ``frame.attrs["warnings"]``;
    ``dedupe_table`` reports them with its own warnings. A binary file or a CSV with
    an unclosed quote raises ``BibliographyError``.
    """
    path = Path(path)
    raw = path.read_bytes()
    _refuse_binary(raw, path.name)
    text, warnings = _decode(raw, path.name)
    suffix = path.suffix.lower()
    if suffix == ".ris":
        frame, parse_warnings = _read_ris(text, path.name)
    elif suffix in (".bib", ".bibtex"):
        frame, parse_warnings = _read_bibtex(text, path.name)
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
    named = [f"row-{row}" if is_missing(value) else str(value).strip() for row, value in enumerate(ids, 1)]
    warnings = [
        f"Row {row} has no record ID; it is called 'row-{row}' here. Give every record an ID in the source file."
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


def _shown(value: str, limit: int = 80) -> str:
    """A value quoted in a warning, cut short so one field of 200 kB stays one readable line."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


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
                f"Record '{record_id}' has a one-word title ({_shown(text_or_empty(title))}); it is "
                "matched only when first author, year and pages (or volume and journal) agree "
                "too. Check that the title is complete."
            )
        if not is_missing(doi) and extract_doi(str(doi)) is None:
            warnings.append(
                f"Record '{record_id}': {_shown(text_or_empty(doi))} in the DOI column is not a "
                "DOI and is ignored. Correct it (10.NNNN/suffix) or clear the field."
            )
    return warnings


def _column_warnings(frame: pd.DataFrame) -> list[str]:
    """One warning when the columns that matching reads are missing, instead of one per record."""
    wanted = [column for column in ALIASES if column != "record_id"]
    found = [column for column in wanted if _find_column(frame, ALIASES[column])]
    if not found:
        return [
            f"None of the columns ({', '.join(map(str, frame.columns)) or 'none'}) is one that matching reads "
            f"({', '.join(wanted)}, in any case), so no duplicate can be found. Rename the columns."
        ]
    if "title" not in found:
        return [
            f"There is no title column ({', '.join(ALIASES['title'])}); records can only be matched by "
            "identifiers or their full locator. Add the titles to compare records."
        ]
    return []


def _prepared(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The standard columns with unique record IDs, the IDs, and every warning."""
    warnings = list(frame.attrs.get("warnings", []))
    standard = standardize_columns(frame)
    unique, id_warnings = _unique_ids(standard["record_id"].tolist())
    standard["record_id"] = unique
    column_warnings = _column_warnings(frame)
    record_warnings = [] if column_warnings else _record_warnings(standard)
    return standard, unique, warnings + column_warnings + id_warnings + record_warnings


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


def write_table(result: pd.DataFrame, output: Path) -> None:
    """The deduplicated rows in the format ``output``'s suffix names: Parquet, JSON, TSV, else CSV (inert)."""
    suffix = output.suffix.lower()
    if suffix == ".parquet":
        result.to_parquet(output, index=False)
    elif suffix == ".json":
        result.to_json(output, orient="records", force_ascii=False, indent=2)
    else:
        write_csv(result, output, sep=separator(output))
