"""A corpus row read as a bibliographic work: the fields every output format needs.

The deduplicated corpus mixes vocabularies (PubMed publication types, OpenAlex and Crossref
work types, ISO 639-2 language codes, abbreviated page ranges). Reading a row once into a
:class:`Work` keeps CSL, BibTeX, RIS and Zotero output consistent with each other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

Kind = Literal["article", "chapter", "book", "conference", "preprint", "thesis", "report", "dataset", "other"]

# Source type strings after lower-casing and turning "-" / "_" into spaces. Review articles,
# editorials, errata and retraction notices are journal items, not CSL's "review" (a review of
# another work), so they read as articles.
_KINDS: dict[str, Kind] = {
    **dict.fromkeys(
        [
            "journal article",
            "article",
            "review",
            "editorial",
            "erratum",
            "letter",
            "comment",
            "correction",
            "retraction",
            "retraction of publication",
            "retracted publication",
            "systematic review",
            "meta analysis",
            "case reports",
            "news",
            "article journal",
        ],
        "article",
    ),
    **dict.fromkeys(["book chapter", "chapter", "book section", "book part", "reference entry"], "chapter"),
    **dict.fromkeys(["book", "monograph", "edited book", "reference book"], "book"),
    **dict.fromkeys(["conference paper", "proceedings article", "conference", "paper conference"], "conference"),
    **dict.fromkeys(["preprint", "posted content"], "preprint"),
    **dict.fromkeys(["thesis", "dissertation"], "thesis"),
    **dict.fromkeys(["report", "technical report"], "report"),
    "dataset": "dataset",
}

# ISO 639-2 (as PubMed writes it) to the two-letter BCP 47 primary tag styles expect.
_LANGUAGES = {
    "eng": "en",
    "chi": "zh",
    "zho": "zh",
    "spa": "es",
    "fre": "fr",
    "fra": "fr",
    "ger": "de",
    "deu": "de",
    "ita": "it",
    "por": "pt",
    "jpn": "ja",
    "rus": "ru",
    "kor": "ko",
    "dut": "nl",
    "nld": "nl",
    "pol": "pl",
    "swe": "sv",
    "nor": "no",
    "dan": "da",
    "fin": "fi",
    "tur": "tr",
    "ara": "ar",
    "per": "fa",
    "fas": "fa",
    "heb": "he",
    "gre": "el",
    "ell": "el",
    "cze": "cs",
    "ces": "cs",
    "hun": "hu",
    "ukr": "uk",
    "vie": "vi",
    "tha": "th",
    "ind": "id",
    "hin": "hi",
}


def kind_of(item_type: str | None, container: str | None = None) -> Kind:
    """The kind of a work from its source type; unknown types in a journal read as articles."""
    known = _KINDS.get(re.sub(r"[-_\s]+", " ", (item_type or "").strip().lower()))
    return known or ("article" if container else "other")


def text(value: Any) -> str | None:
    """A stripped string, or None for the many spellings of "missing" a DataFrame row carries."""
    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    stripped = str(value).strip()
    return stripped or None


def strings(value: Any) -> list[str]:
    """The non-empty strings of a list-like cell (list, tuple or numpy array)."""
    if value is None or isinstance(value, str) or not isinstance(value, Iterable):
        return []
    return [item for item in (text(v) for v in value) if item]


def language_tag(code: str | None) -> str | None:
    """A BCP 47 tag: ISO 639-2 codes become their two-letter form, "und" means unknown."""
    if not code or code.lower() == "und":
        return None
    return _LANGUAGES.get(code.lower(), code)


def expand_page_range(pages: str | None) -> str | None:
    """``"455-63"`` -> ``"455-463"``: PubMed abbreviates ranges, citation styles expect them whole."""
    if not pages:
        return None
    parts = [part.strip() for part in re.split(r"\s*(?:--|[-\u2010-\u2015])\s*", pages) if part.strip()]
    if len(parts) != 2:
        return pages
    first, last = parts
    if first.isdigit() and last.isdigit() and len(last) < len(first):
        last = first[: len(first) - len(last)] + last
    return f"{first}-{last}"


@dataclass(frozen=True)
class Person:
    """An author: family and given names, or one literal name for collectives."""

    family: str | None = None
    given: str | None = None
    suffix: str | None = None
    literal: str | None = None

    @classmethod
    def parse(cls, name: str) -> Person:
        """Read ``"Surname, Given[, Suffix]"``; a name without a comma is a collective."""
        parts = [part.strip() for part in name.split(",")]
        if len(parts) == 1 or not parts[0]:
            return cls(literal=name.strip())
        return cls(family=parts[0], given=parts[1] or None, suffix=", ".join(parts[2:]) or None)

    def inverted(self) -> str:
        """``"Family, Given"`` (with the suffix after a comma), or the literal name."""
        if self.literal:
            return self.literal
        return ", ".join(part for part in (self.family, self.given, self.suffix) if part)


@dataclass(frozen=True)
class Work:
    """One corpus row with every field cleaned and in a shared vocabulary."""

    id: str
    kind: Kind
    title: str | None
    authors: tuple[Person, ...]
    year: int | None
    container: str | None
    volume: str | None
    issue: str | None
    pages: str | None
    doi: str | None
    pmid: str | None
    url: str | None  # an open-access copy (the corpus oa_url)
    abstract: str | None
    language: str | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Work:
        container = text(row.get("journal"))
        year = re.search(r"\d{4}", text(row.get("year")) or "")
        return cls(
            id=str(row["cluster_id"]),
            kind=kind_of(text(row.get("item_type")), container),
            title=_title(text(row.get("title"))),
            authors=tuple(Person.parse(name) for name in strings(row.get("authors"))),
            year=int(year.group()) if year else None,
            container=container,
            volume=text(row.get("volume")),
            issue=text(row.get("issue")),
            pages=expand_page_range(text(row.get("pages"))),
            doi=text(row.get("doi")),
            pmid=text(row.get("pmid")),
            url=text(row.get("oa_url")),
            abstract=text(row.get("abstract")),
            language=language_tag(text(row.get("language"))),
        )

    @property
    def page_bounds(self) -> tuple[str | None, str | None]:
        """First and last page (the last is None for a single page or an article number)."""
        if not self.pages:
            return None, None
        first, _, last = self.pages.partition("-")
        return first, last or None


def _title(title: str | None) -> str | None:
    """Drop the one trailing period PubMed adds to every title; styles add their own."""
    if title and title.endswith(".") and not title.endswith(".."):
        return title[:-1]
    return title
