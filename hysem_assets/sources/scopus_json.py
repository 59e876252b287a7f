"""Parse Scopus Search API JSON (``search-results``) into normalized records."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hysem_assets.core.identifiers import normalize_doi, normalize_pmid
from hysem_assets.core.records import empty_record, to_json_text
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.fields import clean_text, leading_year, load_json_object, parse_each
from hysem_assets.sources.names import citation_name, format_name, split_name

SOURCE = "Scopus"

#: The publisher copyright notice Scopus appends to abstracts ("© 2020 Elsevier Ltd.
#: All rights reserved."); it is not part of the abstract and spoils text matching.
_TRAILING_COPYRIGHT = re.compile(
    r"(?:^|\s+|(?<=[.!?]))(?:Copyright\s*)?(?:©|\(c\)\s*\d{4}|Copyright\s+\d{4})[^©]{0,300}$",
    re.IGNORECASE,
)


@dataclass
class SearchPage:
    """One start/count page of a search, with a reason for each entry that failed."""

    records: list[dict[str, Any]]
    total: int
    start: int
    items_per_page: int
    failures: list[str] = field(default_factory=list)


def parse_search_page(body: bytes, where: str) -> SearchPage:
    """Parse a search page; the API's "Result set was empty" entry means no records."""
    document = load_json_object(body, SOURCE, where)
    _raise_on_error_body(document, where)
    results = document.get("search-results")
    if not isinstance(results, dict):
        raise SourceFormatError(
            SOURCE,
            where,
            "the body has no 'search-results' object",
            "check that the base URL points at the Scopus Search API (/content/search/scopus)",
        )
    total = _count(results, "opensearch:totalResults", where)
    entries = results.get("entry") or []
    if not isinstance(entries, list):
        raise SourceFormatError(SOURCE, where, "'entry' is not a list", "retry the request; report it if it persists")
    errors = [f"entry #{n}: the API says {e['error']!r}" for n, e in enumerate(entries, 1) if _is_error(e)]
    records, failures = parse_each([e for e in entries if not _is_error(e)], parse_entry, "eid", "entry")
    if total:
        failures = errors + failures
    return SearchPage(
        records=records,
        total=total,
        start=_count(results, "opensearch:startIndex", where),
        items_per_page=_count(results, "opensearch:itemsPerPage", where),
        failures=failures,
    )


def _is_error(entry: Any) -> bool:
    """Scopus signals an empty result set with an entry that only holds an error."""
    return isinstance(entry, dict) and "error" in entry


def parse_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """Normalize one search entry (STANDARD or COMPLETE view)."""
    if not isinstance(entry, dict):
        raise TypeError(f"an entry must be a JSON object, got {type(entry).__name__}")
    source_id = clean_text(entry.get("eid") or entry.get("dc:identifier"))
    if not source_id:
        raise ValueError("the entry has neither eid nor dc:identifier")
    authors, first_author = _authors(entry)
    record = empty_record("scopus", source_id)
    record.update(
        doi=normalize_doi(entry.get("prism:doi")),
        title=clean_text(entry.get("dc:title")),
        abstract=strip_copyright(clean_text(entry.get("dc:description"))),
        authors=authors,
        first_author=first_author,
        year=leading_year(entry.get("prism:coverDate")),
        journal=clean_text(entry.get("prism:publicationName")),
        volume=clean_text(entry.get("prism:volume")),
        issue=clean_text(entry.get("prism:issueIdentifier")),
        pages=clean_text(entry.get("prism:pageRange")) or clean_text(entry.get("article-number")),
        item_type=(clean_text(entry.get("subtypeDescription")) or "").lower() or None,
        language=_language(entry.get("language")),
        pmid=normalize_pmid(entry.get("pubmed-id")),
        raw=to_json_text(entry),
    )
    return record


def strip_copyright(abstract: str | None) -> str | None:
    """Drop the trailing copyright notice; an abstract that is only a notice becomes None."""
    if not abstract:
        return None
    return clean_text(_TRAILING_COPYRIGHT.sub("", abstract))


def _raise_on_error_body(document: dict[str, Any], where: str) -> None:
    """Elsevier reports failures as ``service-error`` or ``error-response`` bodies."""
    for key in ("service-error", "error-response"):
        if key in document:
            message = "; ".join(_leaf_strings(document[key])) or "(no message)"
            raise SourceFormatError(
                SOURCE,
                where,
                f"the API returned an error: {message}",
                "check the API key, its entitlements and quota, and the query syntax",
            )


def _leaf_strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in _leaf_strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _leaf_strings(item)]
    text = clean_text(value)
    return [text] if text else []


def _count(results: dict[str, Any], key: str, where: str) -> int:
    value = results.get(key)
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise SourceFormatError(
            SOURCE,
            where,
            f"{key} is {value!r}, not a number",
            "retry the request; report it if it persists",
        ) from None


def _authors(entry: dict[str, Any]) -> tuple[list[str], str | None]:
    """Full author list (COMPLETE view), else the first author from dc:creator."""
    authors: list[str] = []
    first_author = None
    for author in entry.get("author") or []:
        surname = clean_text(author.get("surname"))
        given = clean_text(author.get("given-name")) or clean_text(author.get("initials"))
        if not surname:
            surname, given = split_name(author.get("authname"))
        name = format_name(surname, given)
        if name:
            authors.append(name)
            first_author = first_author or surname
    if not authors:
        name, first_author = citation_name(entry.get("dc:creator"))
        authors = [name] if name else []
    return authors, first_author


def _language(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("@xml:lang")
    return clean_text(value)
