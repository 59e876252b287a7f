"""Which canonical terms a chunk of text mentions, for ``(:Chunk)-[:MENTIONS]->(term)``.

A chunk says "O3" or "ozone" where the graph has one canonical node, so matching runs over
surface forms (the canonical terms themselves plus any synonyms) and reports canonical
names. Matching is case-insensitive on whole words, longest form first, so "PM2.5" does
not also count as "PM".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from hysem_assets.knowledge.build import terms
from hysem_assets.knowledge.schema import GraphSchema

#: field -> surface form (any case) -> canonical term
Vocabulary = dict[str, dict[str, str]]


def vocabulary_from_fields(
    schema: GraphSchema, fields: pd.DataFrame, synonyms: Mapping[str, Mapping[str, str]] | None = None
) -> Vocabulary:
    """Every canonical term extracted in the partition, plus ``synonyms`` (field -> raw -> canonical)."""
    vocabulary: Vocabulary = {}
    for field in schema.entity_fields():
        forms: dict[str, str] = {}
        if field in fields.columns:
            for value in fields[field]:
                forms.update((term.lower(), term) for term in terms(value))
        for raw, canonical in (synonyms or {}).get(field, {}).items():
            forms.setdefault(raw.strip().lower(), canonical)
        vocabulary[field] = forms
    return vocabulary


def _pattern(forms: Mapping[str, str]) -> re.Pattern[str] | None:
    if not forms:
        return None
    alternatives = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def find_mentions(texts: pd.Series, vocabulary: Vocabulary) -> pd.Series:
    """Per text, field -> canonical terms mentioned (in order of first mention)."""
    patterns = {field: (_pattern(forms), forms) for field, forms in vocabulary.items()}

    def mentioned(text: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for field, (pattern, forms) in patterns.items():
            if pattern is not None:
                hits = (forms[match.group(0).lower()] for match in pattern.finditer(text or ""))
                found[field] = list(dict.fromkeys(hits))
        return found

    return texts.map(mentioned)
