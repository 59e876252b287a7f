"""Text clean-up shared by the extractive matchers: markup, Unicode variants, sentences."""

from __future__ import annotations

import re
import unicodedata

_INLINE_TAGS = re.compile(r"</?(?:sub|sup|i|b|em|strong|span|small)\b[^>]*>", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_PARAGRAPHS = re.compile(r"\n\s*\n|\n(?=\s*(?:#|[-*] |\|))")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "Fig.", "Figs.", "approx.", "ca.", "No.", "Eq.", "cf.")


def strip_markup(text: str) -> str:
    """Inline HTML (``PM<sub>2.5</sub>``, ``m<sup>3</sup>``) as plain text, as abstracts and Markdown carry it."""
    return _INLINE_TAGS.sub("", text)


def fold(text: str) -> str:
    """Text for matching: compatibility forms unified (NO₂ -> NO2, m³ -> m3) and accents removed (Montréal -> Montreal)."""
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def matchable(text: str) -> str:
    """What dictionaries and patterns are matched against: markup stripped, then folded."""
    return fold(strip_markup(text))


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: paragraphs and Markdown blocks first, then sentence ends.

    A full stop after a common abbreviation ("e.g.", "et al.") does not end a sentence.
    """
    sentences: list[str] = []
    for block in _PARAGRAPHS.split(strip_markup(text)):
        merged: list[str] = []
        for piece in _SENTENCE_END.split(" ".join(block.split())):
            if merged and merged[-1].endswith(_ABBREVIATIONS):
                merged[-1] = f"{merged[-1]} {piece}"
            elif piece:
                merged.append(piece)
        sentences.extend(merged)
    return sentences
