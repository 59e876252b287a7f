"""Abbreviations a text defines in brackets ("mild cognitive impairment (MCI)"), so a bare "MCI" later on can
be named in full: read by the open-vocabulary extractor and by the entity graph, which joins both spellings.
"""

from __future__ import annotations

import re

_ABBREVIATION_IN_BRACKETS = re.compile(r"\(\s*([^\s()]{2,12})\s*\)")


def _long_form(words: list[str], short: str) -> str | None:
    """Schwartz and Hearst's match: the shortest run of ``words`` ending the text whose letters spell ``short``."""
    letters = [c.lower() for c in short if c.isalnum()]
    if not letters or not letters[0].isalpha():
        return None
    text = " ".join(words)
    letter, position = len(letters) - 1, len(text) - 1
    while letter >= 0:
        while position >= 0 and (
            text[position].lower() != letters[letter] or (letter == 0 and position > 0 and text[position - 1].isalnum())
        ):
            position -= 1
        if position < 0:
            return None
        letter, position = letter - 1, position - 1
    start = text.rfind(" ", 0, position + 1) + 1
    long_form = text[start:].strip()
    if len(long_form.split()) > min(len(letters) + 5, len(letters) * 2) or len(long_form) <= len(short):
        return None
    return long_form


def abbreviations(text: str) -> dict[str, str]:
    """Abbreviations defined in ``text`` as "long form (ABBR)", abbreviation -> long form."""
    found: dict[str, str] = {}
    for match in _ABBREVIATION_IN_BRACKETS.finditer(text):
        short = match.group(1).strip(".,;:")
        if not any(c.isupper() for c in short) or not short[0].isalnum():
            continue
        before = re.split(r"[.;:()\[\]]", text[max(0, match.start() - 120) : match.start()])[-1]
        words = before.split()[-(len(short) + 5) :]
        long_form = _long_form(words, short)
        if long_form:
            found.setdefault(short, long_form)
    return found
