"""A spelling-blind key for terms: what the normalized match compares."""

from __future__ import annotations

import re

from hysem_assets.extraction.text import fold

_DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d)")
_SEPARATORS = re.compile(r"[\s\-‐‑‒–—―_/]+")
# Punctuation goes, except a dot between digits (PM2.5 is not PM25).
_PUNCTUATION = re.compile(r"(?!(?<=\d)\.(?=\d))[^\w\s]")


def _singular(word: str) -> str:
    """English plurals to singular, crudely but identically on both sides of a comparison."""
    if len(word) <= 3 or word[-1] != "s" or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    return word[:-1]


def normalize_term(term: str) -> str:
    """Case, Unicode forms and accents, hyphens and spaces, punctuation and plurals folded away.

    ``"Random-Forests"``, ``"random forest"`` and ``"RandomForest"`` share the key ``randomforest``;
    ``"PM₂.₅"``, ``"PM 2.5"`` and ``"pm2,5"`` share ``pm2.5``.
    """
    text = _PUNCTUATION.sub("", _DECIMAL_COMMA.sub(".", fold(term).casefold()))
    return "".join(_singular(word) for word in _SEPARATORS.split(text) if word)
