"""Sentences of a text, for the extractive backend's sentence ranking."""

from __future__ import annotations

import re

from hysem_assets.terms.matcher import strip_markup

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_PARAGRAPHS = re.compile(r"\n\s*\n|\n(?=\s*(?:#|[-*] |\|))")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "Fig.", "Figs.", "approx.", "ca.", "No.", "Eq.", "cf.")


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
