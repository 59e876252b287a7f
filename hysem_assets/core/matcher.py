"""The one rule set for what counts as a dictionary term, in running text and in term lists.

Extraction, canonical terms, graph mentions and the QA question parser all match through
:class:`TermMatcher`, so they agree on what a term is. A spelling also matches its variants:
any case, accents or not, Unicode compatibility forms (NO₂, PM₂.₅), hyphens, spaces, dots,
apostrophes or nothing between its words and between letters and digits (PM2.5, PM 2.5,
PM-2.5, RandomForest), a decimal comma (PM2,5), and a plural of its last word (forests,
CNNs, studies). Short all-capital abbreviations (RF, NO, US, OR, PM10) match only in
capitals, because their lower-case forms are ordinary words. In text, where spellings
overlap, the leftmost and then the longest wins, so "fine particulate matter" is PM2.5 and
not also "particulate matter".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from functools import cached_property

_INLINE_TAGS = re.compile(r"</?(?:sub|sup|i|b|em|strong|span|small)\b[^>]*>", re.IGNORECASE)
#: Words of a term: letters, or digits with an optional decimal part (point or comma).
_ATOMS = re.compile(r"\d+(?:[.,]\d+)?|[^\W\d_]+")
#: What may stand between two words of a spelling in text.
_SEPARATOR = r"[\s\-\u2010-\u2013./_'\u2019]{0,2}"
_NOT_COUNTED = re.compile(r"[\s\-\u2010-\u2015_'\u2019]")
#: Where a spelling may start: a letter or digit after anything else.
_WORD_START = re.compile(r"(?<![^\W_])[^\W_]")
_END = r"(?![^\W_]|\.\d)"
#: Plural endings of a last word, and what they replace in its singular.
_PLURALS = (("ies", "y"), ("es", ""), ("s", ""))
#: A last word shorter than this takes no plural ending.
MIN_PLURAL_LETTERS = 3


def strip_markup(text: str) -> str:
    """Inline HTML (``PM<sub>2.5</sub>``, ``m<sup>3</sup>``) as plain text, as abstracts and Markdown carry it."""
    return _INLINE_TAGS.sub("", text)


def fold(text: str) -> str:
    """Compatibility forms unified (NO₂ -> NO2, m³ -> m3) and accents removed (Montréal -> Montreal)."""
    if text.isascii():  # nothing to unify or remove, and most text is: skip two normalizations per character
        return text
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def matchable(text: str) -> str:
    """What spellings are matched against: markup stripped, then folded."""
    return fold(strip_markup(text))


def is_abbreviation(term: str) -> bool:
    """Up to four characters besides spaces and hyphens, with a capital (RF, NO2, PM10, U.S., pH, Co):
    written otherwise they are ordinary words ("no", "as", "co"), so they match only as written."""
    compact = _NOT_COUNTED.sub("", fold(term).strip())
    return len(compact) <= 4 and any(char.isupper() for char in compact)


def _atoms(term: str) -> list[str]:
    return _ATOMS.findall(fold(term))


def _joined(term: str) -> str:
    return "".join(atom.replace(",", ".") for atom in _atoms(term))


def _singulars(key: str) -> list[str]:
    """Keys of the singulars ``key`` may be the plural of (a pluralised word ends in a letter, and
    has at least MIN_PLURAL_LETTERS of them: "gas" is no plural of "Ga")."""
    singulars = [key[: -len(ending)] + single for ending, single in _PLURALS if key.endswith(ending)]
    return [s for s in singulars if s[-1:].isalpha() and len(_ATOMS.findall(s)[-1]) >= MIN_PLURAL_LETTERS]


def term_keys(term: str) -> list[str]:
    """Keys under which ``term`` matches a spelling: its own first, then those of its other readings.

    A spelling's own key drops accents, separators and, unless it is an abbreviation, case,
    so two spellings of one term written differently share it. The other readings are the
    term in capitals as written (to meet abbreviations) and the singulars it may be the
    plural of. Abbreviation keys hold a capital and the others none, so they never collide.
    """
    joined = _joined(term)
    if not joined:
        return []
    own = joined if is_abbreviation(term) else joined.casefold()
    return list(dict.fromkeys([own, joined, joined.casefold(), *_singulars(joined), *_singulars(joined.casefold())]))


def _variant_pattern(spelling: str) -> str:
    """A regular expression for ``spelling`` and exactly the variants :func:`term_keys` joins to it."""
    atoms = _atoms(spelling)
    abbreviation = is_abbreviation(spelling)
    body = _SEPARATOR.join(re.escape(atom.replace(",", ".")).replace(r"\.", "[.,]") for atom in atoms)
    if atoms[-1].isalpha() and len(atoms[-1]) >= MIN_PLURAL_LETTERS:
        if atoms[-1].endswith("y") and not abbreviation:
            body = body[:-1] + "(?:ies|y(?:e?s)?)"
        else:
            body += "(?:e?s)?"
    return body if abbreviation else f"(?i:{body})"


class TermMatcher:
    """Canonical terms found through their spellings (``spelling -> canonical term``).

    A spelling without letters or digits cannot be matched and is ignored; where two
    spellings are the same once varied, the first one given keeps its canonical term.
    """

    def __init__(self, spellings: Mapping[str, str]) -> None:
        usable = {s: c for s, c in ((str(s).strip(), str(c)) for s, c in spellings.items()) if _atoms(s)}
        self._keys: dict[str, str] = {}
        for spelling, canonical in usable.items():
            self._keys.setdefault(term_keys(spelling)[0], canonical)
        # A later spelling that varies into an earlier one's key loses it, in text as in term lists.
        self._spellings = {s: c for s, c in usable.items() if self._keys[term_keys(s)[0]] == c}
        self.canonical: tuple[str, ...] = tuple(dict.fromkeys(self._spellings.values()))

    @cached_property
    def _patterns(self) -> dict[str, tuple[re.Pattern[str], dict[str, str]]]:
        """Per first character (lower case), one alternation of the variants of the spellings starting with it.

        Compiled on first use (term lists never need them). Splitting by first character
        keeps a text position from trying every spelling: vocabularies run to thousands.
        """
        buckets: dict[str, list[tuple[str, str]]] = {}
        # Longer spellings first: at one position the alternation takes the first that matches.
        for spelling, canonical in sorted(self._spellings.items(), key=lambda pair: len(fold(pair[0])), reverse=True):
            buckets.setdefault(_atoms(spelling)[0][0].lower(), []).append((spelling, canonical))
        patterns = {}
        for first, spellings in buckets.items():
            alternatives = "|".join(
                f"(?P<t{index}>{_variant_pattern(spelling)})" for index, (spelling, _) in enumerate(spellings)
            )
            groups = {f"t{index}": canonical for index, (_, canonical) in enumerate(spellings)}
            patterns[first] = (re.compile(f"(?:{alternatives}){_END}"), groups)
        return patterns

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, list[str] | tuple[str, ...] | None]) -> TermMatcher:
        """From ``canonical term -> synonyms``; every canonical term is also a spelling of itself."""
        spellings: dict[str, str] = {}
        for canonical in mapping:
            spellings.setdefault(str(canonical), str(canonical))
        for canonical, synonyms in mapping.items():
            for synonym in synonyms or ():
                spellings.setdefault(str(synonym), str(canonical))
        return cls(spellings)

    def matches(self, folded_text: str) -> Iterator[tuple[str, int, int]]:
        """(canonical term, start, end) of every match in text already passed through :func:`matchable`."""
        position = 0
        while start := _WORD_START.search(folded_text, position):
            position = start.start()
            found = self._patterns.get(folded_text[position].lower())
            match = found[0].match(folded_text, position) if found else None
            if match is None:
                position += 1
                continue
            yield found[1][match.lastgroup or ""], position, match.end()
            position = match.end()

    def find(self, text: str | None) -> list[str]:
        """Canonical terms mentioned in ``text``, unique, in order of first mention."""
        if not text:
            return []
        return list(dict.fromkeys(term for term, _, _ in self.matches(matchable(text))))

    def lookup(self, term: str) -> str | None:
        """The canonical term that the whole of ``term`` (an item of a term list) spells, if any."""
        return next((self._keys[key] for key in term_keys(term) if key in self._keys), None)
