"""Canonical terms: raw extracted terms mapped onto the synonym dictionaries of each field.

``map_terms`` tries an exact match, then a spelling variant (:mod:`hysem_assets.terms.matcher`:
case, accents, hyphens, plurals), then sentence-embedding similarity against the field's
dictionary; what stays unmatched is listed with its nearest canonical terms and grouped into
suggested new dictionary entries. A field without a dictionary has its terms grouped by
spelling and meaning (:mod:`hysem_assets.terms.grouping`) into a suggested dictionary, and
each term maps to its group's name.

The names below load on first use, so code that only matches terms (a question's words)
does not pay for scikit-learn and the embedding model that mapping and grouping need.
"""

from __future__ import annotations

from hysem_assets.lazy import lazy_exports

#: Each public name and the module of this package that holds it.
_EXPORTS = {
    "Conflict": "dictionaries",
    "DictionaryConflictWarning": "dictionaries",
    "DictionaryError": "dictionaries",
    "SynonymDictionary": "dictionaries",
    "TermMapping": "mapping",
    "TermMatcher": "matcher",
    "build_dictionary": "dictionaries",
    "cluster_terms": "grouping",
    "dictionary_embeddings": "embeddings",
    "distinctions": "grouping",
    "group_terms": "grouping",
    "is_abbreviation": "matcher",
    "load_dictionaries": "dictionaries",
    "load_dictionary": "dictionaries",
    "map_terms": "mapping",
    "suggest_entries": "suggestions",
    "suggested_dictionaries_yaml": "suggestions",
    "suggestions_yaml": "suggestions",
    "term_keys": "matcher",
    "write_suggested_dictionaries": "suggestions",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
