"""Pairwise decision for records without a shared identifier.

Evidence is added up in points, the way a Fellegi-Sunter match weight is: a close
title is the main evidence (worth more the longer the title), agreeing fields
support it, contradicting fields count against it. Some differences end the
comparison outright, because they mean different records whatever else agrees:

- a notice (erratum, comment, reply) against its paper;
- a conference paper or preprint against a journal article;
- different DOIs;
- years more than one apart (any difference for conference papers);
- two of journal, volume and pages disagreeing (another publication);
- different numbers in the title ("phase I"/"phase II", "2019 update"/"2021
  update", "X"/"X: part 2"), unless the pages agree (then the number is a typo).

Without a close title only the full locator (first author, year, journal, volume,
page range) identifies an article, as for a title translated two ways.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz.distance import Indel

from hysem_assets.dedup.features import RecordFeatures
from hysem_assets.dedup.normalize import journals_agree

#: Points a pair needs to be a duplicate.
THRESHOLD = 8
#: Lowest title similarity that still counts as title evidence.
MIN_TITLE_SIMILARITY = 0.85
#: Titles up to this many words are "short": alone they identify nothing.
SHORT_TITLE_WORDS = 3
#: (lowest similarity, points for short, medium (4-6 words) and long titles).
_TITLE_POINTS = ((0.97, (3, 6, 8)), (0.92, (0, 4, 6)), (MIN_TITLE_SIMILARITY, (0, 2, 4)))
#: A title that is the other's title minus a subtitle.
_SUBTITLE_POINTS = 4
#: Fields that place an article; two of them disagreeing mean another publication.
_PLACE = ("journal", "volume", "pages")
#: Fields that together locate an article without its title.
_LOCATOR = ("author", "year", "journal", "volume", "pages")


@dataclass(frozen=True, slots=True)
class Match:
    """A pair judged duplicate: the agreeing fields, title similarity and points."""

    rule: str
    similarity: float
    points: int


def title_similarity(a: RecordFeatures, b: RecordFeatures) -> tuple[float, int]:
    """Best normalized Indel similarity over both records' title versions, with the
    word count of the shorter title of that best pair; (0, 0) when a title is missing."""
    best = (0.0, 0)
    for key_a, size_a in zip(a.title_keys, a.title_sizes):
        for key_b, size_b in zip(b.title_keys, b.title_sizes):
            similarity = Indel.normalized_similarity(key_a, key_b)
            if similarity > best[0] or (similarity == best[0] and min(size_a, size_b) > best[1]):
                best = (similarity, min(size_a, size_b))
    return best


def _title_points(a: RecordFeatures, b: RecordFeatures, similarity: float, words: int) -> int:
    size = 0 if words <= SHORT_TITLE_WORDS else 1 if words < 7 else 2
    for lowest, points in _TITLE_POINTS:
        if similarity >= lowest:
            return points[size]
    shorter, longer = sorted((a.title_key, b.title_key), key=len)
    return _SUBTITLE_POINTS if size and longer.startswith(shorter) else 0


def _incompatible(a: RecordFeatures, b: RecordFeatures) -> bool:
    """Differences that make two records distinct whatever else agrees.

    Conference and journal kinds only conflict across venues: one venue typed
    differently by two databases is still one venue. A year apart is tolerated for
    journals (online first, then in print) but not for conferences, whose annual
    series repeat titles ("Introduction to the minitrack on ...").
    """
    years, kinds = (a.year, b.year), (a.kind, b.kind)
    return (
        a.notice != b.notice
        or bool(
            a.kind and b.kind and a.kind != b.kind and not journals_agree(a.journal, b.journal)
        )
        or bool(a.doi_work and b.doi_work and a.doi_work != b.doi_work)
        or (None not in years and abs(a.year - b.year) > (0 if "conference" in kinds else 1))
    )


def _author_overlap(a: RecordFeatures, b: RecordFeatures) -> float:
    """Share of the shorter author list found in the other list."""
    shorter, other = sorted((a, b), key=lambda r: len(r.authors))
    found = sum(
        bool((author.surnames if author.ordered else author.words) & other.author_words)
        for author in shorter.authors
    )
    return found / len(shorter.authors)


def _field_evidence(a: RecordFeatures, b: RecordFeatures) -> list[tuple[str, int]]:
    """(field, points) for every field both records have."""
    evidence: list[tuple[str, int]] = []
    if a.year is not None and b.year is not None:
        evidence.append(("year", 1 if a.year == b.year else -2))
    if a.authors and b.authors:
        evidence.append(("author", 2 if a.authors[0].same_as(b.authors[0]) else -5))
        if min(len(a.authors), len(b.authors)) > 1 and _author_overlap(a, b) >= 0.5:
            evidence.append(("authors", 1))
    if a.page and b.page:
        if a.page == b.page:
            evidence.append(("pages", 2))
        elif "1" not in (a.page, b.page):  # online-first versions start at page 1
            evidence.append(("pages", -3))
    if a.volume and b.volume:
        evidence.append(("volume", 1 if a.volume == b.volume else -2))
    if a.journal and b.journal:
        evidence.append(("journal", 1 if journals_agree(a.journal, b.journal) else -2))
    return evidence


def _short_title_confirmed(evidence: dict[str, int]) -> bool:
    """Short titles need the first author, the year and the place of publication."""
    located = evidence.get("pages", 0) > 0 or (
        evidence.get("volume", 0) > 0 and evidence.get("journal", 0) > 0
    )
    return evidence.get("author", 0) > 0 and evidence.get("year", 0) > 0 and located


def _located(a: RecordFeatures, b: RecordFeatures, evidence: dict[str, int]) -> bool:
    """Same first author, year, journal, volume and page range: one article, even when
    its title was translated differently. A single page does not locate an article:
    supplements print several abstracts on one page."""
    return (
        all(evidence.get(field, 0) > 0 for field in _LOCATOR)
        and a.page_range == b.page_range
        and "-" in (a.page_range or "")
    )


def compare(a: RecordFeatures, b: RecordFeatures) -> Match | None:
    """The match between two records, or None when they are not duplicates."""
    if _incompatible(a, b):
        return None
    similarity, words = title_similarity(a, b)
    title = _title_points(a, b, similarity, words)
    evidence = dict(_field_evidence(a, b))
    if title <= 0:
        if not _located(a, b, evidence):
            return None
        return Match("locator", round(similarity, 4), sum(evidence.values()))
    if sum(evidence.get(field, 0) < 0 for field in _PLACE) >= 2:
        return None  # another publication: an abstract in two journals, a digest, an erratum
    if a.numbers != b.numbers and evidence.get("pages", 0) <= 0:
        return None  # "part 1"/"part 2"; only the same pages outweigh a number typo
    points = title + sum(evidence.values())
    if points < THRESHOLD:
        return None
    if words <= SHORT_TITLE_WORDS and not _short_title_confirmed(evidence):
        return None
    agreed = [field for field, value in evidence.items() if value > 0]
    return Match("+".join(["title", *agreed]), round(similarity, 4), points)
