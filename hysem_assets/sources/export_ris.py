"""RIS exports (Embase, Ovid, CINAHL, EndNote, Zotero), read with rispy one record at a time.

rispy glues a record whose ``ER`` line is missing to the next one (or drops it at the
end of the file), so the records are cut here first, each from its ``TY`` line to its
``ER`` line or the next ``TY``, and each keeps the line it starts on for warnings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import rispy

FORMAT = "RIS"
_PARSER = rispy.RisParser()
#: Databases whose accession number is the PMID.
_PUBMED_DATABASES = re.compile(r"medline|pubmed", re.IGNORECASE)
_TYPE_WORDS = re.compile(r"[A-Za-z][A-Za-z ,&/-]{0,60}")
_PUBMED_URL = re.compile(r"(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/(\d+)")

#: One cut record: its number, the line it starts on, its lines, and whether it ended properly.
Cut = tuple[int, int, list[str], bool]


def parse(text: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Entries of an RIS file and the warnings met cutting it into records."""
    cuts, outside = cut_records(
        text.split("\n"), starts=lambda line: line.startswith("TY  -"), ends=_is_end, skip=lambda line: False
    )
    warnings = [unended(number, line, lines, "'ER  - '") for number, line, lines, ended in cuts if not ended]
    warnings += outside_warning(outside, "'TY  - '")
    entries = []
    for number, line, lines, ended in cuts:
        parsed = _PARSER.parse_lines(iter(lines if ended else [*lines, "ER  - "]))
        entry = parsed[0] if parsed else {}
        entry.pop("end_of_reference", None)
        entries.append(_entry(number, line, entry))
    return FORMAT, entries, warnings


def _is_end(line: str) -> bool:
    return line.startswith("ER  -")


def cut_records(
    lines: list[str], starts: Callable[[str], bool], ends: Callable[[str], bool], skip: Callable[[str], bool]
) -> tuple[list[Cut], list[int]]:
    """Records from each start line to its end line or the next start; the numbers of other lines with text.

    ``skip`` lines (file headers such as WoS's ``FN``/``VR``/``EF``) outside records are ignored.
    """
    cuts: list[Cut] = []
    outside: list[int] = []
    current: list[str] | None = None
    start = 0
    for number, line in enumerate(lines, 1):
        if starts(line):
            if current is not None:
                cuts.append((len(cuts) + 1, start, current, False))
            current, start = [line], number
        elif current is not None:
            current.append(line)
            if ends(line):
                cuts.append((len(cuts) + 1, start, current, True))
                current = None
        elif line.strip() and not skip(line):
            outside.append(number)
    if current is not None:
        cuts.append((len(cuts) + 1, start, current, False))
    return cuts, outside


def unended(number: int, line: int, lines: list[str], end_tag: str) -> str:
    """The warning for a record without its end line, naming where it was read up to."""
    last = line + max(index for index, text in enumerate(lines) if text.strip())
    return (
        f"record {number} (line {line}) has no {end_tag} line; it was read up to line {last} "
        "(the next record or the end of the file). Check that the file is complete."
    )


def outside_warning(numbers: list[int], start_tag: str) -> list[str]:
    """One warning for all lines with text outside any record."""
    if not numbers:
        return []
    shown = ", ".join(map(str, numbers[:10])) + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
    return [
        f"line{'s' if len(numbers) > 1 else ''} {shown} lie outside any record (no {start_tag} line opens them) "
        "and were skipped."
    ]


def _entry(number: int, line: int, entry: dict[str, Any]) -> dict[str, Any]:
    unknown = entry.get("unknown_tag") or {}

    def first(*keys: str) -> str | None:
        """The first non-blank value of the keys (rispy's names, or upper-case tags rispy does not know)."""
        for key in keys:
            value = entry.get(key) if key.islower() else unknown.get(key)
            if isinstance(value, list):
                value = next((item for item in value if item and item.strip()), None)
            if value and value.strip():
                return value
        return None

    urls = [url for url in entry.get("urls") or [] if url]
    code = first("type_of_reference")
    # M3 names the type of work ("Conference Abstract"), unless a reference manager put a DOI there.
    work = first("type_of_work")
    kind = work if work and _TYPE_WORDS.fullmatch(work) else None
    accession = first("accession_number")
    database = " ".join(filter(None, (first("name_of_database"), first("database_provider"))))
    pmid = first("PM") or (accession if accession and _PUBMED_DATABASES.search(database) else None)
    pmid = pmid or next((found.group(1) for url in urls if (found := _PUBMED_URL.search(url))), None)
    # EndNote's PubMed filter keeps the PMCID in Custom 2 ("C2  - PMC1234567"); other uses of C2 are no PMCID.
    custom2 = first("custom2", "C2")
    pmcid = custom2 if custom2 and custom2.strip().upper().startswith("PMC") else None
    return {
        "unit": "record",
        "number": number,
        "line": line,
        "id": (accession or first("id") or "").strip() or None,
        "raw": entry,
        "fields": {
            "title": first("title", "primary_title", "BT", "CT", "short_title"),
            "authors": [*(entry.get("authors") or []), *(entry.get("first_authors") or [])],
            "year": first("year", "publication_year", "date"),
            "journal": first(
                "secondary_title", "journal_name", "alternate_title3", "alternate_title2", "alternate_title1"
            ),
            "volume": first("volume", "VO"),
            "issue": first("number", "CP"),
            "start_page": first("start_page"),
            "end_page": first("end_page"),
            # EndNote writes the DOI into M3 at times; links name it too.
            "doi": [first("doi"), work, *(url for url in urls if "doi" in url.lower())],
            "pmid": pmid,
            "pmcid": pmcid,
            "abstract": first("abstract", "notes_abstract"),
            "language": first("language"),
            # Embase states "Conference Abstract", "Review" ... in M3 under TY JOUR or CONF.
            "item_type": [kind, code],
            "publication_types": kind,
        },
    }
