"""Read a bibliographic database export (RIS, MEDLINE/NBIB, Web of Science, CSV) into normalized records.

An imported export is a source like PubMed: ``read_export`` turns the file into the
records every source returns (``core.records``), so dedup and screening need not know
where they came from. Export files are messy (a missing ``ER``, a cut-off download,
Windows-1252 bytes, a repeated accession number), so a file is refused whole only when
nothing sensible can be read from it; otherwise every record is either returned or
named in a warning, never dropped in silence.

The format modules (``export_ris``, ``export_medline``, ``export_wos``, ``export_csv``)
only cut the text into entries and pick each format's fields; decoding, format
detection, value normalization and ids live here so that every format agrees on them.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hysem_assets.core.identifiers import extract_doi, normalize_pmid
from hysem_assets.core.records import empty_record, to_json_text
from hysem_assets.sources import export_csv, export_medline, export_ris, export_wos
from hysem_assets.sources.fields import clean_text, leading_year, normalize_pmcid, page_range
from hysem_assets.sources.names import citation_name, format_name

#: The formats detection tries, in words (named in the error for a file in none of them).
FORMATS_TRIED = "RIS, MEDLINE (NBIB), Web of Science plain text, Web of Science tab-delimited, CSV"


@dataclass(frozen=True)
class ExportRead:
    """What one export file gave: its format, the records, and what was wrong on the way."""

    format: str
    records: list[dict[str, Any]]
    warnings: list[str]
    encoding: str


class ExportError(ValueError):
    """A file refused whole; the message is one line naming the file and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))  # one line, whatever a file name or parser put in it


def read_export(path: Path, source: str) -> ExportRead:
    """Read the export at ``path`` as records of ``source`` (the database it came from, e.g. "embase")."""
    path = Path(path)
    name = path.name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ExportError(f"'{name}' cannot be read ({exc.strerror or exc}); check the path and permissions.") from None
    text, encoding, warnings = decode_export(raw, name)
    kind = detect_format(text)
    if kind is None:
        raise ExportError(
            f"'{name}' is in no export format this reader knows (tried {FORMATS_TRIED}); it starts with "
            f"{_start(text)}. Export the records from the database as RIS, MEDLINE, Web of Science or CSV."
        )
    try:
        label, entries, parse_warnings = _PARSERS[kind](text)
    except ValueError as exc:
        raise ExportError(f"'{name}' ({kind}): {exc}") from None
    records, record_warnings = normalize_entries(entries, source)
    if not entries:
        record_warnings.append(f"'{name}' ({label}) holds no records.")
    return ExportRead(label, records, warnings + parse_warnings + record_warnings, encoding)


# --- decoding ---------------------------------------------------------------------------------

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: Leading bytes of files people pick by mistake, and what they are.
_SIGNATURES = (
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (or an .xlsx/.docx file, which is one)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\xd0\xcf\x11\xe0", "an old Office file (.xls/.doc)"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"Rar!", "a RAR archive"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"SQLite format 3", "an SQLite database (an EndNote/Zotero library, not an export)"),
)
#: Share of control characters above which a file is binary, not text.
_BINARY_SHARE = 0.01
#: UTF-8 text decoded once too often: "Ã©" for "é", "â€™" for "’".
_MOJIBAKE = re.compile("Ã[\u0080-\u00bf\u0152-\u02dc\u2013-\u2122]|â€|Â[\u00a0-\u00bf]")


def decode_export(raw: bytes, name: str) -> tuple[str, str, list[str]]:
    """``(text, encoding, warnings)``: BOMs decide, then UTF-8, then Windows-1252 line by line.

    A binary file is refused (read as text it would give junk or nothing). Bytes that are
    not UTF-8 are read as Windows-1252 (Latin-1 where that has no character), only on the
    lines that need it, and named in a warning, so neither a Latin-1 export nor one bad
    byte in a UTF-8 file turns into silent mojibake.
    """
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return _decoded(raw[len(bom) :], encoding, name), encoding, []
    guessed = _bomless_utf16(raw)
    if guessed:
        note = f"'{name}' has no byte-order mark but its zero bytes say {guessed}; it was read as such."
        return _decoded(raw, guessed, name), guessed, [note]
    _refuse_binary(raw, name)
    try:
        text = raw.decode("utf-8")
        encoding, warnings = "utf-8", []
    except UnicodeDecodeError:
        text, encoding, warnings = _decode_mixed(raw, name)
    return _lines_joined(text), encoding, warnings + _mojibake_warning(text, name)


def _decoded(raw: bytes, encoding: str, name: str) -> str:
    try:
        return _lines_joined(raw.decode(encoding))
    except UnicodeDecodeError as exc:
        raise ExportError(
            f"'{name}' starts like {encoding} text but byte {exc.start} is not valid {encoding}; "
            "export the file again as UTF-8."
        ) from None


def _lines_joined(text: str) -> str:
    """Line ends made ``\\n``; only CR and LF end a line (a form feed inside an abstract does not)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _refuse_binary(raw: bytes, name: str) -> None:
    for signature, what in _SIGNATURES:
        if raw.startswith(signature):
            raise ExportError(f"'{name}' is {what}, not a database export; export the records as RIS or CSV.")
    sample = raw[:65536]
    controls = sum(byte < 32 and byte not in (9, 10, 12, 13) for byte in sample)
    if b"\x00" in sample or controls > _BINARY_SHARE * max(len(sample), 1):
        raise ExportError(
            f"'{name}' is not a text file (binary content); export the records as RIS, MEDLINE, "
            "Web of Science or CSV text."
        )


def _bomless_utf16(raw: bytes) -> str | None:
    """``"utf-16-le"``/``"utf-16-be"`` when every other byte of the start is zero (ASCII text in UTF-16)."""
    sample = raw[:4096] if len(raw) % 2 == 0 else b""
    if len(sample) < 4:
        return None
    if not sample[1::2].strip(b"\x00") and sample[0::2].strip(b"\x00"):
        return "utf-16-le"
    if not sample[0::2].strip(b"\x00") and sample[1::2].strip(b"\x00"):
        return "utf-16-be"
    return None


def _decode_mixed(raw: bytes, name: str) -> tuple[str, str, list[str]]:
    """UTF-8 where a line is UTF-8, Windows-1252 (else Latin-1) where it is not."""
    lines, fallback, utf8_accents, legacy = [], [], False, "cp1252"
    for number, line in enumerate(raw.splitlines(keepends=True), 1):
        try:
            lines.append(line.decode("utf-8"))
            utf8_accents = utf8_accents or not line.isascii()
        except UnicodeDecodeError:
            fallback.append(number)
            try:
                lines.append(line.decode("cp1252"))
            except UnicodeDecodeError:  # 0x81, 0x8d, 0x8f, 0x90, 0x9d have no cp1252 character
                lines.append(line.decode("latin-1"))
                legacy = "latin-1"
    plural = "s" if len(fallback) > 1 else ""
    shown = ", ".join(map(str, fallback[:10])) + (f" and {len(fallback) - 10} more" if len(fallback) > 10 else "")
    if utf8_accents:
        encoding = f"utf-8, {legacy} on {len(fallback)} line{plural}"
        warning = (
            f"'{name}' is UTF-8 except line{plural} {shown}, read as {legacy}; "
            "check the accented characters of the records there."
        )
    else:
        encoding = legacy
        warning = (
            f"'{name}' is not UTF-8 (line {fallback[0]} is the first that is not); it was read as "
            f"{legacy}. If accented names look wrong, export the file as UTF-8."
        )
    return "".join(lines), encoding, [warning]


def _mojibake_warning(text: str, name: str) -> list[str]:
    found = _MOJIBAKE.search(text)
    if not found:
        return []
    line = text.count("\n", 0, found.start()) + 1
    return [
        f"Line {line} of '{name}' holds {found.group()!r}, UTF-8 text decoded twice before it was exported "
        "(e.g. 'Ã©' for 'é'); the text was kept as it is. Fix the records in the database or reference manager."
    ]


# --- format detection ---------------------------------------------------------------------------

_WOS_START = re.compile(r"(?:FN|VR|PT) \S")
_TAGGED_LINE = re.compile(r"[A-Z][A-Z0-9]  -|[A-Z][A-Z0-9]{1,3} *- ")
_TAGGED_START = re.compile(r"^(TY  -|PMID- )", re.MULTILINE)

_PARSERS: dict[str, Callable[[str], tuple[str, list[dict[str, Any]], list[str]]]] = {
    "RIS": export_ris.parse,
    "MEDLINE (NBIB)": export_medline.parse,
    "Web of Science plain text": export_wos.parse_plain,
    "Web of Science tab-delimited": export_wos.parse_tabbed,
    "CSV": export_csv.parse,
}


def detect_format(text: str) -> str | None:
    """The format ``text`` is in (a key of the parsers), or None.

    The first line decides where it can (WoS tags, a tab-separated WoS header, an RIS or
    MEDLINE tag line, a CSV header with a title column); a file whose records follow a
    preamble ("1.", an export note) is found by its first ``TY  -`` or ``PMID-`` line.
    """
    first = next((line for line in text.split("\n", 50)[:50] if line.strip()), "")
    if _WOS_START.match(first):
        return "Web of Science plain text"
    if export_wos.is_tabbed_header(first):
        return "Web of Science tab-delimited"
    tagged = _TAGGED_START.search(text)
    if tagged and (_TAGGED_LINE.match(first) or not export_csv.has_title_column(first)):
        return "RIS" if tagged.group(1).startswith("TY") else "MEDLINE (NBIB)"
    if export_csv.is_header(first):
        return "CSV"
    return None


def _start(text: str) -> str:
    head = " ".join(text.strip()[:60].split())
    return repr(head) if head else "nothing (the file is empty)"


# --- normalization ------------------------------------------------------------------------------

#: Type words of the exports -> one spelling; other types are kept, lower case and hyphenated.
_TYPES = {
    **dict.fromkeys(
        ["jour", "ejour", "article", "journal article", "article journal", "electronic article", "ar"],
        "journal-article",
    ),
    **dict.fromkeys(
        ["conf", "cpaper", "conference paper", "conference proceeding", "conference proceedings", "proceedings paper",
         "inproceedings", "conference", "paper conference", "proceedings article", "cp"],
        "conference-paper",
    ),
    **dict.fromkeys(["conference abstract", "meeting abstract"], "conference-abstract"),
    **dict.fromkeys(["abst", "abstract"], "abstract"),
    **dict.fromkeys(["book", "ebook", "whole book", "edbook", "edited book", "electronic book"], "book"),
    **dict.fromkeys(
        ["chap", "echap", "book chapter", "book section", "incollection", "inbook", "chapter",
         "electronic book section"],
        "book-chapter",
    ),
    **dict.fromkeys(["thes", "thesis", "phdthesis", "mastersthesis", "dissertation", "thesis dissertation"], "thesis"),
    **dict.fromkeys(["rprt", "report", "techreport", "technical report"], "report"),
    **dict.fromkeys(["review", "systematic review"], "review"),
    **dict.fromkeys(["erratum", "correction", "published erratum"], "erratum"),
    **dict.fromkeys(["preprint", "posted content"], "preprint"),
    **dict.fromkeys(["data", "dataset", "data file"], "dataset"),
    **dict.fromkeys(["editorial", "editorial material"], "editorial"),
    "letter": "letter",
    "note": "note",
    "inpr": "in-press",
    "unpb": "unpublished",
    "elec": "web-page",
    "gen": "generic",
}  # fmt: skip


def item_type(candidates: list[Any]) -> str | None:
    """The first candidate that is a known type, in one spelling; else the first, as the file states it."""
    words = [_type_words(value) for value in candidates if value and value.strip()]
    known = next((_TYPES[word] for word in words if word in _TYPES), None)
    return known or (words[0].replace(" ", "-") if words else None)


@functools.lru_cache(maxsize=1024)
def _type_words(value: str) -> str:
    return " ".join(re.split(r"[\s_/-]+", value.strip().lower()))


def normalize_entries(entries: list[dict[str, Any]], source: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Records of the parsed entries with unique ids; entries without a title are skipped and named."""
    records, warnings = [], []
    taken = {entry["id"] for entry in entries if entry.get("id")}
    first_seen: dict[str, str] = {}
    for entry in entries:
        fields = entry["fields"]
        where = _where(entry)
        title = clean_text(fields.get("title"))
        if not title:
            warnings.append(f"{where}: no title; skipped. Add its title in the database and export it again.")
            continue
        authors, first_author = _authors(fields.get("authors") or [])
        record_id = entry.get("id") or _hash_id(title, fields.get("year"), first_author)
        if record_id in first_seen:
            unique = _suffixed(record_id, taken)
            warnings.append(
                f"{where}: id {record_id!r} is also that of {first_seen[record_id]}; this record is kept as {unique!r}."
            )
            record_id = unique
        else:
            first_seen[record_id] = where
            taken.add(record_id)
        record = empty_record(source, record_id)
        record.update(
            title=title,
            authors=authors,
            first_author=first_author,
            journal=clean_text(fields.get("journal")),
            volume=clean_text(fields.get("volume")),
            issue=clean_text(fields.get("issue")),
            pages=clean_text(fields.get("pages")) or page_range(fields.get("start_page"), fields.get("end_page")),
            abstract=_abstract(fields.get("abstract")),
            item_type=item_type(fields.get("item_type") or []),
            publication_types=clean_text(fields.get("publication_types")),
            language=clean_text(fields.get("language")),
            pmid=normalize_pmid(clean_text(fields.get("pmid"))),
            pmcid=normalize_pmcid(fields.get("pmcid")),
            raw=to_json_text(entry["raw"]),
        )
        record["year"], year_warning = _year(fields.get("year"), where)
        record["doi"], doi_warning = _doi(fields.get("doi") or [], where)
        warnings += year_warning + doi_warning
        records.append(record)
    return records, warnings


def _where(entry: dict[str, Any]) -> str:
    record_id = f", id {entry['id']!r}" if entry.get("id") else ""
    return f"{entry['unit']} {entry['number']} (line {entry['line']}{record_id})"


def _authors(names: list[Any]) -> tuple[list[str], str | None]:
    """``"Surname, Given"`` names and the first surname; a ``(surname, given)`` pair is taken as it is."""
    authors: list[str] = []
    first_author = None
    for name in names:
        if isinstance(name, tuple):
            formatted, surname = format_name(*name), clean_text(name[0])
        else:
            formatted, surname = citation_name(name)
        if formatted:
            authors.append(formatted)
            first_author = first_author or surname
    return authors, first_author


def _abstract(value: Any) -> str | None:
    """Whitespace collapsed within paragraphs; blank lines between paragraphs kept."""
    if not value:
        return None
    paragraphs = [text for part in re.split(r"\n\s*\n", str(value)) if (text := clean_text(part))]
    return "\n\n".join(paragraphs) or None


def _year(value: Any, where: str) -> tuple[int | None, list[str]]:
    text = clean_text(value)
    year = leading_year(text)
    if text and year is None:
        return None, [f"{where}: year {text[:40]!r} is not a publication year; left empty."]
    return year, []


def _doi(candidates: list[Any], where: str) -> tuple[str | None, list[str]]:
    """The first DOI among the candidates (the DOI field first, then links); a DOI field that holds none is named."""
    for value in candidates:
        doi = extract_doi(clean_text(value))
        if doi:
            return doi, []
    stated = clean_text(candidates[0]) if candidates else None
    return None, [f"{where}: DOI field {stated[:60]!r} holds no DOI; left empty."] if stated else []


def _hash_id(title: str, year: Any, first_author: str | None) -> str:
    """A stable id for a record the file gives none: its normalized title, year and first author."""
    key = "|".join(
        " ".join(re.findall(r"\w+", (text or "").casefold()))
        for text in (title, str(leading_year(year) or ""), first_author)
    )
    return "h:" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def _suffixed(record_id: str, taken: set[str]) -> str:
    number = 2
    while f"{record_id}-{number}" in taken:
        number += 1
    unique = f"{record_id}-{number}"
    taken.add(unique)
    return unique
