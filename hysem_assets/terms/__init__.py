"""Canonical terms: raw extracted terms mapped onto the synonym dictionaries of each field.

``map_terms`` tries an exact match, then a spelling variant (:mod:`hysem_assets.core.matcher`:
case, accents, hyphens, plurals), then sentence-embedding similarity against the field's
dictionary; what stays unmatched is listed with its nearest canonical terms and grouped into
suggested new dictionary entries. A field without a dictionary has its terms grouped by
spelling and meaning (:mod:`hysem_assets.terms.grouping`) into a suggested dictionary, and
each term maps to its group's name.

Matching alone (a question's words) needs only :mod:`hysem_assets.core.matcher`, so it does
not pay for scikit-learn and the embedding model that mapping and grouping need.
"""
