"""Canonical terms: raw extracted terms mapped onto the synonym dictionaries of each field.

``map_terms`` tries an exact match, then a normalized one (case, accents, hyphens, plurals),
then sentence-embedding similarity against the field's dictionary; what stays unmatched is
listed with its nearest canonical terms and grouped into suggested new dictionary entries.
"""

from hysem_assets.extraction.terms import DictionaryError
from hysem_assets.terms.dictionaries import (
    Conflict,
    DictionaryConflictWarning,
    SynonymDictionary,
    build_dictionary,
    load_dictionaries,
)
from hysem_assets.terms.embeddings import TermEncoder, dictionary_embeddings
from hysem_assets.terms.matching import DEFAULT_THRESHOLD, TermMapping, map_terms
from hysem_assets.terms.normalize import normalize_term
from hysem_assets.terms.suggestions import suggest_entries, suggestions_yaml

__all__ = [
    "DEFAULT_THRESHOLD",
    "Conflict",
    "DictionaryConflictWarning",
    "DictionaryError",
    "SynonymDictionary",
    "TermEncoder",
    "TermMapping",
    "build_dictionary",
    "dictionary_embeddings",
    "load_dictionaries",
    "map_terms",
    "normalize_term",
    "suggest_entries",
    "suggestions_yaml",
]
