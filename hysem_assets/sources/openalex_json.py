"""Parse OpenAlex /works responses into normalized records."""

from __future__ import annotations

import json
import reprlib
from dataclasses import dataclass, field
from typing import Any

from hysem_assets.core.identifiers import normalize_doi, normalize_pmid, strip_openalex_id
from hysem_assets.core.records import empty_record, to_json_text
from hysem_assets.sources.enrichment_fields import UNPUBLISHED_TYPES
from hysem_assets.sources.errors import SourceFormatError
from hysem_assets.sources.fields import (
    clean_text,
    load_json_object,
    normalize_pmcid,
    page_range,
    parse_each,
    plausible_year,
)
from hysem_assets.sources.names import citation_name

SOURCE = "OpenAlex"


@dataclass
class WorksPage:
    """One cursor page: the works that parsed, and a reason for each that did not."""

    records: list[dict[str, Any]]
    next_cursor: str | None
    count: int | None
    failures: list[str] = field(default_factory=list)

    @property
    def results(self) -> int:
        return len(self.records) + len(self.failures)

    @property
    def total(self) -> int | None:
        return self.count


def parse_works_page(body: bytes, where: str) -> WorksPage:
    """Parse a /works list page; one malformed work becomes a failure, not a lost page."""
    page = load_json_object(body, SOURCE, where)
    if "error" in page:
        message = "; ".join(str(page[key]) for key in ("error", "message") if page.get(key)) or "(no message)"
        raise SourceFormatError(
            SOURCE,
            where,
            f"the API returned an error: {message}",
            "check the search and filter parameters",
        )
    results = page.get("results")
    if not isinstance(results, list):
        raise SourceFormatError(
            SOURCE,
            where,
            "the body has no 'results' list",
            "check that the base URL points at the OpenAlex API and the path is /works",
        )
    next_cursor, count = _meta(page.get("meta"), where)
    records, failures = parse_each(results, parse_work, "id", "result")
    return WorksPage(records=records, next_cursor=next_cursor, count=count, failures=failures)


def _meta(meta: Any, where: str) -> tuple[str | None, int | None]:
    """``next_cursor`` and ``count`` of a page; a page whose paging fields are unreadable is rejected."""
    if meta is None:
        return None, None
    if not isinstance(meta, dict):
        raise SourceFormatError(
            SOURCE, where, f"'meta' is {type(meta).__name__}, not an object", "retry; report it if it persists"
        )
    cursor, count = meta.get("next_cursor"), meta.get("count")
    if cursor is not None and not isinstance(cursor, str):
        raise SourceFormatError(
            SOURCE, where, f"meta.next_cursor is {reprlib.repr(cursor)}, not text", "retry; report it if it persists"
        )
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        raise SourceFormatError(
            SOURCE, where, f"meta.count is {reprlib.repr(count)}, not a record count", "retry; report it if it persists"
        )
    return cursor or None, count


def parse_work(work: dict[str, Any]) -> dict[str, Any]:
    """Normalize one OpenAlex work (current schema, or the older host_venue one)."""
    if not isinstance(work, dict):
        raise TypeError(f"a work must be a JSON object, got {type(work).__name__}")
    work_id = strip_openalex_id(work.get("id"))
    if not work_id:
        raise ValueError("the work has no id")
    ids = work.get("ids") or {}
    authors, first_author = _authors(work.get("authorships") or [])
    biblio = work.get("biblio") or {}
    record = empty_record("openalex", work_id)
    record.update(
        openalex_id=work_id,
        doi=normalize_doi(work.get("doi")) or normalize_doi(ids.get("doi")),
        title=clean_text(work.get("title") or work.get("display_name")),
        abstract=rebuild_abstract(work.get("abstract_inverted_index")),
        authors=authors,
        first_author=first_author,
        year=_year(work.get("publication_year")),
        journal=_journal(work),
        volume=clean_text(biblio.get("volume")),
        issue=clean_text(biblio.get("issue")),
        pages=page_range(biblio.get("first_page"), biblio.get("last_page")),
        item_type=clean_text(work.get("type")),
        language=clean_text(work.get("language")),
        pmid=normalize_pmid(ids.get("pmid")),
        pmcid=normalize_pmcid(ids.get("pmcid")),
        oa_url=_oa_url(work),
        raw=to_json_text(work),
    )
    return record


def rebuild_abstract(inverted_index: dict[str, list[int]] | None) -> str | None:
    """Turn OpenAlex's word -> positions index back into running text.

    OpenAlex may not redistribute abstracts verbatim, so it ships this index;
    a word occurring several times lists each of its positions.
    """
    if not inverted_index:
        return None
    if not isinstance(inverted_index, dict):
        raise TypeError("abstract_inverted_index is not an object")
    placed: list[tuple[int, str]] = []
    for word, positions in inverted_index.items():
        for position in positions:
            if not isinstance(position, int) or isinstance(position, bool) or position < 0:
                raise ValueError(f"abstract_inverted_index has a bad position {position!r}")
            placed.append((position, word))
    return clean_text(" ".join(word for _, word in sorted(placed)))


def _authors(authorships: list[dict[str, Any]]) -> tuple[list[str], str | None]:
    authors: list[str] = []
    first_author = None
    for authorship in authorships:
        author = authorship.get("author") or {}
        name, surname = citation_name(author.get("display_name") or authorship.get("raw_author_name"))
        if name:
            authors.append(name)
            first_author = first_author or surname
    return authors, first_author


def _year(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"publication_year is {value!r}")
    return plausible_year(int(value), "publication_year")


def _journal(work: dict[str, Any]) -> str | None:
    source = (work.get("primary_location") or {}).get("source") or {}
    venue = work.get("host_venue") or {}
    return clean_text(source.get("display_name") or venue.get("display_name"))


def _oa_url(work: dict[str, Any]) -> str | None:
    best = work.get("best_oa_location") or {}
    open_access = work.get("open_access") or {}
    return best.get("pdf_url") or best.get("landing_page_url") or open_access.get("oa_url")


def enrichment(record: dict[str, Any]) -> dict[str, Any]:
    """What an OpenAlex work can add to a record found by DOI (None where OpenAlex is silent).

    ``record`` is the work as :func:`parse_work` normalized it; the fields the core
    columns do not keep are read from its raw JSON.
    """
    work = json.loads(record["raw"])
    topic = work.get("primary_topic") or {}
    open_access = work.get("open_access") or {}
    location = work.get("best_oa_location") or work.get("primary_location") or {}
    retracted = work.get("is_retracted")
    return {
        "doi": record["doi"],
        "openalex_id": record["openalex_id"],
        "abstract": record["abstract"],
        "item_type": record["item_type"],
        "cited_by_count": work.get("cited_by_count"),
        "primary_topic": clean_text(topic.get("display_name")),
        "is_retracted": retracted if isinstance(retracted, bool) else None,
        "is_published": None if record["item_type"] is None else record["item_type"] not in UNPUBLISHED_TYPES,
        "license": clean_text(location.get("license")),
        "oa_status": clean_text(open_access.get("oa_status")),
    }
