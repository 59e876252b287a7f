"""Sentences of a text, as strings and as character spans of the text.

Spans keep every value the embedded extractor finds traceable to where it stands in the
document (its evidence); the strings are what sentence ranking embeds.
"""

from __future__ import annotations

import re

from hysem_assets.core.matcher import strip_markup

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_PARAGRAPHS = re.compile(r"\n\s*\n|\n(?=\s*(?:#|[-*] |\|))")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "Fig.", "Figs.", "approx.", "ca.", "No.", "Eq.", "cf.")
_INLINE_TAGS = re.compile(r"</?(?:sub|sup|i|b|em|strong|span|small)\b[^>]*>", re.IGNORECASE)


def _stripped(text: str) -> tuple[str, list[int]]:
    """``text`` without inline markup, and for each kept character its offset in ``text``."""
    kept, offsets, position = [], [], 0
    for tag in _INLINE_TAGS.finditer(text):
        kept.append(text[position : tag.start()])
        offsets.extend(range(position, tag.start()))
        position = tag.end()
    kept.append(text[position:])
    offsets.extend(range(position, len(text)))
    return "".join(kept), offsets


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence in ``text``: paragraphs and Markdown blocks first, then sentence ends.

    A full stop after a common abbreviation ("e.g.", "et al.") does not end a sentence.
    Inline markup is ignored while splitting; a span starts and ends on the sentence's
    first and last visible characters, so ``text[start:end]`` is the sentence as written.
    """
    plain, offsets = _stripped(text)
    spans: list[tuple[int, int]] = []
    block_start = 0
    for separator in [*_PARAGRAPHS.finditer(plain), None]:
        block_end = separator.start() if separator else len(plain)
        merged: list[list[int]] = []
        piece_start = block_start
        for end in [*(m.start() for m in _SENTENCE_END.finditer(plain, block_start, block_end)), block_end]:
            piece = plain[piece_start:end]
            start = piece_start + len(piece) - len(piece.lstrip())
            stop = piece_start + len(piece.rstrip())
            if merged and " ".join(plain[merged[-1][0] : merged[-1][1]].split()).endswith(_ABBREVIATIONS):
                merged[-1][1] = max(stop, merged[-1][1])
            elif stop > start:
                merged.append([start, stop])
            piece_start = _SENTENCE_END.match(plain, end).end() if end < block_end else end
        spans.extend((offsets[start], offsets[stop - 1] + 1) for start, stop in merged)
        block_start = separator.end() if separator else len(plain)
    return spans


def normalized_sentence(sentence: str) -> str:
    """A sentence as ranking sees it: markup stripped, whitespace collapsed."""
    return " ".join(strip_markup(sentence).split())


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (see :func:`sentence_spans`), markup stripped and whitespace collapsed."""
    return [normalized_sentence(text[start:end]) for start, end in sentence_spans(text)]


#: Fewer words than this say too little to tell a language by.
_LANGUAGE_WORDS = 20
#: English function words that no other major language of the literature spells the same way.
_ENGLISH_WORDS = frozenset(
    "the of and to with was were is are for that this these by from we our which than after between".split()
)
#: English abstracts have a fifth or more of their words in that list; other languages almost none.
_ENGLISH_SHARE = 0.06


def not_english(text: str) -> str | None:
    """Why ``text`` is not read as English (too few of its words are common English ones), or None."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    if len(words) < _LANGUAGE_WORDS:
        return None
    share = sum(word in _ENGLISH_WORDS for word in words) / len(words)
    if share >= _ENGLISH_SHARE:
        return None
    return f"not English ({share:.0%} common English words): the embedded extractor reads English text only"
