"""Canonical terms: raw extracted terms mapped onto the synonym dictionaries of each field.

``map_terms`` tries an exact match, then a spelling variant (:mod:`hysem_assets.terms.matcher`:
case, accents, hyphens, plurals), then sentence-embedding similarity against the field's
dictionary; what stays unmatched is listed with its nearest canonical terms and grouped into
suggested new dictionary entries.
"""

from hysem_assets.terms.dictionaries import (
    Conflict,
    DictionaryConflictWarning,
    DictionaryError,
    SynonymDictionary,
    build_dictionary,
    load_dictionaries,
    load_dictionary,
)
from hysem_assets.terms.embeddings import dictionary_embeddings
from hysem_assets.terms.mapping import TermMapping, map_terms
from hysem_assets.terms.matcher import TermMatcher, is_abbreviation, term_keys
from hysem_assets.terms.suggestions import suggest_entries, suggestions_yaml

__all__ = [
    "Conflict",
    "DictionaryConflictWarning",
    "DictionaryError",
    "SynonymDictionary",
    "TermMapping",
    "TermMatcher",
    "build_dictionary",
    "dictionary_embeddings",
    "is_abbreviation",
    "load_dictionaries",
    "load_dictionary",
    "map_terms",
    "suggest_entries",
    "suggestions_yaml",
    "term_keys",
]
