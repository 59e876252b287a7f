"""Which canonical terms a text mentions: for ``(:Chunk)-[:MENTIONS]->(term)`` and for
reading a canonical value (a study design) out of a free-text field.

Texts say "O3" or "ozone" where the graph has one canonical node, so matching runs over
spellings (the synonym dictionaries, the canonical_terms mapping, the canonical terms
themselves) and reports canonical names, with the same rules as extraction
(:class:`~hysem_assets.core.matcher.TermMatcher`: variants, plurals, case-sensitive
abbreviations, longest spelling first).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from hysem_assets.core.matcher import TermMatcher

#: field -> spelling -> canonical term
Vocabulary = dict[str, dict[str, str]]


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
