"""Which canonical terms a text mentions: for ``(:Chunk)-[:MENTIONS]->(term)`` and for
reading a canonical value (a study design) out of a free-text field.

Texts say "O3" or "ozone" where the graph has one canonical node, so matching runs over
spellings (the synonym dictionaries, the canonical_terms mapping, the canonical terms
themselves) and reports canonical names. Matching is on whole words, longest spelling
first (so "PM2.5" does not also count as "PM"), case-insensitive except for all-capital
abbreviations of up to four characters ("MI", "AF", "PM"), which match in capitals only,
as the dictionaries intend.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pandas as pd

#: field -> spelling -> canonical term
Vocabulary = dict[str, dict[str, str]]


def _is_abbreviation(spelling: str) -> bool:
    return len(spelling) <= 4 and spelling.isupper()


def _alternation(spellings: Iterable[str], flags: int) -> re.Pattern[str] | None:
    ordered = sorted(set(spellings), key=len, reverse=True)
    if not ordered:
        return None
    return re.compile(rf"(?<!\w)(?:{'|'.join(re.escape(s) for s in ordered)})(?!\w)", flags)


class TermMatcher:
    """Finds the canonical terms of one field in a text, in order of first mention."""

    def __init__(self, spellings: Mapping[str, str]) -> None:
        self.exact = {s: c for s, c in spellings.items() if _is_abbreviation(s)}
        self.folded = {s.casefold(): c for s, c in spellings.items() if not _is_abbreviation(s)}
        self.patterns = [
            (pattern, lookup, fold)
            for pattern, lookup, fold in (
                (_alternation(self.exact, 0), self.exact, False),
                (_alternation(self.folded, re.IGNORECASE), self.folded, True),
            )
            if pattern is not None
        ]

    def find(self, text: str | None) -> list[str]:
        if not text:
            return []
        hits: list[tuple[int, str]] = []
        for pattern, lookup, fold in self.patterns:
            hits += [(m.start(), lookup[m.group(0).casefold() if fold else m.group(0)]) for m in pattern.finditer(text)]
        return list(dict.fromkeys(canonical for _, canonical in sorted(hits)))


def merge_vocabularies(*vocabularies: Mapping[str, Mapping[str, str]]) -> Vocabulary:
    """One vocabulary; a spelling keeps the canonical term of the first vocabulary giving it,
    and every canonical term also stands for itself."""
    merged: Vocabulary = {}
    for vocabulary in vocabularies:
        for field, spellings in vocabulary.items():
            target = merged.setdefault(field, {})
            for spelling, canonical in spellings.items():
                if spelling.strip() and canonical:
                    target.setdefault(spelling.strip(), canonical)
                    target.setdefault(canonical, canonical)
    return merged


def find_mentions(texts: pd.Series, vocabulary: Vocabulary) -> pd.Series:
    """Per text, field -> canonical terms it mentions (the ``mentions`` column of chunks)."""
    matchers = {field: TermMatcher(spellings) for field, spellings in vocabulary.items()}
    return texts.map(lambda text: {field: matcher.find(text) for field, matcher in matchers.items()})
