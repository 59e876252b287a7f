"""Lines of a paragraph into running text.

Line breaks become spaces, except inside Chinese or Japanese text, which has none, and at
a hyphen that splits a word across lines ("recog-" / "nition"), which closes up. A hyphen
that belongs to the word ("non-linear" broken after "non-") is kept when the document
writes that word with a hyphen elsewhere and never without.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

HYPHENS = "-\u00ad\u2010\u2011"
WORD_EDGE = re.compile(r"[^\w\-\u00ad\u2010\u2011]+")
LIGATURES = re.compile("[\ufb00-\ufb06]")


def normalize(text: str) -> str:
    """Spell out typographic ligatures (ﬁ -> fi) that would otherwise break searches and tokens."""
    return LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def vocabulary(words: Iterable[str]) -> frozenset[str]:
    """Lower-cased words of a document with surrounding punctuation stripped."""
    return frozenset(w.lower() for w in (WORD_EDGE.sub("", normalize(word)) for word in words) if w)


def _cjk(char: str) -> bool:
    name = unicodedata.name(char, "")
    return name.startswith(("CJK", "HIRAGANA", "KATAKANA", "IDEOGRAPHIC", "FULLWIDTH"))


def join_lines(lines: Sequence[str], known: frozenset[str] = frozenset()) -> str:
    """One paragraph's lines as one string; ``known`` is the document's vocabulary."""
    text = ""
    for raw in lines:
        line = normalize(raw).strip()
        if not line:
            continue
        if not text:
            text = line
        elif len(text) >= 2 and text[-1] in HYPHENS and text[-2].isalpha() and line[0].islower():
            before = WORD_EDGE.sub("", re.split(r"\s", text[:-1])[-1]).lower()
            after = WORD_EDGE.sub(" ", line).split(" ")[0].lower()
            keep = f"{before}-{after}" in known and f"{before}{after}" not in known
            text = text[:-1] + ("-" if keep else "") + line
        elif _cjk(text[-1]) and _cjk(line[0]):
            text += line
        else:
            text += " " + line
    return text
