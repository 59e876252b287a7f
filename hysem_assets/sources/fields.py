"""Small value normalizers and body decoding shared by the source parsers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from hysem_assets.sources.errors import SourceFormatError

#: Publication years a record may carry; outside them the value is an error, not a date.
YEARS = range(1500, 2100)
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")
#: A PMCID alone ("PMC123", "pmc123", "123") or at the end of a PubMed Central URL (".../pmc/articles/PMC123/").
_PMCID = re.compile(r"^(?:.*/pmc/articles/)?(?:PMC)?(\d{1,10})/?$", re.IGNORECASE)


def clean_text(value: Any) -> str | None:
    """Collapse runs of whitespace (incl. no-break spaces); empty text becomes None."""
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def normalize_pmcid(value: Any) -> str | None:
    """A PubMed Central id as ``"PMC1234567"``, from the id with or without its prefix or from an article URL."""
    text = clean_text(value)
    found = _PMCID.match(text) if text else None
    return f"PMC{int(found.group(1))}" if found and int(found.group(1)) else None


def leading_year(value: Any) -> int | None:
    """The first plausible year in a date string: ``"2019 Nov-Dec"`` -> 2019."""
    if value is None:
        return None
    match = _YEAR.search(str(value))
    return int(match.group(1)) if match else None


def plausible_year(year: int, field: str) -> int:
    """``year`` when it can be a publication year; else a ValueError that rejects the record."""
    if year not in YEARS:
        shown = str(year) if len(str(year)) <= 12 else f"{str(year)[:6]}…({len(str(year))} digits)"
        raise ValueError(f"{field} {shown} is not a publication year ({YEARS.start}-{YEARS.stop - 1})")
    return year


def page_range(first: Any, last: Any) -> str | None:
    """``first-last`` as sources print it; a single page when both ends agree."""
    first, last = clean_text(first), clean_text(last)
    if first and last and last != first:
        return f"{first}-{last}"
    return first or last


def load_json_object(body: bytes, source: str, where: str) -> dict[str, Any]:
    """Decode a JSON object body, or raise a SourceFormatError saying what came back."""
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceFormatError.unreadable(source, where, body, "JSON", str(exc)) from exc
    if not isinstance(value, dict):
        raise SourceFormatError(
            source,
            where,
            f"expected a JSON object, got {type(value).__name__}",
            "check the base URL and the request path",
        )
    return value


def parse_each(
    items: list[Any], parse: Callable[[dict[str, Any]], dict[str, Any]], id_key: str, label: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """Parse every item of a page; one broken item becomes a failure naming it, not a lost page."""
    records, failures = [], []
    for position, item in enumerate(items, start=1):
        try:
            records.append(parse(item))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            item_id = item.get(id_key) if isinstance(item, dict) else None
            failures.append(f"{item_id or f'{label} #{position}'}: {exc}")
    return records, failures


#: Publication types that decide a record's ``item_type``, most telling first (PubMed's names): an
#: erratum or a retraction is one whatever else it is tagged with.
TYPE_PRECEDENCE: tuple[tuple[str, str], ...] = (
    ("published erratum", "erratum"),
    ("retraction of publication", "retraction of publication"),
    ("retracted publication", "retracted publication"),
    ("expression of concern", "expression of concern"),
    ("preprint", "preprint"),
    ("systematic review", "review"),
    ("review", "review"),
    ("editorial", "editorial"),
    ("letter", "letter"),
    ("comment", "comment"),
)


def telling_type(publication_types: Iterable[str]) -> str | None:
    """The ``item_type`` the most telling of ``publication_types`` decides (any case); None when none does."""
    types = {text.lower() for text in publication_types}
    return next((name for key, name in TYPE_PRECEDENCE if key in types), None)
