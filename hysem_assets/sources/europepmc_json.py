"""Parse Europe PMC ``/search`` responses (``format=json``) into normalized records.

``resultType=core`` carries everything a record needs; ``lite`` lacks the abstract, the
author list, MeSH and the full-text links, so those columns fall back to what lite has
(``authorString``, ``journalTitle``, ``pubType``) or stay None. Europe PMC names a record by
its source and id together (``MED`` + PMID, ``PMC`` + PMCID, ``PPR`` preprints, ``AGR``,
``PAT``...), so ``source_id`` is ``"<source>:<id>"``; the PMCID stays in ``raw`` and
:func:`pmcid_of` reads it back for the JATS full-text download.
"""

from __future__ import annotations

import html
import json
import re
import reprlib
from dataclasses import dataclass, field
from typing import Any

from hysem_assets.core.identifiers import normalize_doi, normalize_pmid
from hysem_assets.core.records import empty_record, to_json_text
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.fields import (
    clean_text,
    leading_year,
    load_json_object,
    parse_each,
    plausible_year,
    telling_type,
)
from hysem_assets.sources.names import citation_name, format_name

SOURCE = "Europe PMC"
#: ``availabilityCode`` values of a full-text link anyone may follow: open access and free to read.
OPEN_CODES = frozenset({"OA", "F"})
#: Europe PMC's own pubType words, as PubMed names them (``fields.TYPE_PRECEDENCE`` then decides).
_PUBMED_NAMES = {"correction": "published erratum", "review-article": "review", "research-article": "journal article"}
_PMCID = re.compile(r"^(?:PMC)?(\d{1,10})$", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
_HEADING = re.compile(r"<(h[1-6])(?:\s[^<>]*)?>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_BREAK = re.compile(r"</?p(?:\s[^<>]*)?>|<br\s*/?>", re.IGNORECASE)
_PARAGRAPH = "\u2029"  # a paragraph separator no abstract contains
_HEADING_ONLY = re.compile(r"^[^:]{1,80}:$")


@dataclass
class SearchPage:
    """One cursor page: the results that parsed, and a reason for each that did not."""

    records: list[dict[str, Any]]
    #: How many results the page held, read or not (the cursor walk counts them against hitCount).
    size: int
    next_cursor: str | None
    hit_count: int | None
    failures: list[str] = field(default_factory=list)

    @property
    def results(self) -> int:
        return self.size

    @property
    def total(self) -> int | None:
        return self.hit_count


def parse_search_page(body: bytes, where: str) -> SearchPage:
    """Parse a ``/search`` page; one malformed result becomes a failure, not a lost page."""
    page = load_json_object(body, SOURCE, where)
    if "errMsg" in page or "errCode" in page:
        message = "; ".join(str(page[key]) for key in ("errCode", "errMsg") if page.get(key)) or "(no message)"
        raise SourceFormatError(SOURCE, where, f"the API returned an error: {message}", "check the query syntax")
    result_list = page.get("resultList")
    results = result_list.get("result") if isinstance(result_list, dict) else None
    if not isinstance(results, list):
        raise SourceFormatError(
            SOURCE,
            where,
            "the body has no 'resultList.result' list",
            "check that the base URL points at the Europe PMC REST API and the path is /search",
        )
    hit_count = page.get("hitCount")
    if hit_count is not None and (isinstance(hit_count, bool) or not isinstance(hit_count, int) or hit_count < 0):
        raise SourceFormatError(
            SOURCE,
            where,
            f"hitCount is {reprlib.repr(hit_count)}, not a record count",
            "retry; report it if it persists",
        )
    cursor = page.get("nextCursorMark")
    if cursor is not None and not isinstance(cursor, str):
        raise SourceFormatError(
            SOURCE, where, f"nextCursorMark is {reprlib.repr(cursor)}, not text", "retry; report it if it persists"
        )
    records, failures = parse_each(results, parse_result, "id", "result")
    return SearchPage(
        records=records, size=len(results), next_cursor=cursor or None, hit_count=hit_count, failures=failures
    )


def parse_result(result: dict[str, Any]) -> dict[str, Any]:
    """Normalize one search result (core, or lite where core's fields are missing)."""
    if not isinstance(result, dict):
        raise TypeError(f"a result must be a JSON object, got {type(result).__name__}")
    source, identifier = clean_text(result.get("source")), clean_text(result.get("id"))
    if not source or not identifier:
        raise ValueError("the result has no source and id")
    journal_info = _object(result, "journalInfo")
    journal = _object(journal_info, "journal")
    types = _types(result)
    authors, first_author = _authors(result)
    record = empty_record("europepmc", f"{source.upper()}:{identifier}")
    record.update(
        doi=normalize_doi(_text(result.get("doi"))),
        title=plain_text(result.get("title")),
        abstract=plain_text(result.get("abstractText")),
        authors=authors,
        first_author=first_author,
        year=_year(result, journal_info),
        journal=clean_text(journal.get("title") or result.get("journalTitle") or journal.get("medlineAbbreviation")),
        volume=clean_text(journal_info.get("volume") or result.get("journalVolume")),
        issue=clean_text(journal_info.get("issue") or result.get("issue")),
        pages=clean_text(result.get("pageInfo")),
        item_type=_item_type(types, source),
        publication_types="; ".join(types) or None,
        language=clean_text(result.get("language")),
        pmid=normalize_pmid(_text(result.get("pmid"))) or (identifier if source.upper() == "MED" else None),
        pmcid=pmcid_of(result),
        oa_url=_oa_url(result),
        raw=to_json_text(result),
    )
    return record


def pmcid_of(record_or_raw: dict[str, Any] | str | None) -> str | None:
    """The PMCID (``"PMC123"``) of a parsed record, of its ``raw`` JSON text or of a search result."""
    if record_or_raw is None:
        return None
    value: Any = record_or_raw
    if isinstance(value, dict) and value.get("source") == "europepmc" and "raw" in value:
        value = value["raw"]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if not isinstance(value, dict):
        return None
    full_text_ids = _object(value, "fullTextIdList").get("fullTextId")
    candidates = [value.get("pmcid")]
    candidates += full_text_ids if isinstance(full_text_ids, list) else [full_text_ids]
    if str(value.get("source") or "").upper() == "PMC":
        candidates.append(value.get("id"))
    for candidate in candidates:
        found = _PMCID.match(str(candidate or "").strip())
        if found:
            return f"PMC{found.group(1)}"
    return None


def plain_text(value: Any) -> str | None:
    """Europe PMC's HTML-ish text as plain text: ``<h4>Methods</h4>...`` becomes a "Methods: ..." paragraph."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"expected text, got {type(value).__name__}")
    text = _HEADING.sub(lambda found: f"{_PARAGRAPH}{_TAG.sub('', found.group(2)).strip()}: ", value)
    text = html.unescape(_TAG.sub("", _BREAK.sub(_PARAGRAPH, text)))
    paragraphs: list[str] = []
    label = ""
    for part in text.split(_PARAGRAPH):
        cleaned = clean_text(part)
        if not cleaned:
            continue
        if cleaned.endswith(":") and _HEADING_ONLY.match(cleaned):  # a heading whose text is the next paragraph
            label = f"{cleaned} "
            continue
        paragraphs.append(label + cleaned)
        label = ""
    return "\n\n".join(paragraphs) or None


def _object(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"{key} is {type(value).__name__}, not an object")
    return value


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list, bool)):
        raise TypeError(f"expected text, got {type(value).__name__}")
    return str(value)


def _list(parent: dict[str, Any], outer: str, inner: str) -> list[Any]:
    value = _object(parent, outer).get(inner)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _types(result: dict[str, Any]) -> list[str]:
    """Every pubType: core's list, or lite's ``"; "``-separated string."""
    listed = [text for item in _list(result, "pubTypeList", "pubType") if (text := clean_text(item))]
    if not listed and result.get("pubType"):
        listed = [text for part in str(result["pubType"]).split(";") if (text := clean_text(part))]
    return list(dict.fromkeys(listed))


def _item_type(types: list[str], source: str) -> str | None:
    names = {_PUBMED_NAMES.get(text.lower(), text.lower()) for text in types}
    found = telling_type(names) or ("journal article" if "journal article" in names else None)
    if found:
        return found
    if source.upper() == "PPR":
        return "preprint"
    return types[0].lower() if types else None


def _authors(result: dict[str, Any]) -> tuple[list[str], str | None]:
    """Core's authorList (surname, given names); lite's ``authorString`` ("Smith AB, Doe J.") otherwise."""
    authors: list[str] = []
    first_author = None
    listed = _list(result, "authorList", "author")
    for author in listed:
        if not isinstance(author, dict):
            raise TypeError(f"an author is {type(author).__name__}, not an object")
        collective = clean_text(author.get("collectiveName"))
        if collective:
            name, surname = collective, collective
        elif author.get("lastName"):
            surname = clean_text(author["lastName"])
            name = format_name(surname, author.get("firstName") or author.get("initials"))
        else:
            name, surname = citation_name(author.get("fullName"))
        if name:
            authors.append(name)
            first_author = first_author or surname
    if not listed and result.get("authorString"):
        for part in str(result["authorString"]).rstrip(".").split(","):
            name, surname = citation_name(part)
            if name:
                authors.append(name)
                first_author = first_author or surname
    return authors, first_author


def _year(result: dict[str, Any], journal_info: dict[str, Any]) -> int | None:
    for value in (result.get("pubYear"), journal_info.get("yearOfPublication"), result.get("firstPublicationDate")):
        if isinstance(value, bool) or value in (None, ""):
            continue
        if isinstance(value, int):
            return plausible_year(value, "pubYear")
        year = leading_year(value)
        if year is None:
            raise ValueError(f"pubYear {reprlib.repr(value)} is not a year")
        return plausible_year(year, "pubYear")
    return None


def _oa_url(result: dict[str, Any]) -> str | None:
    """A PDF, else an HTML full text, among the links open to anyone; lite: the Europe PMC page of an OA PMCID."""
    links = [link for link in _list(result, "fullTextUrlList", "fullTextUrl") if isinstance(link, dict)]
    open_links = [link for link in links if link.get("availabilityCode") in OPEN_CODES and link.get("url")]
    for style in ("pdf", "html"):
        found = next((link["url"] for link in open_links if str(link.get("documentStyle")).lower() == style), None)
        if found:
            return str(found)
    if open_links:
        return str(open_links[0]["url"])
    pmcid = pmcid_of(result)
    if not links and pmcid and result.get("isOpenAccess") == "Y":
        return f"https://europepmc.org/articles/{pmcid}"
    return None
