"""Pairwise decision for records without a shared identifier.

Evidence is added up in points, the way a Fellegi-Sunter match weight is: a close
title is the main evidence (worth more the longer the title), agreeing fields
support it, contradicting fields count against it. A false merge silently drops a
study from a review, so some differences end the comparison outright, because they
mean different records whatever else agrees:

- a notice (erratum, comment, reply) against its paper;
- a conference paper or preprint against a journal article; an abstract in a
  journal's supplement against a record of that journal printed over more pages
  than an abstract fills (the full article of the same title);
- different DOIs;
- years more than one apart; a year apart for conference papers of different
  venues, and for any two records printed on different pages;
- a different volume, issue or printed page range (the recurring "Editorial" of
  one journal, told apart only by where it was printed);
- different numbers or single letters in the title ("phase I"/"phase II",
  "hepatitis B"/"hepatitis C"), unless the pages agree (then it is a typo);
- a population, stage or design word in one title and not the other ("adults" /
  "children", "protocol" / results).

Conference abstracts are the exception to the place conflicts: each database exports
a supplement its own way (the supplement as volume, as issue or not at all; the
printed page, the abstract number or no page), so volume, issue and pages of one
abstract disagree between databases. For a record that reads as an abstract or a
supplement item, a place conflict is no evidence when everything a database copies
verbatim agrees: a near-identical long title, the first author, the year and the
journal (see ``_supplement_shift``).

Short and recurring titles ("Editorial", "Introduction to the special issue", or a
title the input shows in several volumes) identify nothing by themselves: they need
first author, year and place of publication to agree. Without a close title only
the full locator (first author, year, journal, volume, page range) identifies an
article, as for a title translated two ways; a record without a title has no title
evidence at all and links only through an identifier.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from rapidfuzz.distance import Indel

from hysem_assets.dedup.distinctions import (
    abstract_sized,
    contrasting_words,
    issues_conflict,
    online_first,
    pages_conflict,
    pages_overlap,
)
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
#: Another issue or printed page range: strong evidence of another item of the journal.
_PLACE_CONFLICT_POINTS = -6
#: Titles of at least this many words may outweigh a place conflict (see ``compare``).
LONG_TITLE_WORDS = 7
#: Lowest title similarity for an abstract whose place differs (see ``_supplement_shift``).
SUPPLEMENT_TITLE_SIMILARITY = 0.97
#: Fields that together locate an article without its title.
_LOCATOR = ("author", "year", "journal", "volume", "pages")


@dataclass(frozen=True, slots=True)
class Assessment:
    """The verdict on one pair and what it rests on.

    ``evidence`` holds (field, points) for the title and every field both records
    have; ``reason`` says in words why the pair is or is not a duplicate; ``rule``
    names the agreeing fields of a duplicate ("title+year+author", "locator").
    """

    duplicate: bool
    reason: str
    similarity: float
    evidence: tuple[tuple[str, int], ...]
    rule: str = ""

    @property
    def points(self) -> int:
        return sum(points for _, points in self.evidence)


def describe_evidence(evidence: tuple[tuple[str, int], ...]) -> str:
    """ "title +8, year +1, pages -6": each field with the points it gave."""
    return ", ".join(f"{field} {points:+d}" for field, points in evidence)


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
    size = 0 if words <= SHORT_TITLE_WORDS else 1 if words < LONG_TITLE_WORDS else 2
    for lowest, points in _TITLE_POINTS:
        if similarity >= lowest:
            return points[size]
    shorter, longer = sorted((a.title_key, b.title_key), key=len)
    return _SUBTITLE_POINTS if size and longer.startswith(shorter) else 0


def _conference_year_shift_allowed(a: RecordFeatures, b: RecordFeatures, long_title: bool) -> bool:
    """A proceedings paper listed a year later (the volume appeared the next year): the
    venue names the other record's year, both name one venue, or a long title that is
    no recurring one ("Introduction to the minitrack ...") has the same first author."""
    if a.year in b.venue_years or b.year in a.venue_years:
        return True
    if a.journal and b.journal and journals_agree(a.journal, b.journal):
        return True
    same_author = bool(a.authors and b.authors and a.authors[0].same_as(b.authors[0]))
    return long_title and same_author and not (a.recurring or b.recurring)


def _years_veto(a: RecordFeatures, b: RecordFeatures, long_title: bool) -> str | None:
    if a.year is None or b.year is None or a.year == b.year:
        return None
    if abs(a.year - b.year) > 1:
        return f"published {abs(a.year - b.year)} years apart ({a.year}, {b.year})"
    if "conference" in (a.kind, b.kind) and not _conference_year_shift_allowed(a, b, long_title):
        return f"conference papers of different years ({a.year}, {b.year}) and venues"
    if (
        a.page
        and b.page
        and a.page != b.page
        and not pages_overlap(a.page_range, b.page_range)
        and not (online_first(a.page_range) or online_first(b.page_range))
    ):
        return f"a year apart ({a.year}, {b.year}) and on other pages ({a.page_range}, {b.page_range})"
    return None


def _year_like(volume: str) -> bool:
    """Some databases give the year as the volume (Cochrane reviews): no conflict then."""
    return volume.isdigit() and 1900 <= int(volume) <= 2100


def _supplement_shift(a: RecordFeatures, b: RecordFeatures, similarity: float, words: int) -> bool:
    """One conference abstract or supplement item that two databases placed differently.

    Embase, Web of Science and the publishers' records give a supplement as volume,
    as issue or not at all, and an abstract's page as printed page, abstract number or
    nothing: their volume, issue and pages may disagree. What they copy verbatim must
    then agree: a long title (``LONG_TITLE_WORDS``) that is no recurring one, nearly
    identical (``SUPPLEMENT_TITLE_SIMILARITY``), the first author, the year and the
    journal, and one of the two must read as an abstract or supplement item, and
    neither may span more pages than an abstract (``abstract_sized``): the abstract
    and the journal's full article of one title stay apart. Another abstract of the
    same group at one meeting differs in its title's numbers or study words
    (``_title_veto`` still applies); an encore at another meeting in another journal.
    """
    return (
        (a.supplement or b.supplement)
        and abstract_sized(a.page_range)
        and abstract_sized(b.page_range)
        and similarity >= SUPPLEMENT_TITLE_SIMILARITY
        and words >= LONG_TITLE_WORDS
        and not (a.recurring or b.recurring)
        and a.year is not None
        and a.year == b.year
        and bool(a.authors and b.authors and a.authors[0].same_as(b.authors[0]))
        and bool(a.journal and b.journal and journals_agree(a.journal, b.journal))
    )


def _abstract_veto(a: RecordFeatures, b: RecordFeatures) -> str | None:
    """An abstract in a journal's supplement against a record of that journal printed
    over more pages than an abstract fills: the full article of the same title, a
    distinct record for a review. A supplement item that is itself longer (a paper in
    a supplement issue), records on one first page (its "S" dropped by one database)
    and proceedings listings (a conference paper and its series' pages) are exempt;
    across venues the kinds and journals decide (``_veto``)."""
    for abstract, other in ((a, b), (b, a)):
        if (
            abstract.supplement
            and abstract_sized(abstract.page_range)
            and not other.supplement
            and other.kind != "conference"
            and not abstract_sized(other.page_range)
            and journals_agree(a.journal, b.journal)
            and not same_page(a.page, b.page)
            and not pages_overlap(a.page_range, b.page_range)
        ):
            return f"a conference abstract against an article on pages {other.page_range}"
    return None


def _place_veto(a: RecordFeatures, b: RecordFeatures, long_title: bool) -> str | None:
    """Printed in another volume, or in another issue or page range: another item of
    the journal (its recurring "Editorial"). Only a long, non-recurring title may
    outweigh another issue or page range, against ``_PLACE_CONFLICT_POINTS``."""
    if a.volume and b.volume and a.volume != b.volume and not (_year_like(a.volume) or _year_like(b.volume)):
        return f"volumes differ ({a.volume}, {b.volume})"
    if long_title and not (a.recurring or b.recurring):
        return None
    if issues_conflict(a.issue, b.issue):
        return f"issues differ ({a.issue}, {b.issue})"
    if pages_conflict(a.page_range, b.page_range):
        return f"page ranges differ ({a.page_range}, {b.page_range})"
    return None


def _veto(a: RecordFeatures, b: RecordFeatures, long_title: bool) -> str | None:
    """The difference that makes two records distinct whatever else agrees, in words.

    Conference and journal kinds only conflict across venues: one venue typed
    differently by two databases is still one venue.
    """
    if a.notice != b.notice:
        return f"{a.notice or 'a paper'} against {b.notice or 'a paper'}"
    if a.kind and b.kind and a.kind != b.kind and not journals_agree(a.journal, b.journal):
        return f"{a.kind} against {b.kind}"
    if a.doi_work and b.doi_work and a.doi_work != b.doi_work:
        return f"different DOIs ({a.doi_work}, {b.doi_work})"
    return _years_veto(a, b, long_title)


def _title_veto(a: RecordFeatures, b: RecordFeatures, evidence: dict[str, int]) -> str | None:
    """Close titles whose differing words name another study or another part; on the
    same pages they are one article whose title was typed or translated differently.
    A subtitle's study words ("updated results") count on a record of another year."""
    if evidence.get("pages", 0) > 0:
        return None
    if a.numbers != b.numbers:
        return f"numbers in the titles differ ({' '.join(sorted(a.numbers)) or '-'} | {' '.join(sorted(b.numbers)) or '-'})"
    if a.letters and b.letters and a.letters != b.letters:
        return f"letters in the titles differ ({' '.join(sorted(a.letters))} | {' '.join(sorted(b.letters))})"
    other_year = a.year is not None and b.year is not None and a.year != b.year
    words = contrasting_words(a.title_words, b.title_words, subtitles=not other_year)
    return f"title words differ ({words})" if words else None


def _author_overlap(a: RecordFeatures, b: RecordFeatures) -> float:
    """Share of the shorter author list found in the other list."""
    shorter, other = sorted((a, b), key=lambda r: len(r.authors))
    found = sum(
        bool((author.surnames if author.ordered else author.words) & other.author_words) for author in shorter.authors
    )
    return found / len(shorter.authors)


def same_page(a: str | None, b: str | None) -> bool:
    """Equal first pages, also when one database drops the "S" of a supplement page
    ("S123" and "123")."""
    if not a or not b:
        return False
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    return shorter.isdigit() and longer[0] == "s" and longer[1:] == shorter


def _field_evidence(a: RecordFeatures, b: RecordFeatures, shifted: bool = False) -> list[tuple[str, int]]:
    """(field, points) for every field both records have; with ``shifted`` (one
    abstract placed differently, see ``_supplement_shift``) another volume, issue or
    page counts as nothing."""
    evidence: list[tuple[str, int]] = []
    if a.year is not None and b.year is not None:
        evidence.append(("year", 1 if a.year == b.year else -2))
    if a.authors and b.authors:
        evidence.append(("author", 2 if a.authors[0].same_as(b.authors[0]) else -5))
        if min(len(a.authors), len(b.authors)) > 1 and _author_overlap(a, b) >= 0.5:
            evidence.append(("authors", 1))
    if same_page(a.page, b.page):
        evidence.append(("pages", 2))
    elif not shifted:
        if pages_conflict(a.page_range, b.page_range):
            evidence.append(("pages", _PLACE_CONFLICT_POINTS))
        elif a.page and b.page and "1" not in (a.page, b.page) and not pages_overlap(a.page_range, b.page_range):
            evidence.append(("pages", -3))  # article number against pages; online-first versions start at 1
    if a.volume and b.volume and a.volume == b.volume:
        evidence.append(("volume", 1))
    if a.issue and b.issue:
        if a.issue == b.issue:
            evidence.append(("issue", 1))
        elif issues_conflict(a.issue, b.issue) and not shifted:
            evidence.append(("issue", _PLACE_CONFLICT_POINTS))
    if a.journal and b.journal:
        # Proceedings go by many names (acronym, series, full title): a weaker contradiction.
        against = -1 if a.kind == b.kind == "conference" else -2
        evidence.append(("journal", 1 if journals_agree(a.journal, b.journal) else against))
    return evidence


def _confirmed(a: RecordFeatures, b: RecordFeatures, evidence: dict[str, int]) -> bool:
    """Short and recurring titles need the first author, the year and the place of
    publication: the pages, the journal's volume, or the venue of a conference (one
    proceedings a year)."""
    located = (
        evidence.get("pages", 0) > 0
        or (evidence.get("volume", 0) > 0 and evidence.get("journal", 0) > 0)
        or (a.kind == b.kind == "conference" and evidence.get("journal", 0) > 0)
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


def compare(a: RecordFeatures, b: RecordFeatures) -> Assessment:
    """Whether two records are duplicates, with the evidence for and against."""
    similarity, words = title_similarity(a, b)
    title = _title_points(a, b, similarity, words)
    shifted = _supplement_shift(a, b, similarity, words)
    fields = _field_evidence(a, b, shifted)
    evidence = dict(fields)
    items = (("title", title),) * (title > 0) + tuple(fields)
    verdict = partial(Assessment, similarity=round(similarity, 4), evidence=items)
    another_journal = evidence.get("journal", 0) < 0 and evidence.get("pages", 0) < 0
    long_title = title > 0 and words >= LONG_TITLE_WORDS
    veto = (
        _veto(a, b, long_title)
        or _abstract_veto(a, b)
        or (None if shifted else _place_veto(a, b, long_title))
        or ("another journal and other pages" if another_journal else None)
        or (_title_veto(a, b, evidence) if title > 0 else None)
    )
    if veto:
        return verdict(False, veto)
    if title <= 0:
        if not a.title_key or not b.title_key:
            return verdict(False, "a record has no title: only a shared identifier can link it")
        if _located(a, b, evidence):
            reason = "titles differ but first author, year, journal, volume and page range agree"
            return verdict(True, reason, rule="locator")
        return verdict(False, f"titles differ (similarity {similarity:.2f})")
    points = title + sum(evidence.values())
    if points < THRESHOLD:
        return verdict(False, f"{points} points, {THRESHOLD} needed")
    if (words <= SHORT_TITLE_WORDS or a.recurring or b.recurring) and not _confirmed(a, b, evidence):
        kind = "recurring" if a.recurring or b.recurring else "short"
        return verdict(False, f"a {kind} title needs first author, year and place of publication to agree")
    agreed = [field for field, value in items if value > 0]
    placed = shifted and _place_veto(a, b, long_title=False) is not None
    reason = f"{points} points, {THRESHOLD} needed" + ("; one abstract, placed differently" * placed)
    return verdict(True, reason, rule="+".join(agreed) + "+supplement" * placed)
