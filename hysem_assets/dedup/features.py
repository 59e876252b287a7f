"""Per-record match features, computed once so that comparing a pair is cheap.

Input frames come from the raw_metadata tables (core columns) or from bibliography
exports (``author`` strings, ``number`` for the issue); both map onto one
``RecordFeatures`` per row.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import pandas as pd
from rapidfuzz.distance import Indel

from hysem_assets.core.identifiers import doi_work_key, normalize_pmid, strip_openalex_id
from hysem_assets.dedup.distinctions import (
    is_recurring_title,
    looks_like_record_numbers,
    looks_like_supplement,
    normalize_issue,
    title_letters,
    venue_years,
)
from hysem_assets.dedup.normalize import (
    PARTICLES,
    fold,
    is_missing,
    name_is_ordered,
    normalize_journal,
    normalize_pages,
    normalize_volume,
    notice_kind,
    parse_year,
    split_authors,
    surname,
    title_numbers,
    title_variants,
    tokens,
    venue_kind,
)

#: Authors read per record.
COMPARED_AUTHORS = 12
#: Titles of at least this many words are specific: printed in two issues of one year,
#: such a title is one article placed differently by two databases, not a series.
SPECIFIC_TITLE_WORDS = 7
#: Surnames this long may differ by a mangled letter and still agree.
FUZZY_SURNAME_CHARS = 6
FUZZY_SURNAME_SIMILARITY = 0.85


@dataclass(frozen=True, slots=True)
class Author:
    """One author as comparable word sets; ``ordered`` is False when the surname
    position is a guess ("Omulo Sylvia"), so any of its words may be the surname."""

    surnames: frozenset[str]
    words: frozenset[str]
    ordered: bool

    def same_as(self, other: Author) -> bool:
        """Shared surname word, or near-equal long surnames (lost diacritics such as
        "Ostensson"/"Stensson")."""
        if (
            self.surnames & other.surnames
            or (not self.ordered and self.words & other.surnames)
            or (not other.ordered and other.words & self.surnames)
        ):
            return True
        mine, theirs = " ".join(sorted(self.surnames)), " ".join(sorted(other.surnames))
        return (
            min(len(mine), len(theirs)) >= FUZZY_SURNAME_CHARS
            and Indel.normalized_similarity(mine, theirs) >= FUZZY_SURNAME_SIMILARITY
        )


@lru_cache(maxsize=1 << 16)
def author_from_name(name: str) -> Author | None:
    """The comparable form of one name; None when nothing name-like remains."""
    words = frozenset(w for w in tokens(fold(name)) if len(w) > 1)
    surname_words = frozenset(w for w in tokens(fold(surname(name))) if len(w) > 1)
    surnames = (surname_words - PARTICLES) or surname_words or words
    return Author(surnames, words, name_is_ordered(name)) if surnames else None


@dataclass(frozen=True, slots=True)
class RecordFeatures:
    """What matching looks at for one record.

    ``title_keys`` holds the normalized title without spaces first, then the language
    versions of a bilingual title; ``title_sizes`` are their word counts and
    ``title_words`` the words of the first. ``recurring`` marks a title that names a
    recurring item ("Editorial", or one title printed in several volumes of the
    input). ``supplement`` marks a conference abstract or supplement item (see
    ``looks_like_supplement``). ``doi_work`` is the DOI without version suffix.
    """

    title_keys: tuple[str, ...]
    title_sizes: tuple[int, ...]
    title_words: tuple[str, ...]
    numbers: frozenset[str]
    letters: frozenset[str]
    notice: str
    recurring: bool
    authors: tuple[Author, ...]
    author_words: frozenset[str]
    year: int | None
    volume: str | None
    issue: str | None
    page: str | None
    page_range: str | None
    journal: tuple[str, ...]
    venue_years: frozenset[int]
    kind: str
    supplement: bool
    doi_work: str | None
    pmid: str | None
    openalex_id: str | None

    @property
    def title_key(self) -> str:
        return self.title_keys[0] if self.title_keys else ""


def _column(frame: pd.DataFrame, name: str) -> list[Any]:
    """The column's values, or all None when the frame lacks it."""
    return frame[name].tolist() if name in frame.columns else [None] * len(frame)


def _identifier_text(value: Any) -> str | None:
    """Identifier as text; pandas turns numeric PMIDs into floats such as 12345.0."""
    if is_missing(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _authors(names: Any, first_author: Any) -> tuple[Author, ...]:
    """The first ``COMPARED_AUTHORS`` authors (enough to compare lists; consortium
    papers list hundreds), or the first author's surname alone."""
    names = split_authors(names)[:COMPARED_AUTHORS]
    parsed = [a for a in map(author_from_name, names) if a is not None]
    if not parsed and not is_missing(first_author):
        only = author_from_name(f"{first_author},")  # the comma marks it as a surname
        parsed = [only] if only else []
    return tuple(parsed)


def _mark_recurring(features: list[RecordFeatures]) -> list[RecordFeatures]:
    """Mark titles that the input itself shows printed in several volumes or issues:
    whatever the words, such a title names a series of items.

    A specific title (``SPECIFIC_TITLE_WORDS`` or more) in several places of one
    year is no series: two databases placed one article differently (a conference
    abstract's supplement as volume, issue or neither). A series of such titles runs
    over the years ("Highlights of the annual meeting of ...")."""
    places: dict[str, set[tuple[str, str]]] = defaultdict(set)
    years: dict[str, set[int | None]] = defaultdict(set)
    specific: dict[str, bool] = {}
    for record in features:
        if record.title_key:
            places[record.title_key].update(
                (field, value)
                for field, value in (("volume", record.volume), ("issue", record.issue))
                if value is not None
            )
            years[record.title_key].add(record.year)
            specific[record.title_key] = len(record.title_words) >= SPECIFIC_TITLE_WORDS
    series = {
        key
        for key, seen in places.items()
        if any(sum(field == name for field, _ in seen) > 1 for name in ("volume", "issue"))
        and not (specific[key] and len(years[key]) == 1)
    }
    return [replace(record, recurring=True) if record.title_key in series else record for record in features]


def record_features(frame: pd.DataFrame) -> list[RecordFeatures]:
    """Features for every row of ``frame``, in row order; names come from ``authors``
    (a list) or else ``author`` (a string), else ``first_author``.

    An ``issue`` column that numbers the export's records (see
    ``looks_like_record_numbers``) is not read.
    """
    author_lists = [
        names if not is_missing(names) else text
        for names, text in zip(_column(frame, "authors"), _column(frame, "author"))
    ]
    issues = _column(frame, "issue")
    if looks_like_record_numbers(issues):
        issues = [None] * len(frame)
    rows = zip(
        _column(frame, "title"),
        author_lists,
        _column(frame, "first_author"),
        _column(frame, "year"),
        _column(frame, "volume"),
        issues,
        _column(frame, "pages"),
        _column(frame, "journal"),
        _column(frame, "item_type"),
        _column(frame, "doi"),
        _column(frame, "pmid"),
        _column(frame, "openalex_id"),
    )
    features = []
    for title, names, first, year, volume, issue, pages, journal, item_type, doi, pmid, oa in rows:
        venue = normalize_journal(journal)
        page_range = normalize_pages(pages)
        titles = title_variants(title)
        if titles and titles[0] in venue:
            titles = ()  # a title that only repeats the venue names no paper
        authors = _authors(names, first)
        words = tuple(titles[0].split()) if titles else ()
        features.append(
            RecordFeatures(
                title_keys=tuple(t.replace(" ", "") for t in titles),
                title_sizes=tuple(len(t.split()) for t in titles),
                title_words=words,
                numbers=title_numbers(titles[0] if titles else ""),
                letters=title_letters(words),
                notice=notice_kind(title, item_type),
                recurring=bool(titles) and is_recurring_title(titles[0]),
                authors=authors,
                author_words=frozenset().union(*(a.surnames if a.ordered else a.words for a in authors)),
                year=parse_year(year),
                volume=normalize_volume(volume),
                issue=normalize_issue(issue),
                page=page_range.split("-", 1)[0] if page_range else None,
                page_range=page_range,
                journal=venue,
                venue_years=venue_years(venue),
                kind=venue_kind(venue, item_type),
                supplement=looks_like_supplement(title, volume, issue, pages, journal, item_type),
                doi_work=doi_work_key(_identifier_text(doi)),
                pmid=normalize_pmid(_identifier_text(pmid)),
                openalex_id=strip_openalex_id(_identifier_text(oa)),
            )
        )
    return _mark_recurring(features)
