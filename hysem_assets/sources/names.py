"""Person names in the one shape every record uses: ``"Surname, Given"``.

PubMed and Scopus hand over surname and given name separately; OpenAlex only
has a display name ("Heather Piwowar") and Scopus sometimes only an index name
("Müller J."). Splitting both kinds here keeps first-author surnames comparable
across sources for deduplication.
"""

from __future__ import annotations

import re

from hysem_assets.sources.fields import clean_text

#: Lower-case words that belong to the surname when they precede it ("van der Berg").
_PARTICLES = frozenset("al bin da das de del della der di do dos du el la le st ten ter van von zu".split())
_SUFFIXES = frozenset("jr jr. sr sr. ii iii iv".split())
#: Index-style initials: "J.", "J.P.", "J.-P.", "JP".
_INITIALS = re.compile(r"^[A-Z]{1,2}$|^(?:[A-Z][a-z]?\.-?){1,4}$")


def format_name(surname: str | None, given: str | None) -> str | None:
    """``"Surname, Given"``; whichever part exists when the other is missing."""
    surname, given = clean_text(surname), clean_text(given)
    if not surname:
        return given
    return f"{surname}, {given}" if given else surname


def split_name(name: str | None) -> tuple[str | None, str | None]:
    """Split a free-form name into ``(surname, given)``, best effort.

    Understands "Surname, Given", index form "Surname I." (initials last) and
    display form "Given [particles] Surname [Jr.]".
    """
    text = clean_text(name)
    if not text:
        return None, None
    if "," in text:
        surname, _, given = text.partition(",")
        return clean_text(surname), clean_text(given)
    words = text.split(" ")
    if len(words) == 1:
        return text, None
    suffix = words.pop() if words[-1].lower() in _SUFFIXES and len(words) > 2 else None
    if not suffix and _INITIALS.match(words[-1]) and not _INITIALS.match(words[0]):
        return " ".join(words[:-1]), words[-1]
    start = len(words) - 1
    while start > 1 and words[start - 1].lower() in _PARTICLES:
        start -= 1
    given = " ".join(words[:start] + ([suffix] if suffix else []))
    return " ".join(words[start:]), given


def citation_name(name: str | None) -> tuple[str | None, str | None]:
    """``("Surname, Given", surname)`` for a free-form name, or ``(None, None)``."""
    surname, given = split_name(name)
    return format_name(surname, given), surname
