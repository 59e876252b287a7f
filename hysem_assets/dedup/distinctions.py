"""What tells two look-alike records apart.

Large exports hold records that share almost all of their title but are different
items: a journal's recurring "Editorial" or "Introduction to the special issue", two
arms of one trial registered as "... in adults" and "... in children", the phase II
and the phase III protocol, a correction and its paper. A title match says nothing
about them; the words that differ and the place of publication decide. Everything
here is publishing and study-design vocabulary, the same for every field of research.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hysem_assets.dedup.normalize import ORDINAL_QUALIFIERS, fold, is_missing, text_or_empty

# -- recurring items ----------------------------------------------------------------------

#: Title openings of items a journal or conference prints again and again under one title.
_RECURRING = re.compile(
    r"(?:guest )?editorials?\b|(?:guest )?editors?s? (?:note|notes|comments?|choice|introduction|preface"
    r"|summary|corner|letter|message|page|statement|perspective)\b|(?:a )?(?:message|letter|note|word)s? "
    r"from the (?:guest )?(?:editors?|president|chair|publisher)\b|from the (?:guest )?(?:editors?|desk)\b"
    r"|in this issue\b|this issue\b|issue information\b|issue highlights\b|highlights from\b"
    r"|introduction to (?:the |this |our )?(?:\w+ ){0,2}(?:issue|section|minitrack|track|symposium"
    r"|supplement|volume|forum|special)\b|(?:mini)?track introduction\b|minitrack\b|preface\b|foreword\b"
    r"|prologue\b|epilogue\b|highlights\b|table of contents\b|contents\b|masthead\b|announcements?\b"
    r"|news\b|obituar(?:y|ies)\b|in memoriam\b|book reviews?\b|reviewers?s? (?:acknowledge?ments?|thanks|list)\b"
    r"|acknowledge?ments? (?:to|of) (?:our )?reviewers\b|thank you to (?:our )?reviewers\b"
    r"|(?:annual )?(?:meeting|conference|congress|symposium|poster|oral) (?:abstracts|presentations|sessions)\b"
    r"|abstracts\b|proceedings\b|program(?:me)? (?:and abstracts|committee)\b|call for papers\b|errata\b"
    r"|letters? to the editors?\b|erratum\b|corrigendum\b|cover (?:image|story|picture)\b"
)


def is_recurring_title(title_words: str) -> bool:
    """Whether a normalized title ("words separated by spaces") names a recurring item,
    one that stands for a different record in every issue or meeting."""
    return bool(_RECURRING.match(title_words))


# -- words that make two studies ----------------------------------------------------------

#: Classes of words that tell two studies of one programme apart: for whom, at which
#: stage, in which design. Spelling variants are listed as they come out of ``tokens``.
#: Canonical terms keep terms apart on the first three too (``hysem_assets.terms.grouping``).
CONTRAST_CLASSES: dict[str, frozenset[str]] = {
    "population": frozenset(
        "adult adults adulthood adolescent adolescents adolescence child children childhood paediatric "
        "pediatric paediatrics pediatrics infant infants infancy neonatal neonate neonates newborn newborns "
        "preterm elderly older younger youth juvenile geriatric men women male males female females boys girls "
        "maternal paternal pregnant pregnancy postmenopausal premenopausal".split()
    ),
    "stage": frozenset(
        "pilot feasibility protocol interim final preliminary extension followup follow baseline pooled "
        "updated update secondary posthoc rationale design".split()
    ),
    "design": frozenset(
        "randomised randomized nonrandomised nonrandomized controlled uncontrolled placebo openlabel "
        "blinded crossover cohort casecontrol crosssectional".split()
    ),
    "negation": frozenset("with without".split()),
}
#: Word pairs that are one word spelled two ways.
_SPELLINGS = {"paediatric": "pediatric", "paediatrics": "pediatrics", "randomised": "randomized",
              "nonrandomised": "nonrandomized"}  # fmt: skip


def class_words(words: set[str], classes: Mapping[str, frozenset[str]] = CONTRAST_CLASSES) -> dict[str, set[str]]:
    """The words of ``words`` in each class, spelling variants as one word."""
    found: dict[str, set[str]] = {}
    for word in words:
        word = _SPELLINGS.get(word, word)
        for name, members in classes.items():
            if word in members:
                found.setdefault(name, set()).add(word)
    return found


def contrasting_words(a: tuple[str, ...], b: tuple[str, ...], subtitles: bool = True) -> str | None:
    """The population, stage, design or negation words on which two titles differ
    ("adults" against "children", "protocol" against nothing), as "a | b"; None when
    they agree.

    A word found in one title only counts unless the shorter title is the longer
    one's opening (a dropped subtitle), whose extra words describe the same study;
    with ``subtitles`` False (records of different years) a subtitle's words count
    too: "...: updated results" a year later is the study's next report.
    """
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    words_a, words_b = class_words(only_a), class_words(only_b)
    if not words_a and not words_b:
        return None
    shorter, longer = sorted((a, b), key=len)
    if subtitles and longer[: len(shorter)] == shorter:
        return None
    extra_a = sorted(set().union(*words_a.values())) if words_a else []
    extra_b = sorted(set().union(*words_b.values())) if words_b else []
    if extra_a == extra_b:  # only spelling variants of one word
        return None
    return f"{' '.join(extra_a) or '-'} | {' '.join(extra_b) or '-'}"


def title_letters(title_words: tuple[str, ...]) -> frozenset[str]:
    """Single letters standing as words ("hepatitis b", "cohort a"; "a" only after a
    word such as "cohort" or "type", elsewhere it is the article): two titles that
    differ there name different things."""
    labels = {
        word
        for before, word in zip(("",) + title_words, title_words)
        if len(word) == 1 and word.isalpha() and (word != "a" or before in ORDINAL_QUALIFIERS)
    }
    return frozenset(labels)


# -- place of publication -----------------------------------------------------------------

#: "S1", "S 2", "S-3": a supplement's number written where the issue or volume goes.
_SUPPLEMENT_NUMBER = re.compile(r"^\W*s\W?\d+\W*$")
#: Supplement or abstract markers in an export's volume, issue or journal field
#: ("Suppl. 1", "Supplement_1", "15_suppl", "Meeting Abstracts", "Abstract Book").
_SUPPLEMENT_FIELD = re.compile(r"\bsup(?:p|pl|ple|plement)?\b|suppl|\babstracts?\b|\bs\W?\d+\b")
#: A meeting named in the journal field (Embase's "Blood. Conference: <meeting>").
_MEETING_VENUE = re.compile(r"\b(?:conference|congress|meeting|symposium|workshop)\b")
#: Pages of a supplement ("S123") or of an abstract ("Abstract 12", "Abstract no. P-3"); an
#: "A" page may be an article number (BMJ's "a1754") and says nothing.
_SUPPLEMENT_PAGES = re.compile(r"^\W*(?:s\d|abstr|abs\b)")
#: Annotations databases add to an abstract's title ("[Abstract]", "(meeting abstract)").
_ABSTRACT_TITLE = re.compile(r"[\[(]\s*(?:meeting |conference )?abstract\s*[\])]\W*$")
#: Item types of meeting abstracts and conference papers in RIS, EndNote, Embase and
#: Web of Science exports.
_ABSTRACT_TYPES = re.compile(r"abst|conference|proceeding|meeting|congress|\bconf\b|\bcpaper\b|poster")


def looks_like_supplement(title: Any, volume: Any, issue: Any, pages: Any, journal: Any, item_type: Any) -> bool:
    """Whether a record reads as a conference abstract or a supplement item: its item
    type, a supplement in its volume, issue or journal, a meeting as its journal,
    supplement or abstract pages ("S123", "Abstract 12"), or an "[Abstract]"
    annotation on its title.

    Databases export such items each their own way (the supplement as volume, issue or
    neither; printed page, abstract number or no page), so that their volume, issue and
    pages may disagree for one abstract (see ``hysem_assets.dedup.match``).
    """
    venue = fold(text_or_empty(journal))
    place = " | ".join((fold(text_or_empty(volume)), fold(text_or_empty(issue)), venue))
    if _SUPPLEMENT_FIELD.search(place) or _MEETING_VENUE.search(venue):
        return True
    if _ABSTRACT_TYPES.search(fold(text_or_empty(item_type))) or _SUPPLEMENT_PAGES.match(fold(text_or_empty(pages))):
        return True
    tail = text_or_empty(title)[-40:]  # the annotation ends the title
    return ("]" in tail or ")" in tail) and bool(_ABSTRACT_TITLE.search(fold(tail)))


def normalize_issue(value: Any) -> str | None:
    """The issue number as digits ("3" for "3", "03", "No. 3", "3 (Pt 2)"); a range
    ("1-2") keeps both ends; supplements ("Suppl 1", "S1") and words give None (not
    comparable)."""
    text = fold(text_or_empty(value))
    if not text or "sup" in text or _SUPPLEMENT_NUMBER.match(text):
        return None
    match = re.match(r"^\D{0,4}?(\d+)(?:\s*[-/]\s*(\d+))?", text)
    if not match:
        return None
    first, last = match.groups()
    return f"{int(first)}-{int(last)}" if last else str(int(first))


def issues_conflict(a: str | None, b: str | None) -> bool:
    """Two issue numbers that cannot be the same issue (a combined issue "1-2" holds 1 and 2)."""
    if not a or not b or a == b:
        return False
    return not set(a.split("-")) & set(b.split("-"))


def looks_like_record_numbers(values: list[Any]) -> bool:
    """Whether an "issue" column actually numbers the records of the export.

    Some reference managers export their running record number as ``number``: nearly
    every value is distinct and together they run through one consecutive range.
    Issue numbers repeat (1-12 in most journals), so such a column is not read as issues.
    """
    numbers = [int(v) for v in (text_or_empty(x) for x in values if not is_missing(x)) if v.isdigit()]
    if len(numbers) < 20:
        return False
    distinct = set(numbers)
    return len(distinct) >= 0.9 * len(numbers) and max(distinct) - min(distinct) < 2 * len(distinct)


_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def _page_span(page_range: str | None) -> tuple[int, int] | None:
    match = _RANGE.match(page_range or "")
    if not match:
        return None
    first = int(match.group(1))
    return first, max(first, int(match.group(2) or first))


def pages_overlap(a: str | None, b: str | None) -> bool:
    """Two numeric page ranges that share a page (a typo in one end: "945-948" and "948-961")."""
    span_a, span_b = _page_span(a), _page_span(b)
    return bool(span_a and span_b and span_a[0] <= span_b[1] and span_b[0] <= span_a[1])


#: Most pages a conference abstract fills in a printed supplement (one, or two where it
#: runs over a page break); a longer range is an article.
ABSTRACT_PAGES = 2


_SUPPLEMENT_RANGE = re.compile(r"^s?(\d+)-s?(\d+)$")


def abstract_sized(page_range: str | None) -> bool:
    """Whether a page range could hold one abstract: no range ("288-297", "S33-38")
    longer than ``ABSTRACT_PAGES`` (a lone page, an abstract number and no page all could)."""
    match = _SUPPLEMENT_RANGE.match(page_range or "")
    return match is None or int(match.group(2)) - int(match.group(1)) < ABSTRACT_PAGES


def online_first(page_range: str | None) -> bool:
    """Pagination of an online-first version ("1-17"), printed later on other pages of
    a later year; a lone page "1" is no such evidence."""
    return bool(re.fullmatch(r"1-\d+", page_range or ""))


def pages_conflict(a: str | None, b: str | None) -> bool:
    """Two printed page ranges that do not touch ("288-297" against "301-310").

    Only plain numeric ranges compare: article numbers ("e123"), supplement pages
    ("S33") and online-first pagination starting at 1 may stand for the same paper.
    """
    span_a, span_b = _page_span(a), _page_span(b)
    if span_a is None or span_b is None or 1 in (span_a[0], span_b[0]):
        return False
    return not pages_overlap(a, b)


_VENUE_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def venue_years(journal: tuple[str, ...]) -> frozenset[int]:
    """Years written in a venue's name ("ICIS 2019 Proceedings"): a conference's own year."""
    return frozenset(int(y) for variant in journal for y in _VENUE_YEAR.findall(variant))
